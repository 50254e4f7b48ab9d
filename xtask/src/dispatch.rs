//! `cargo xtask bench dispatch`: where one dispatch's time goes. Each runtime runs the peer
//! benchmark's 1000 chained adds (one small dispatch per op) in a fresh headless Chromium
//! (`bench/dispatch.html`) while Chromium's sampling profiler records the page's main thread
//! through the DevTools protocol. The samples are sorted by where the code lives: tandem's and
//! wgpu's Rust in wasm, wasm-bindgen's JS glue, the browser's native WebGPU bindings, other JS,
//! garbage collection, the browser's own work, and idle time (the main thread waiting, while
//! the GPU process runs the work).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use crate::cmd::root;
use crate::manifest::Manifest;
use crate::webdriver::{Browser, Page};
use crate::{bench, demo, package, setup};

/// The runtimes profiled, in table order.
const RUNTIMES: [&str; 3] = ["tandem-gpu", "tfjs-webgpu", "webgpu-hand"];
/// Timed runs per runtime (each 1000 ops and a readback).
const RUNS: usize = 20;
/// The profiler's sampling interval.
const SAMPLING_US: u32 = 50;
const PAGE_TIMEOUT: Duration = Duration::from_secs(180);

/// Where a sample's code lives. The order is the table's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Category {
    Tandem,
    Wgpu,
    OtherRust,
    Glue,
    WebGpuApi,
    OtherJs,
    Gc,
    Browser,
    Idle,
}

impl Category {
    const ALL: [Category; 9] = [
        Category::Tandem,
        Category::Wgpu,
        Category::OtherRust,
        Category::Glue,
        Category::WebGpuApi,
        Category::OtherJs,
        Category::Gc,
        Category::Browser,
        Category::Idle,
    ];

    fn label(self) -> &'static str {
        match self {
            Category::Tandem => "tandem's Rust (wasm): graph, scheduler, allocator, encoder",
            Category::Wgpu => "wgpu's Rust (wasm): its WebGPU backend",
            Category::OtherRust => "other Rust (wasm): std, alloc, wasm-bindgen",
            Category::Glue => "wasm-bindgen JS glue (pkg/tandem.js)",
            Category::WebGpuApi => "browser-native calls (WebGPU bindings, promises, typed arrays)",
            Category::OtherJs => "other JS (the library or page, the benchmark harness)",
            Category::Gc => "garbage collection",
            Category::Browser => "browser outside JS (\"(program)\": tasks, IPC)",
            Category::Idle => "idle (wall - busy): waiting on the GPU process (SwiftShader)",
        }
    }
}

/// A categorized call frame.
fn categorize(frame: &Value) -> Category {
    let name = frame["functionName"].as_str().unwrap_or("");
    let url = frame["url"].as_str().unwrap_or("");
    match name {
        "(idle)" => return Category::Idle,
        "(program)" | "(root)" => return Category::Browser,
        "(garbage collector)" => return Category::Gc,
        _ => {}
    }
    if url.starts_with("wasm://") || url.ends_with(".wasm") {
        // Rust's mangled names keep the crate, e.g. `_ZN6tandem3gpu…` or `<wgpu::…>`.
        return if name.contains("tandem") {
            Category::Tandem
        } else if name.contains("wgpu") {
            Category::Wgpu
        } else {
            Category::OtherRust
        };
    }
    if url.ends_with("/pkg/tandem.js") {
        return Category::Glue;
    }
    if url.is_empty() {
        return Category::WebGpuApi;
    }
    Category::OtherJs
}

/// Self time per node id, from the samples: sample i lasts until sample i + 1.
fn self_times(profile: &Value) -> BTreeMap<u64, f64> {
    let samples = profile["samples"].as_array().cloned().unwrap_or_default();
    let deltas = profile["timeDeltas"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut times = BTreeMap::new();
    for (i, sample) in samples.iter().enumerate() {
        let Some(id) = sample.as_u64() else { continue };
        let lasted = deltas.get(i + 1).and_then(Value::as_f64).unwrap_or(0.0);
        *times.entry(id).or_insert(0.0) += lasted;
    }
    times
}

/// A runtime's profile, summed by category and by function (microseconds).
struct Breakdown {
    /// Idle is the runs' wall time less the busy time: the profile also spans the moments
    /// before and after the runs, which are idle and not the runs' own.
    by_category: BTreeMap<Category, f64>,
    /// The functions with self time, most first; idle is not among them.
    by_function: Vec<(String, Category, f64)>,
    busy_us: f64,
    wall_us: f64,
}

/// Sorts `profile`'s samples; `wall_us` is the summed wall time of the runs it spans.
fn breakdown(profile: &Value, wall_us: f64) -> Breakdown {
    let times = self_times(profile);
    let mut by_category = BTreeMap::new();
    let mut functions: BTreeMap<(String, Category), f64> = BTreeMap::new();
    for node in profile["nodes"].as_array().into_iter().flatten() {
        let Some(us) = node["id"].as_u64().and_then(|id| times.get(&id)) else {
            continue;
        };
        let frame = &node["callFrame"];
        let category = categorize(frame);
        if category == Category::Idle {
            continue;
        }
        *by_category.entry(category).or_insert(0.0) += us;
        let name = short_name(frame["functionName"].as_str().unwrap_or(""));
        *functions.entry((name, category)).or_insert(0.0) += us;
    }
    let busy_us: f64 = by_category.values().sum();
    by_category.insert(Category::Idle, (wall_us - busy_us).max(0.0));
    let mut by_function: Vec<(String, Category, f64)> = functions
        .into_iter()
        .map(|((name, category), us)| (name, category, us))
        .collect();
    by_function.sort_by(|a, b| b.2.total_cmp(&a.2));
    Breakdown {
        by_category,
        by_function,
        busy_us,
        wall_us,
    }
}

/// The summed wall time of the page's timed runs, in microseconds.
fn runs_wall_us(page: &Value) -> f64 {
    let times = page["times"].as_array().into_iter().flatten();
    times.filter_map(Value::as_f64).sum::<f64>() * 1000.0
}

/// A readable function name: Rust symbols lose their hash and are cut to 90 characters.
fn short_name(name: &str) -> String {
    let name = name.trim_start_matches('$');
    let name = match name.rfind("17h") {
        Some(at) if name.len() - at == 20 && name.ends_with('E') => &name[..at],
        _ => name,
    };
    let name = if name.is_empty() { "(anonymous)" } else { name };
    name.chars().take(90).collect()
}

pub fn dispatch(manifest: &Manifest) -> Result<(), String> {
    setup::setup(manifest)?;
    package::build(manifest)?;
    bench::ensure_npm_packages(&root().join("bench"))?;
    let address = demo::serve_pages(manifest, "bench")?;
    let mut results = Vec::new();
    for runtime in RUNTIMES {
        println!("dispatch: profiling {runtime} ...");
        let url = format!("http://{address}/dispatch.html?runtime={runtime}&runs={RUNS}");
        let (page, profile) = profile_page(manifest, &url)?;
        // DevTools' Performance panel opens .cpuprofile files.
        let raw = root().join(format!("target/bench/dispatch-{runtime}.cpuprofile"));
        bench::write_json(&raw, &profile)?;
        if let Some(problem) = page["check"].as_str() {
            return Err(format!("{runtime}: a result failed its check: {problem}"));
        }
        let breakdown = breakdown(&profile, runs_wall_us(&page));
        results.push((runtime, page, breakdown));
    }
    println!();
    println!("{}", report(&results));
    let path = root().join("target/bench/dispatch.json");
    let json = json!(
        results
            .iter()
            .map(|(runtime, page, b)| json!({
                "runtime": runtime,
                "page": page,
                "category_us": b.by_category.iter().map(|(c, us)| (format!("{c:?}"), *us)).collect::<BTreeMap<_, _>>(),
                "top_functions": b.by_function.iter().take(40).map(|(n, c, us)| json!([n, format!("{c:?}"), us])).collect::<Vec<_>>(),
            }))
            .collect::<Vec<_>>()
    );
    bench::write_json(&path, &json)?;
    println!("dispatch: wrote {}", path.display());
    Ok(())
}

/// Opens the page, waits until it is ready, profiles its timed runs, and returns the page's
/// report and the profile.
fn profile_page(manifest: &Manifest, url: &str) -> Result<(Value, Value), String> {
    let browser = Browser::launch(manifest)?;
    browser.goto(url)?;
    let state = "const s = window.dispatchBench; \
                 return s && s.state !== 'loading' && s.state !== 'running' ? s.state : null;";
    let ready = browser.wait_for(state, PAGE_TIMEOUT)?;
    if ready != json!("ready") {
        let text = browser.eval("return window.dispatchBench.text")?;
        return Err(format!("the page failed: {text}"));
    }
    browser.cdp("Profiler.enable", json!({}))?;
    browser.cdp(
        "Profiler.setSamplingInterval",
        json!({ "interval": SAMPLING_US }),
    )?;
    browser.cdp("Profiler.start", json!({}))?;
    browser.eval("window.dispatchBench.start(); return true;")?;
    let done = browser.wait_for(state, PAGE_TIMEOUT)?;
    let profile = browser.cdp("Profiler.stop", json!({}))?["profile"].clone();
    let page =
        browser.eval("const s = window.dispatchBench; return JSON.parse(JSON.stringify(s));")?;
    if done != json!("done") {
        return Err(format!("the page failed: {}", page["text"]));
    }
    Ok((page, profile))
}

/// The table: per category, microseconds per op in each runtime, then each runtime's top
/// functions.
fn report(results: &[(&str, Value, Breakdown)]) -> String {
    let mut out = String::new();
    let ops = |page: &Value| page["ops"].as_f64().unwrap_or(1000.0) * RUNS as f64;
    out.push_str(&format!(
        "dispatch: 1000 chained add on 64 float32, op by op, then a readback; {RUNS} runs after \
         warm-ups; the page's main thread sampled every {SAMPLING_US} us.\n\
         The \"GPU\" is SwiftShader: it runs in Chromium's GPU process on the same 2 CPU cores, \
         so its work shows here only as idle time.\n\
         Figures are microseconds per op: profile time / ops; idle is the runs' wall time \
         less the busy time.\n\n"
    ));
    out.push_str(&format!("{:<72}", "where (main thread)"));
    for (runtime, _, _) in results {
        out.push_str(&format!("{runtime:>14}"));
    }
    out.push('\n');
    for category in Category::ALL {
        out.push_str(&format!("{:<72}", category.label()));
        for (_, page, b) in results {
            let us = b.by_category.get(&category).copied().unwrap_or(0.0);
            out.push_str(&format!("{:>14.2}", us / ops(page)));
        }
        out.push('\n');
    }
    for (label, wall) in [
        ("busy (everything but idle)", false),
        ("wall: mean run / ops, under the profiler", true),
    ] {
        out.push_str(&format!("{label:<72}"));
        for (_, page, b) in results {
            let us = if wall { b.wall_us } else { b.busy_us };
            out.push_str(&format!("{:>14.2}", us / ops(page)));
        }
        out.push('\n');
    }
    for (runtime, page, b) in results {
        out.push_str(&format!(
            "\n{runtime}: the 12 functions with the most self time (us per op)\n"
        ));
        for (name, category, us) in b.by_function.iter().take(12) {
            out.push_str(&format!(
                "{:>8.2}  {:<10} {name}\n",
                us / ops(page),
                format!("{category:?}")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_fall_into_the_right_category() {
        let frame = |name: &str, url: &str| json!({ "functionName": name, "url": url });
        let wasm = "wasm://wasm/00a1b2c3";
        assert_eq!(
            categorize(&frame(
                "$_ZN6tandem3gpu7encoder8dispatch17h0123456789abcdefE",
                wasm
            )),
            Category::Tandem
        );
        assert_eq!(
            categorize(&frame("$<wgpu::backend::webgpu::X>", wasm)),
            Category::Wgpu
        );
        assert_eq!(categorize(&frame("$dlmalloc", wasm)), Category::OtherRust);
        assert_eq!(
            categorize(&frame(
                "__wbg_dispatchWorkgroups_1",
                "http://h/pkg/tandem.js"
            )),
            Category::Glue
        );
        assert_eq!(
            categorize(&frame("dispatchWorkgroups", "")),
            Category::WebGpuApi
        );
        assert_eq!(
            categorize(&frame("chain", "http://h/peers/tandem.js")),
            Category::OtherJs
        );
        assert_eq!(categorize(&frame("(idle)", "")), Category::Idle);
        assert_eq!(categorize(&frame("(program)", "")), Category::Browser);
    }

    #[test]
    fn self_time_is_the_gap_to_the_next_sample() {
        let profile = json!({ "samples": [1, 2, 1], "timeDeltas": [0, 10, 30] });
        let times = self_times(&profile);
        assert_eq!(times[&1], 10.0);
        assert_eq!(times[&2], 30.0);
    }

    #[test]
    fn idle_is_wall_less_busy_and_not_a_function() {
        let node = |id: u64, name: &str, url: &str| json!({ "id": id, "callFrame": { "functionName": name, "url": url } });
        let profile = json!({
            "nodes": [node(1, "(idle)", ""), node(2, "submit", "")],
            "samples": [1, 2, 1],
            "timeDeltas": [0, 500, 30],
        });
        let b = breakdown(&profile, 100.0);
        assert_eq!(b.busy_us, 30.0);
        assert_eq!(b.by_category[&Category::Idle], 70.0);
        assert_eq!(
            b.by_function,
            vec![("submit".to_string(), Category::WebGpuApi, 30.0)]
        );
    }

    #[test]
    fn rust_symbols_lose_their_hash() {
        assert_eq!(
            short_name("$_ZN6tandem3gpu7encoder8dispatch17h0123456789abcdefE"),
            "_ZN6tandem3gpu7encoder8dispatch"
        );
        assert_eq!(short_name(""), "(anonymous)");
    }
}
