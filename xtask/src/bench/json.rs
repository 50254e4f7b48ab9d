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

pub(super) fn utc_from_unix(secs: u64) -> String {
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}
