//! `target/bench/peers.json`: every raw number, with the date and the machine.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::drive::*;
use super::plan::*;
use super::ratios::*;
use super::table::*;

pub(super) fn summary_json(
    workloads: &[Workload],
    reports: &[Report],
    ratios: &Ratios,
    plan: &Plan,
    args: &[&str],
    wall: Duration,
) -> Value {
    let adapter = reports
        .iter()
        .filter(|r| r.runtime.kind == Kind::Gpu)
        .map(|r| &r.page["adapter"])
        .find(|a| !a.is_null())
        .cloned()
        .unwrap_or(Value::Null);
    let runtimes: serde_json::Map<String, Value> = reports
        .iter()
        .map(|r| {
            let kind = match r.runtime.kind {
                Kind::Gpu => "gpu",
                Kind::Cpu => "cpu",
            };
            let value = json!({
                "kind": kind,
                "peer": r.runtime.peer,
                "wall_s": r.wall.as_secs_f64(),
                "page": r.page,
                "results": r.results,
            });
            (r.runtime.id.to_string(), value)
        })
        .collect();
    json!({
        "benchmark": "peers",
        "command": format!("cargo xtask bench peers {}", args.join(" ")).trim_end(),
        "date": utc_now(),
        "wall_s": wall.as_secs_f64(),
        "plan": {"warmup": plan.warmup, "runs": plan.runs, "max_runs": plan.max_runs, "budget_ms": plan.budget_ms},
        "adapter": adapter,
        "adapter_note": adapter_lines(reports),
        "workloads": workloads.iter().map(|w| json!({"id": w.id, "group": w.group, "title": w.title})).collect::<Vec<_>>(),
        "runtime_order": reports.iter().map(|r| r.runtime.id).collect::<Vec<_>>(),
        "runtimes": runtimes,
        "ratios": ratios.json(),
    })
}

pub(crate) fn write_json(path: &Path, value: &Value) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(value).expect("a JSON value serializes") + "\n";
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The time now as `YYYY-MM-DDTHH:MM:SSZ`.
pub(super) fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    utc_from_unix(secs)
}

/// `secs` after the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (RFC 3339 in UTC).
pub(super) fn utc_from_unix(secs: u64) -> String {
    i64::try_from(secs)
        .ok()
        .and_then(|s| time::OffsetDateTime::from_unix_timestamp(s).ok())
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}
