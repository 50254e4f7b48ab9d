//! Drives one runtime's page in a fresh headless Chromium, workload by workload, through hangs
//! and crashes, and collects what it reports.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::manifest::Manifest;
use crate::webdriver::{Browser, Page};

use super::format::*;
use super::plan::*;

/// The longest one workload may run (warm-ups and timed runs) before its page is abandoned.
pub(super) const WORKLOAD_TIMEOUT: Duration = Duration::from_secs(300);
/// The longest a page may take from loading to starting its first workload.
pub(super) const START_TIMEOUT: Duration = Duration::from_secs(120);
pub(super) const POLL: Duration = Duration::from_millis(250);
/// The longest one WebDriver command may take: a page stuck in a synchronous loop never
/// answers, and the workload's own timeout must still be able to fire.
pub(super) const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// What one runtime's pages reported.
pub(super) struct Report {
    pub(super) runtime: &'static Runtime,
    /// The page's result per workload id (`status` ok, failed, error or n/a).
    pub(super) results: BTreeMap<String, Value>,
    /// The last report of the page, less its results: info, adapter, date, page errors.
    pub(super) page: Value,
    pub(super) wall: Duration,
}

impl Report {
    pub(super) fn result(&self, id: &str) -> Option<&Value> {
        self.results.get(id)
    }

    /// The median of a workload whose every result passed its check.
    pub(super) fn median(&self, id: &str) -> Option<f64> {
        let r = self.result(id)?;
        (r["status"] == "ok")
            .then(|| r["median"].as_f64())
            .flatten()
    }
}

/// How a page ended.
#[derive(Debug, PartialEq)]
pub(super) enum Stop {
    Done,
    /// The page itself failed (its setup threw); its text says why.
    PageError(String),
    /// A workload ran past its time, or the browser stopped answering while it ran.
    Abandoned {
        current: Option<String>,
        why: String,
    },
}

/// Runs the workloads on one runtime. A workload that hangs or crashes the page is recorded as
/// an error, and the rest run in a fresh browser.
pub(super) fn run_runtime(
    manifest: &Manifest,
    address: SocketAddr,
    runtime: &'static Runtime,
    workloads: &[Workload],
    plan: &Plan,
) -> Report {
    let started = Instant::now();
    let mut report = Report {
        runtime,
        results: BTreeMap::new(),
        page: Value::Null,
        wall: Duration::ZERO,
    };
    println!("peers: {} ...", runtime.id);
    loop {
        let remaining: Vec<&str> = workloads
            .iter()
            .map(|w| w.id.as_str())
            .filter(|id| !report.results.contains_key(*id))
            .collect();
        if remaining.is_empty() {
            break;
        }
        let url = page_url(address, runtime.id, &remaining, plan);
        let stop = drive_page(manifest, &url, |snapshot| {
            absorb(&mut report, workloads, snapshot)
        });
        record_stop(&mut report, &remaining, stop);
    }
    report.wall = started.elapsed();
    let count = |status: &str| {
        report
            .results
            .values()
            .filter(|r| r["status"] == status)
            .count()
    };
    println!(
        "peers: {} done in {:.1} s ({} ok, {} failed checks, {} errors, {} n/a)",
        runtime.id,
        report.wall.as_secs_f64(),
        count("ok"),
        count("failed"),
        count("error"),
        count("n/a")
    );
    report
}

/// Records how a page run of the workloads `remaining` ended: each workload it did not
/// report gets an error saying why.
fn record_stop(report: &mut Report, remaining: &[&str], stop: Stop) {
    let unreported = |report: &Report| -> Vec<String> {
        remaining
            .iter()
            .filter(|id| !report.results.contains_key(**id))
            .map(|s| s.to_string())
            .collect()
    };
    let runtime = report.runtime.id;
    match stop {
        Stop::Done => {
            for id in unreported(report) {
                report.results.insert(
                    id,
                    json!({"status": "error", "error": "the page ended without it"}),
                );
            }
        }
        Stop::PageError(text) => {
            println!("  {runtime}: the page failed: {text}");
            for id in unreported(report) {
                report.results.insert(
                    id,
                    json!({"status": "error", "error": format!("page: {text}")}),
                );
            }
        }
        Stop::Abandoned { current, why } => {
            // The workload in progress gets the error; without one, the next to run does.
            let culprit = current.or_else(|| unreported(report).into_iter().next());
            if let Some(id) = culprit {
                println!("  {runtime} {id}: err ({why})");
                report
                    .results
                    .insert(id, json!({"status": "error", "error": why}));
            }
        }
    }
}

pub(super) fn page_url(
    address: SocketAddr,
    runtime: &str,
    workloads: &[&str],
    plan: &Plan,
) -> String {
    format!(
        "http://{address}/peers.html?runtime={runtime}&workloads={}&warmup={}&runs={}&maxRuns={}&budgetMs={}",
        workloads.join(","),
        plan.warmup,
        plan.runs,
        plan.max_runs,
        plan.budget_ms
    )
}

/// Takes the page's new results (printing each as it arrives) and its other fields.
pub(super) fn absorb(report: &mut Report, workloads: &[Workload], snapshot: &Value) {
    for w in workloads {
        let result = &snapshot["results"][&w.id];
        if !result.is_null() && !report.results.contains_key(&w.id) {
            println!("  {} {}: {}", report.runtime.id, w.id, one_line(result));
            report.results.insert(w.id.clone(), result.clone());
        }
    }
    let mut page = snapshot.clone();
    if let Some(fields) = page.as_object_mut() {
        fields.remove("results");
        fields.remove("text");
    }
    report.page = page;
}

pub(super) fn one_line(result: &Value) -> String {
    match result["status"].as_str() {
        Some("n/a") => format!("n/a ({})", result["reason"].as_str().unwrap_or("")),
        Some("error") => format!(
            "err ({})",
            first_line(result["error"].as_str().unwrap_or(""))
        ),
        Some(status) => {
            let ms = |key: &str| result[key].as_f64().map_or("?".into(), fmt_number);
            let derived = derived(result)
                .map(|(v, unit)| format!("  {} {unit}", fmt_number(v)))
                .unwrap_or_default();
            let check = if status == "ok" {
                String::new()
            } else {
                format!(
                    "  CHECK FAILED: {}",
                    first_line(result["check"].as_str().unwrap_or(""))
                )
            };
            format!(
                "{} ms [{}-{}] x{}{derived}{}{check}",
                ms("median"),
                ms("min"),
                ms("max"),
                result["runs"],
                memory(result)
            )
        }
        None => format!("unreadable result {result}"),
    }
}

/// A model's memory as tandem reports it (`memory` of the result): the active bytes with its
/// weights resident, and the peak of a run.
fn memory(result: &Value) -> String {
    let mib = |key: &str| result["memory"][key].as_f64().map(|b| b / (1 << 20) as f64);
    match (mib("residentBytes"), mib("peakBytes")) {
        (Some(resident), Some(peak)) => {
            format!("  resident {resident:.1} MiB, peak {peak:.1} MiB")
        }
        _ => String::new(),
    }
}

/// Opens the page in a fresh browser and follows its progress until it ends, is abandoned, or
/// the browser dies. `absorb` gets every report the page gives.
pub(super) fn drive_page(manifest: &Manifest, url: &str, mut absorb: impl FnMut(&Value)) -> Stop {
    let open = || {
        let mut browser = Browser::launch(manifest)?;
        browser.set_timeout(Some(COMMAND_TIMEOUT));
        browser.goto(url)?;
        Ok::<Browser, String>(browser)
    };
    let browser = match open() {
        Ok(browser) => browser,
        Err(e) => return Stop::PageError(format!("cannot open the page: {e}")),
    };
    let script = "const r = window.tandemBench; return r ? JSON.parse(JSON.stringify(r)) : null;";
    let mut current: Option<String> = None;
    let mut since = Instant::now();
    loop {
        match browser.eval(script) {
            Ok(snapshot) if !snapshot.is_null() => {
                absorb(&snapshot);
                match snapshot["state"].as_str() {
                    Some("done") => return Stop::Done,
                    Some("error") => {
                        return Stop::PageError(
                            snapshot["text"]
                                .as_str()
                                .unwrap_or("no message")
                                .to_string(),
                        );
                    }
                    _ => {}
                }
                let now = snapshot["current"].as_str().map(String::from);
                if now != current {
                    current = now;
                    since = Instant::now();
                }
            }
            Ok(_) => {}
            Err(e) if browser_gone(&e) => {
                return Stop::Abandoned {
                    current,
                    why: format!("the browser stopped: {e}"),
                };
            }
            // A page busy in a long synchronous stretch answers late; its timeout still runs.
            Err(_) => {}
        }
        let limit = if current.is_some() {
            WORKLOAD_TIMEOUT
        } else {
            START_TIMEOUT
        };
        if since.elapsed() > limit {
            return Stop::Abandoned {
                current,
                why: format!("no result within {} s", limit.as_secs()),
            };
        }
        std::thread::sleep(POLL);
    }
}

/// Whether a WebDriver error means the page or browser is gone (a crash), not merely busy.
pub(super) fn browser_gone(error: &str) -> bool {
    let e = error.to_ascii_lowercase();
    [
        "crash",
        "disconnected",
        "no such window",
        "invalid session",
        "connection refused",
        "not reachable",
    ]
    .iter()
    .any(|s| e.contains(s))
}

// ---- the table ----------------------------------------------------------------------------
