//! `cargo xtask bench peers`: tandem beside its peers on the same workloads, each runtime in a
//! fresh headless Chromium: TF.js 4.22 (webgpu and wasm backends), jax-js 0.1.25 (eager and
//! `jit`) and hand-written WGSL. The page (`bench/peers.html`) times each workload and checks
//! every result; this module installs the peers from npm into `bench/node_modules`, drives one
//! page per runtime, survives a workload that hangs or crashes its page, prints one table and
//! the ratios, and writes every raw number to `target/bench/peers.json`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::cmd::{root, run};
use crate::manifest::Manifest;
use crate::webdriver::Browser;
use crate::{demo, package, setup};

/// The device a runtime computes on; ratios compare tandem with peers of the same kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Gpu,
    Cpu,
}

/// A column of the table: one runtime, driven in its own browser.
#[derive(Debug, PartialEq, Eq)]
struct Runtime {
    id: &'static str,
    kind: Kind,
    /// Counts as a peer in the ratios (tandem itself and the hand-written limit do not).
    peer: bool,
}

const RUNTIMES: [Runtime; 10] = [
    Runtime {
        id: "tandem-gpu",
        kind: Kind::Gpu,
        peer: false,
    },
    Runtime {
        id: "tandem-cpu",
        kind: Kind::Cpu,
        peer: false,
    },
    // The multi-op workloads through `compile`, beside jax-js's `jit`.
    Runtime {
        id: "tandem-gpu-compiled",
        kind: Kind::Gpu,
        peer: false,
    },
    Runtime {
        id: "tandem-cpu-compiled",
        kind: Kind::Cpu,
        peer: false,
    },
    Runtime {
        id: "tfjs-webgpu",
        kind: Kind::Gpu,
        peer: true,
    },
    Runtime {
        id: "tfjs-wasm",
        kind: Kind::Cpu,
        peer: true,
    },
    // Its threaded build on this machine's 2 cores: a peer's best CPU mode.
    Runtime {
        id: "tfjs-wasm-2t",
        kind: Kind::Cpu,
        peer: true,
    },
    Runtime {
        id: "jax-webgpu",
        kind: Kind::Gpu,
        peer: true,
    },
    Runtime {
        id: "jax-jit",
        kind: Kind::Gpu,
        peer: true,
    },
    Runtime {
        id: "webgpu-hand",
        kind: Kind::Gpu,
        peer: false,
    },
];

/// The longest one workload may run (warm-ups and timed runs) before its page is abandoned.
const WORKLOAD_TIMEOUT: Duration = Duration::from_secs(300);
/// The longest a page may take from loading to starting its first workload.
const START_TIMEOUT: Duration = Duration::from_secs(120);
const POLL: Duration = Duration::from_millis(250);
/// The longest one WebDriver command may take: a page stuck in a synchronous loop never
/// answers, and the workload's own timeout must still be able to fire.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// How many runs a workload gets: `warmup`, then at least `runs` timed runs, more up to
/// `max_runs` while the timed runs have taken less than `budget_ms` in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Plan {
    warmup: u32,
    runs: u32,
    max_runs: u32,
    budget_ms: u32,
}

const QUICK: Plan = Plan {
    warmup: 2,
    runs: 7,
    max_runs: 7,
    budget_ms: 0,
};
const FULL: Plan = Plan {
    warmup: 2,
    runs: 11,
    max_runs: 31,
    budget_ms: 10_000,
};

impl Plan {
    fn describe(&self) -> String {
        if self.runs == self.max_runs {
            format!("{} timed runs after {} warm-ups", self.runs, self.warmup)
        } else {
            format!(
                "{}-{} timed runs (more while under {} s) after {} warm-ups",
                self.runs,
                self.max_runs,
                self.budget_ms / 1000,
                self.warmup
            )
        }
    }
}

#[derive(Debug, PartialEq)]
struct Options {
    quick: bool,
    only: Option<Vec<String>>,
    runtimes: Vec<&'static Runtime>,
}

/// `[--quick] [--only IDS|GROUPS] [--runtimes IDS]`, lists comma-separated.
fn parse_args(args: &[&str]) -> Result<Options, String> {
    let mut options = Options {
        quick: false,
        only: None,
        runtimes: RUNTIMES.iter().collect(),
    };
    let mut rest = args.iter();
    while let Some(&arg) = rest.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) => (flag, Some(value)),
            None => (arg, None),
        };
        let mut value = || {
            inline
                .or_else(|| rest.next().copied())
                .map(list)
                .ok_or_else(|| format!("{flag} needs a comma-separated list"))
        };
        match flag {
            "--quick" if inline.is_none() => options.quick = true,
            "--only" => options.only = Some(value()?),
            "--runtimes" => options.runtimes = runtimes_named(&value()?)?,
            other => return Err(format!("bench peers: unknown option {other}")),
        }
    }
    Ok(options)
}

fn list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

fn runtimes_named(names: &[String]) -> Result<Vec<&'static Runtime>, String> {
    names
        .iter()
        .map(|name| {
            RUNTIMES.iter().find(|r| r.id == name).ok_or_else(|| {
                let ids: Vec<&str> = RUNTIMES.iter().map(|r| r.id).collect();
                format!("unknown runtime \"{name}\"; there are: {}", ids.join(", "))
            })
        })
        .collect()
}

/// A row of the table, from `bench/peers/workloads.json` (which the page reads too).
#[derive(Debug, Clone, PartialEq)]
struct Workload {
    id: String,
    group: String,
    title: String,
}

fn load_catalog(path: &Path) -> Result<Vec<Workload>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_catalog(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn parse_catalog(text: &str) -> Result<Vec<Workload>, String> {
    let json: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let entries = json["workloads"]
        .as_array()
        .ok_or("no \"workloads\" list")?;
    entries
        .iter()
        .map(|w| {
            let field = |key: &str| {
                w[key]
                    .as_str()
                    .map(String::from)
                    .ok_or_else(|| format!("a workload lacks \"{key}\": {w}"))
            };
            Ok(Workload {
                id: field("id")?,
                group: field("group")?,
                title: field("title")?,
            })
        })
        .collect()
}

/// The workloads `--only` names, by id or by group, in catalog order; all without `--only`.
fn select(catalog: &[Workload], only: Option<&[String]>) -> Result<Vec<Workload>, String> {
    let Some(names) = only else {
        return Ok(catalog.to_vec());
    };
    let matches = |w: &Workload, name: &str| w.id == name || w.group == name;
    if let Some(unknown) = names
        .iter()
        .find(|n| !catalog.iter().any(|w| matches(w, n)))
    {
        let mut groups: Vec<&str> = catalog.iter().map(|w| w.group.as_str()).collect();
        groups.dedup();
        let ids: Vec<&str> = catalog.iter().map(|w| w.id.as_str()).collect();
        return Err(format!(
            "unknown workload \"{unknown}\"; groups: {}; ids: {}",
            groups.join(", "),
            ids.join(", ")
        ));
    }
    Ok(catalog
        .iter()
        .filter(|w| names.iter().any(|n| matches(w, n)))
        .cloned()
        .collect())
}

pub fn peers(manifest: &Manifest, args: &[&str]) -> Result<(), String> {
    let options = parse_args(args)?;
    let catalog = load_catalog(&root().join("bench/peers/workloads.json"))?;
    let workloads = select(&catalog, options.only.as_deref())?;
    let plan = if options.quick { QUICK } else { FULL };
    let started = Instant::now();
    setup::setup(manifest)?;
    package::build(manifest)?;
    ensure_npm_packages(&root().join("bench"))?;
    let address = demo::serve_pages(manifest, "bench")?;
    println!(
        "peers: {} workload(s) x {} runtime(s), {}",
        workloads.len(),
        options.runtimes.len(),
        plan.describe()
    );
    let reports: Vec<Report> = options
        .runtimes
        .iter()
        .map(|runtime| run_runtime(manifest, address, runtime, &workloads, &plan))
        .collect();
    let ratios = Ratios::compute(&workloads, &reports);
    println!();
    println!("{}", table(&workloads, &reports, &plan, options.quick));
    println!("{}", ratios.text(&workloads));
    let wall = started.elapsed();
    let path = root().join("target/bench/peers.json");
    write_json(
        &path,
        &summary_json(&workloads, &reports, &ratios, &plan, args, wall),
    )?;
    println!(
        "peers: wrote {}; wall time {}",
        path.display(),
        minutes(wall)
    );
    Ok(())
}

fn minutes(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}m{:02}s", s / 60, s % 60)
}

// ---- npm ----------------------------------------------------------------------------------

/// Installs `bench/package.json`'s exact versions into `bench/node_modules` unless they are
/// all there already.
pub(crate) fn ensure_npm_packages(bench: &Path) -> Result<(), String> {
    let wanted = pinned_dependencies(bench)?;
    let missing: Vec<String> = wanted
        .iter()
        .filter(|(name, version)| {
            installed_version(bench, name).as_deref() != Some(version.as_str())
        })
        .map(|(name, version)| format!("{name}@{version}"))
        .collect();
    let names: Vec<String> = wanted.iter().map(|(n, v)| format!("{n}@{v}")).collect();
    if missing.is_empty() {
        println!("peers: npm packages present ({})", names.join(", "));
        return Ok(());
    }
    println!(
        "peers: installing {} into bench/node_modules",
        missing.join(", ")
    );
    run(Command::new("npm")
        .current_dir(root())
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(bench))?;
    match wanted
        .iter()
        .find(|(n, v)| installed_version(bench, n).as_deref() != Some(v.as_str()))
    {
        Some((name, version)) => Err(format!(
            "npm install left {name} at {:?}, not {version}",
            installed_version(bench, name)
        )),
        None => Ok(()),
    }
}

/// `dependencies` of `package.json`, which must pin exact versions.
fn pinned_dependencies(folder: &Path) -> Result<Vec<(String, String)>, String> {
    let path = folder.join("package.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let json: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let deps = json["dependencies"]
        .as_object()
        .ok_or_else(|| format!("{}: no dependencies", path.display()))?;
    deps.iter()
        .map(|(name, version)| match version.as_str() {
            Some(v) if v.chars().all(|c| c.is_ascii_digit() || c == '.') => {
                Ok((name.clone(), v.to_string()))
            }
            _ => Err(format!(
                "{}: {name} must be pinned to an exact version, not {version}",
                path.display()
            )),
        })
        .collect()
}

fn installed_version(folder: &Path, name: &str) -> Option<String> {
    let path = folder.join("node_modules").join(name).join("package.json");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    json["version"].as_str().map(String::from)
}

// ---- driving one runtime's page -----------------------------------------------------------

/// What one runtime's pages reported.
struct Report {
    runtime: &'static Runtime,
    /// The page's result per workload id (`status` ok, failed, error or n/a).
    results: BTreeMap<String, Value>,
    /// The last report of the page, less its results: info, adapter, date, page errors.
    page: Value,
    wall: Duration,
}

impl Report {
    fn result(&self, id: &str) -> Option<&Value> {
        self.results.get(id)
    }

    /// The median of a workload whose every result passed its check.
    fn median(&self, id: &str) -> Option<f64> {
        let r = self.result(id)?;
        (r["status"] == "ok")
            .then(|| r["median"].as_f64())
            .flatten()
    }
}

/// How a page ended.
#[derive(Debug, PartialEq)]
enum Stop {
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
fn run_runtime(
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
        let unreported = |report: &Report| -> Vec<String> {
            remaining
                .iter()
                .filter(|id| !report.results.contains_key(**id))
                .map(|s| s.to_string())
                .collect()
        };
        match stop {
            Stop::Done => {
                for id in unreported(&report) {
                    report.results.insert(
                        id,
                        json!({"status": "error", "error": "the page ended without it"}),
                    );
                }
            }
            Stop::PageError(text) => {
                println!("  {}: the page failed: {text}", runtime.id);
                for id in unreported(&report) {
                    report.results.insert(
                        id,
                        json!({"status": "error", "error": format!("page: {text}")}),
                    );
                }
            }
            Stop::Abandoned { current, why } => {
                // The workload in progress gets the error; without one, the next to run does.
                let culprit = current.or_else(|| unreported(&report).into_iter().next());
                if let Some(id) = culprit {
                    println!("  {} {id}: err ({why})", runtime.id);
                    report
                        .results
                        .insert(id, json!({"status": "error", "error": why}));
                }
            }
        }
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

fn page_url(address: SocketAddr, runtime: &str, workloads: &[&str], plan: &Plan) -> String {
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
fn absorb(report: &mut Report, workloads: &[Workload], snapshot: &Value) {
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

fn one_line(result: &Value) -> String {
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
                "{} ms [{}-{}] x{}{derived}{check}",
                ms("median"),
                ms("min"),
                ms("max"),
                result["runs"]
            )
        }
        None => format!("unreadable result {result}"),
    }
}

/// A message's first line, cut to 200 characters (the JSON keeps it whole).
fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    match line.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

/// Opens the page in a fresh browser and follows its progress until it ends, is abandoned, or
/// the browser dies. `absorb` gets every report the page gives.
fn drive_page(manifest: &Manifest, url: &str, mut absorb: impl FnMut(&Value)) -> Stop {
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
fn browser_gone(error: &str) -> bool {
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

/// A result's derived figure and unit, when it has one.
fn derived(result: &Value) -> Option<(f64, String)> {
    let d = &result["derived"];
    Some((d["median"].as_f64()?, d["unit"].as_str()?.to_string()))
}

/// About four significant digits.
fn fmt_number(x: f64) -> String {
    let a = x.abs();
    if a >= 1000.0 {
        format!("{x:.0}")
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else if a >= 10.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// The three lines of a cell: median ms, min-max, derived figure.
fn cell(result: Option<&Value>) -> [String; 3] {
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

const COLUMN: usize = 15;

fn table(workloads: &[Workload], reports: &[Report], plan: &Plan, quick: bool) -> String {
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
    out
}

/// The adapter the GPU runtimes saw, and the warning that goes with a fallback one.
fn adapter_lines(reports: &[Report]) -> Vec<String> {
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

/// Peer time / tandem time for one workload (>1: tandem faster).
#[derive(Debug, Clone, PartialEq)]
struct Ratio {
    workload: String,
    ratio: f64,
    tandem_ms: f64,
    peer: String,
    peer_ms: f64,
}

#[derive(Debug, Default)]
struct Ratios {
    /// tandem-gpu against the fastest WebGPU peer (tfjs-webgpu, jax-webgpu, jax-jit).
    gpu: Vec<Ratio>,
    /// tandem-cpu against tfjs-wasm.
    cpu: Vec<Ratio>,
    /// tandem-gpu against the hand-written WGSL: how far from this adapter's limit (not a peer).
    hand: Vec<Ratio>,
    /// Figures outside the geometric means: the split against the peers' GPU-only, and
    /// tandem-gpu's adds against TF.js's default CPU forwarding.
    extra: Vec<(String, Ratio)>,
}

const PEERS_GPU: [&str; 3] = ["tfjs-webgpu", "jax-webgpu", "jax-jit"];

/// MLX's example in each runtime's every placement.
const MLX_MODES: [&str; 3] = ["mlx-gpu", "mlx-split", "mlx-cpu"];

/// MLX's example: tandem's fastest mode (any stream placement, compiled or not) against the
/// fastest of every peer's modes, TF.js wasm on 2 threads included.
fn best_modes(reports: &[Report]) -> Option<(String, Ratio)> {
    let fastest = |tandem: bool| {
        reports
            .iter()
            .filter(|r| r.runtime.peer != tandem && r.runtime.id != "webgpu-hand")
            .flat_map(|r| {
                MLX_MODES
                    .iter()
                    .filter_map(move |w| Some((r.runtime.id, *w, r.median(w)?)))
            })
            .min_by(|a, b| a.2.total_cmp(&b.2))
    };
    let ((tandem, mode, tandem_ms), (peer, peer_mode, peer_ms)) = (fastest(true)?, fastest(false)?);
    let what =
        format!("MLX example: tandem's best mode ({tandem} {mode}) / every peer's best mode");
    let ratio = Ratio {
        workload: mode.to_string(),
        ratio: peer_ms / tandem_ms,
        tandem_ms,
        peer: format!("{peer} {peer_mode}"),
        peer_ms,
    };
    Some((what, ratio))
}

impl Ratios {
    fn compute(workloads: &[Workload], reports: &[Report]) -> Ratios {
        let median = |runtime: &str, workload: &str| {
            let report = reports.iter().find(|r| r.runtime.id == runtime);
            report.and_then(|r| r.median(workload))
        };
        let named = |runtime: &str, workload: &str| {
            median(runtime, workload).map(|ms| (runtime.to_string(), ms))
        };
        let best_gpu_peer = |workload: &str| {
            PEERS_GPU
                .iter()
                .filter_map(|p| named(p, workload))
                .min_by(|a, b| a.1.total_cmp(&b.1))
        };
        let ratio = |tandem: Option<f64>, peer: Option<(String, f64)>, workload: &str| {
            let (tandem_ms, (peer, peer_ms)) = (tandem?, peer?);
            Some(Ratio {
                workload: workload.to_string(),
                ratio: peer_ms / tandem_ms,
                tandem_ms,
                peer,
                peer_ms,
            })
        };
        let mut out = Ratios::default();
        for w in workloads {
            let id = w.id.as_str();
            let gpu = median("tandem-gpu", id);
            match id {
                "mlx-split" => {
                    let what = "MLX example: tandem split / best peer GPU-only";
                    if let Some(r) = ratio(gpu, best_gpu_peer("mlx-gpu"), id) {
                        out.extra.push((what.into(), r));
                    }
                }
                "add-chain-fwd" => {
                    let what = "1000 chained adds: tandem-gpu / TF.js webgpu at its default \
                                (ops under 1000 elements run on the CPU)";
                    let tandem = median("tandem-gpu", "add-chain");
                    if let Some(r) = ratio(tandem, named("tfjs-webgpu", id), id) {
                        out.extra.push((what.into(), r));
                    }
                }
                _ => {
                    // jax-jit runs MLX's example on the GPU only.
                    let jit_id = if id.starts_with("mlx-") {
                        "mlx-gpu"
                    } else {
                        id
                    };
                    for runtime in ["tandem-gpu-compiled", "tandem-cpu-compiled"] {
                        let what = format!("{}: {runtime} / jax-jit", w.title);
                        if let Some(r) = ratio(median(runtime, id), named("jax-jit", jit_id), id) {
                            out.extra.push((what, r));
                        }
                    }
                    out.gpu.extend(ratio(gpu, best_gpu_peer(id), id));
                    let cpu = median("tandem-cpu", id);
                    out.cpu.extend(ratio(cpu, named("tfjs-wasm", id), id));
                    out.hand.extend(ratio(gpu, named("webgpu-hand", id), id));
                }
            }
        }
        out.extra.extend(best_modes(reports));
        out
    }

    fn text(&self, workloads: &[Workload]) -> String {
        let label = workloads
            .iter()
            .map(|w| w.title.len())
            .max()
            .unwrap_or(20)
            .max(24)
            + 2;
        let find = |list: &[Ratio], id: &str| list.iter().find(|r| r.workload == id).cloned();
        let mut out = String::new();
        let _ = writeln!(
            out,
            "ratios: other median / tandem median, same device kind (>1: tandem faster)"
        );
        let _ = writeln!(
            out,
            "{:label$}{:>34}{:>24}{:>26}",
            "workload",
            "tandem-gpu / best WebGPU peer",
            "tandem-cpu / tfjs-wasm",
            "tandem-gpu / webgpu-hand"
        );
        for w in workloads {
            let cells = [&self.gpu, &self.cpu, &self.hand].map(|list| find(list, &w.id));
            if cells.iter().all(Option::is_none) {
                continue;
            }
            let [g, c, h] = cells.map(|r| match r {
                Some(r) if r.peer == "webgpu-hand" || r.peer == "tfjs-wasm" => fmt_ratio(r.ratio),
                Some(r) => format!("{} ({})", fmt_ratio(r.ratio), r.peer),
                None => "-".into(),
            });
            let _ = writeln!(out, "{:label$}{g:>34}{c:>24}{h:>26}", w.title);
        }
        let mean = |list: &[Ratio]| match geomean(list) {
            Some(m) => format!("{} over {}", fmt_ratio(m), list.len()),
            None => "-".into(),
        };
        let _ = writeln!(
            out,
            "{:label$}{:>34}{:>24}{:>26}",
            "geometric mean",
            mean(&self.gpu),
            mean(&self.cpu),
            mean(&self.hand)
        );
        let _ = writeln!(
            out,
            "(webgpu-hand is hand-written WGSL measured in the same run: the adapter's limit, not a peer)"
        );
        for (what, r) in &self.extra {
            let _ = writeln!(
                out,
                "{what}: {} ({}: {} ms, tandem: {} ms; not in the geometric means)",
                fmt_ratio(r.ratio),
                r.peer,
                fmt_number(r.peer_ms),
                fmt_number(r.tandem_ms)
            );
        }
        out
    }

    fn json(&self) -> Value {
        let list = |l: &[Ratio]| {
            Value::Object(
                l.iter()
                    .map(|r| {
                        (
                            r.workload.clone(),
                            json!({"ratio": r.ratio, "tandem_ms": r.tandem_ms, "peer": r.peer, "peer_ms": r.peer_ms}),
                        )
                    })
                    .collect(),
            )
        };
        json!({
            "meaning": "peer median / tandem median (>1: tandem faster)",
            "tandem_gpu_vs_best_webgpu_peer": {"workloads": list(&self.gpu), "geomean": geomean(&self.gpu), "count": self.gpu.len()},
            "tandem_cpu_vs_tfjs_wasm": {"workloads": list(&self.cpu), "geomean": geomean(&self.cpu), "count": self.cpu.len()},
            "tandem_gpu_vs_webgpu_hand": {"workloads": list(&self.hand), "geomean": geomean(&self.hand), "count": self.hand.len()},
            "extra": self.extra.iter().map(|(what, r)| json!({
                "what": what, "workload": r.workload, "ratio": r.ratio, "tandem_ms": r.tandem_ms,
                "peer": r.peer, "peer_ms": r.peer_ms,
            })).collect::<Vec<_>>(),
        })
    }
}

fn fmt_ratio(x: f64) -> String {
    if x >= 10.0 {
        format!("{x:.1}")
    } else if x >= 0.1 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

fn geomean(list: &[Ratio]) -> Option<f64> {
    (!list.is_empty())
        .then(|| (list.iter().map(|r| r.ratio.ln()).sum::<f64>() / list.len() as f64).exp())
}

// ---- peers.json ---------------------------------------------------------------------------

fn summary_json(
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
fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    utc_from_unix(secs)
}

fn utc_from_unix(secs: u64) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Vec<Workload> {
        load_catalog(&root().join("bench/peers/workloads.json")).unwrap()
    }

    #[test]
    fn parses_options() {
        let o = parse_args(&[
            "--quick",
            "--only",
            "exp,matmul-256",
            "--runtimes=tandem-gpu,tfjs-webgpu",
        ])
        .unwrap();
        assert!(o.quick);
        assert_eq!(
            o.only,
            Some(vec!["exp".to_string(), "matmul-256".to_string()])
        );
        let ids: Vec<&str> = o.runtimes.iter().map(|r| r.id).collect();
        assert_eq!(ids, ["tandem-gpu", "tfjs-webgpu"]);
        assert_eq!(parse_args(&[]).unwrap().runtimes.len(), RUNTIMES.len());
        assert!(
            parse_args(&["--runtimes", "torch"])
                .unwrap_err()
                .contains("tandem-gpu")
        );
        assert!(parse_args(&["--only"]).is_err());
        assert!(parse_args(&["--fast"]).is_err());
    }

    #[test]
    fn selects_by_group_or_id_in_catalog_order() {
        let all = catalog();
        assert!(all.len() >= 16);
        let picked = select(
            &all,
            Some(&["softmax".into(), "exp".into(), "sum-16m".into()]),
        )
        .unwrap();
        let ids: Vec<&str> = picked.iter().map(|w| w.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "exp-1m",
                "exp-16m",
                "exp-100003",
                "sum-16m",
                "softmax-4096x1024",
                "softmax-1000x333"
            ]
        );
        assert!(
            select(&all, Some(&["conv".into()]))
                .unwrap_err()
                .contains("matmul")
        );
        assert_eq!(select(&all, None).unwrap(), all);
    }

    #[test]
    fn the_committed_package_json_pins_exact_versions() {
        let deps = pinned_dependencies(&root().join("bench")).unwrap();
        let find = |n: &str| {
            deps.iter()
                .find(|(name, _)| name == n)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(find("@tensorflow/tfjs-core"), Some("4.22.0"));
        assert_eq!(find("@tensorflow/tfjs-backend-webgpu"), Some("4.22.0"));
        assert_eq!(find("@tensorflow/tfjs-backend-wasm"), Some("4.22.0"));
        assert_eq!(find("@jax-js/jax"), Some("0.1.25"));
    }

    fn report(runtime: &str, medians: &[(&str, f64)]) -> Report {
        Report {
            runtime: RUNTIMES.iter().find(|r| r.id == runtime).unwrap(),
            results: medians
                .iter()
                .map(|(id, ms)| (id.to_string(), json!({"status": "ok", "median": ms})))
                .collect(),
            page: Value::Null,
            wall: Duration::ZERO,
        }
    }

    #[test]
    fn the_best_modes_line_compares_each_sides_fastest_mode() {
        let reports = [
            report("tandem-gpu", &[("mlx-gpu", 20.0), ("mlx-split", 9.0)]),
            report("tandem-cpu-compiled", &[("mlx-cpu", 5.0)]),
            report("tfjs-wasm", &[("mlx-cpu", 6.0)]),
            report("tfjs-wasm-2t", &[("mlx-cpu", 4.0)]),
            report("webgpu-hand", &[("mlx-gpu", 1.0)]),
        ];
        let (what, r) = best_modes(&reports).unwrap();
        assert!(what.contains("(tandem-cpu-compiled mlx-cpu)"), "{what}");
        assert_eq!(r.peer, "tfjs-wasm-2t mlx-cpu");
        assert_eq!(r.ratio, 0.8);
        assert_eq!(best_modes(&reports[2..]), None);
    }

    #[test]
    fn ratios_take_the_fastest_peer_of_the_same_kind() {
        let workloads = select(&catalog(), Some(&["exp-1m".into(), "matmul-256".into()])).unwrap();
        let mut failed = report("jax-jit", &[("exp-1m", 1.0)]);
        failed
            .results
            .insert("exp-1m".into(), json!({"status": "failed", "median": 1.0}));
        let reports = [
            report("tandem-gpu", &[("exp-1m", 10.0), ("matmul-256", 4.0)]),
            report("tandem-cpu", &[("exp-1m", 2.0)]),
            report("tfjs-webgpu", &[("exp-1m", 20.0), ("matmul-256", 16.0)]),
            report("jax-webgpu", &[("exp-1m", 5.0)]),
            report("tfjs-wasm", &[("exp-1m", 4.0)]),
            failed,
        ];
        let r = Ratios::compute(&workloads, &reports);
        let exp = r.gpu.iter().find(|x| x.workload == "exp-1m").unwrap();
        assert_eq!((exp.peer.as_str(), exp.ratio), ("jax-webgpu", 0.5));
        assert_eq!(
            r.gpu
                .iter()
                .find(|x| x.workload == "matmul-256")
                .unwrap()
                .ratio,
            4.0
        );
        assert_eq!(r.cpu.len(), 1);
        assert_eq!(r.cpu[0].ratio, 2.0);
        assert!((geomean(&r.gpu).unwrap() - 2f64.sqrt()).abs() < 1e-12);
        assert!(r.text(&workloads).contains("geometric mean"));
    }

    #[test]
    fn cells_show_status_words_and_figures() {
        assert_eq!(cell(None)[0], "-");
        assert_eq!(
            cell(Some(&json!({"status": "error", "error": "boom"})))[0],
            "err"
        );
        assert_eq!(cell(Some(&json!({"status": "n/a"})))[0], "n/a");
        assert_eq!(cell(Some(&json!({"status": "failed"})))[0], "FAIL");
        let ok = json!({"status": "ok", "median": 12.345, "min": 11.0, "max": 1234.5,
                        "derived": {"unit": "GB/s", "median": 0.5}});
        assert_eq!(
            cell(Some(&ok)),
            [
                "12.35".to_string(),
                "11.00-1234".to_string(),
                "0.500".to_string()
            ]
        );
    }

    #[test]
    fn cuts_messages_to_one_short_line() {
        assert_eq!(first_line("a\nb"), "a");
        assert_eq!(first_line(&"x".repeat(300)).chars().count(), 201);
    }

    #[test]
    fn recognizes_a_dead_browser() {
        assert!(browser_gone(
            "\"unknown error\": session deleted because of page crash"
        ));
        assert!(browser_gone(
            "\"invalid session id\": \"invalid session id\""
        ));
        assert!(!browser_gone("\"script timeout\": \"script timeout\""));
    }

    #[test]
    fn formats_utc_dates() {
        assert_eq!(utc_from_unix(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_from_unix(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_from_unix(1_795_000_000), "2026-11-18T11:06:40Z");
    }
}
