//! The table of medians, one column per runtime.

use std::fmt::Write as _;

use serde_json::Value;

use super::drive::*;
use super::format::*;
use super::plan::*;

/// The three lines of a cell: median ms, min-max, derived figure.
pub(super) fn cell(result: Option<&Value>) -> [String; 3] {
    let Some(r) = result else {
        return ["-".into(), String::new(), String::new()];
    };
    let word = |w: &str| [w.to_string(), String::new(), String::new()];
    match r["status"].as_str() {
        Some("ok") => {
            let num = |key: &str| r[key].as_f64().map_or("?".into(), fmt_number);
            let d = derived(r).map(|(v, _)| fmt_number(v)).unwrap_or_default();
            [num("median"), format!("{}-{}", num("min"), num("max")), d]
        }
        Some("failed") => word("FAIL"),
        Some("n/a") => word("n/a"),
        _ => word("err"),
    }
}

pub(super) const COLUMN: usize = 15;

pub(super) fn table(
    workloads: &[Workload],
    reports: &[Report],
    plan: &Plan,
    quick: bool,
) -> String {
    let label = workloads
        .iter()
        .map(|w| w.title.len() + 5)
        .max()
        .unwrap_or(20)
        .max(24);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "peers: median ms of {}{}; second line min-max; third the derived figure",
        plan.describe(),
        if quick { " (--quick)" } else { "" }
    );
    for line in adapter_lines(reports) {
        let _ = writeln!(out, "{line}");
    }
    let _ = write!(out, "{:label$}", "workload");
    for r in reports {
        let _ = write!(out, "{:>COLUMN$}", r.runtime.id);
    }
    out.push('\n');
    let mut problems = Vec::new();
    for w in workloads {
        let cells: Vec<[String; 3]> = reports.iter().map(|r| cell(r.result(&w.id))).collect();
        let unit = reports
            .iter()
            .find_map(|r| r.result(&w.id).and_then(derived))
            .map(|(_, u)| u);
        let labels = [
            format!("{} (ms)", w.title),
            "  min-max".to_string(),
            format!("  {}", unit.unwrap_or_default()),
        ];
        for (line, text) in labels.iter().enumerate() {
            if line > 0 && cells.iter().all(|c| c[line].is_empty()) {
                continue;
            }
            let _ = write!(out, "{text:label$}");
            for c in &cells {
                let _ = write!(out, "{:>COLUMN$}", c[line]);
            }
            out.push('\n');
        }
        for r in reports {
            match r.result(&w.id) {
                Some(v) if v["status"] == "failed" => problems.push(format!(
                    "FAIL {} {}: {}",
                    r.runtime.id,
                    w.id,
                    first_line(v["check"].as_str().unwrap_or(""))
                )),
                Some(v) if v["status"] == "error" => problems.push(format!(
                    "err  {} {}: {}",
                    r.runtime.id,
                    w.id,
                    first_line(v["error"].as_str().unwrap_or(""))
                )),
                _ => {}
            }
        }
    }
    for p in problems {
        let _ = writeln!(out, "{p}");
    }
    out.push_str(&long_tasks(workloads, reports));
    out
}

/// The longest task of each workload's timed runs, per runtime, where one reached 50 ms (the
/// Long Tasks API reports no shorter ones): how long the page's thread was kept from input.
fn long_tasks(workloads: &[Workload], reports: &[Report]) -> String {
    let mut out = String::new();
    for w in workloads {
        let tasks: Vec<String> = reports
            .iter()
            .filter_map(|r| {
                let ms = r.result(&w.id)?["longestTaskMs"].as_f64()?;
                Some(format!("{} {}", r.runtime.id, fmt_number(ms)))
            })
            .collect();
        if !tasks.is_empty() {
            let _ = writeln!(out, "  {}: {}", w.title, tasks.join(", "));
        }
    }
    if out.is_empty() {
        return "longest tasks: no task of 50 ms or more in any timed run\n".into();
    }
    format!(
        "longest task of the timed runs in ms (Long Tasks API; runtimes not named had none of 50 ms or more):\n{out}"
    )
}

/// The adapter the GPU runtimes saw, and the warning that goes with a fallback one.
pub(super) fn adapter_lines(reports: &[Report]) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    let mut fallback = false;
    let mut cores = None;
    for r in reports.iter().filter(|r| r.runtime.kind == Kind::Gpu) {
        let a = &r.page["adapter"];
        if a.is_null() {
            continue;
        }
        fallback |= a["isFallbackAdapter"] == true;
        cores = cores.or(r.page["hardwareConcurrency"].as_u64());
        let line = format!(
            "adapter: {} {} ({}), isFallbackAdapter: {}",
            a["vendor"].as_str().unwrap_or("?"),
            a["architecture"].as_str().unwrap_or("?"),
            a["description"]
                .as_str()
                .filter(|d| !d.is_empty())
                .unwrap_or("no description"),
            a["isFallbackAdapter"]
        );
        if !seen.contains(&line) {
            seen.push(line);
        }
    }
    if fallback {
        let cores = cores.map_or("the same".to_string(), |c| format!("the same {c}"));
        seen.push(format!(
            "note: the \"GPU\" here is SwiftShader, a fallback adapter running on {cores} CPU cores \
             as the CPU runtimes: every GPU figure is CPU work"
        ));
    }
    seen
}

// ---- ratios -------------------------------------------------------------------------------
