//! The demo page driven end to end, as a reader would use it: each run button clicked and its
//! results checked, the gauges seen moving, a limit too small for the example shown as a
//! `MemoryLimitError` and lifted again, screenshots at a desktop's and a phone's size, and the
//! memory history opened and hovered; then without WebGPU, in Chromium without its flag and in
//! Firefox ESR and WebKitGTK. `cargo xtask demo --headless` prints what it returns;
//! `cargo xtask test` runs it as a test.

use std::time::Duration;

use serde_json::Value;

use super::{Other, serve_pages};
use crate::cmd::root;
use crate::manifest::Manifest;
use crate::webdriver::{Browser, Page};

/// Where the screenshots go, relative to the repository root.
pub const DESKTOP_SCREENSHOT: &str = "target/screenshots/demo.png";
pub const PHONE_SCREENSHOT: &str = "target/screenshots/demo-phone.png";
pub const HISTORY_SCREENSHOT: &str = "target/screenshots/demo-history.png";

const MODES: [&str; 4] = ["gpu", "split", "cpu", "compiled"];
/// A mode's warm-up and timed runs on a software adapter take seconds; the page's start-up
/// (kernel compiles, the first matmul's timing) a little more.
const RUN_TIMEOUT: Duration = Duration::from_secs(300);

pub fn run_demo(manifest: &Manifest) -> Result<String, String> {
    let address = serve_pages(manifest, "www")?;
    let browser = Browser::launch(manifest)?;
    browser.set_viewport(1280, 800, false)?;
    browser.goto(&format!("http://{address}/"))?;
    let before = wait_ready(&browser, 0)?;
    let code_report = super::code::check_shown_code(&browser)?;
    let figures_report = super::code::check_figures_follow_exps(&browser)?;
    for mode in MODES {
        let state = run_mode(&browser, mode)?;
        check_result(&state, mode)?;
    }
    let state = page(&browser)?;
    check_gauges_moved(&before, &state)?;
    report_hover(&browser)?;
    check_table_matches(&browser, &state)?;
    let text = state["text"].as_str().unwrap_or_default().to_string();
    let mut report = vec![text, code_report, figures_report];
    report.push(save(&browser.screenshot_viewport()?, DESKTOP_SCREENSHOT)?);
    browser.set_viewport(390, 844, true)?;
    // The layout settles and the charts redraw at the new width on the next frame.
    browser.eval(
        "return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));",
    )?;
    report.push(save(&browser.screenshot_viewport()?, PHONE_SCREENSHOT)?);
    browser.set_viewport(1280, 800, false)?;
    report.push(limit_bites_then_lifts(&browser)?);
    report.push(half_and_weights(&browser)?);
    report.push(open_history(&browser)?);
    drop(browser);
    report.push(without_webgpu(manifest)?);
    for browser in Other::ALL {
        report.push(elsewhere(manifest, browser)?);
    }
    Ok(report.join("\n"))
}

/// In a browser without WebGPU the page says so, names the flag, and still runs: every mode
/// on the CPU.
fn without_webgpu(manifest: &Manifest) -> Result<String, String> {
    let address = serve_pages(manifest, "www")?;
    let browser = Browser::launch_with(manifest, &manifest.flags_without_webgpu())?;
    browser.set_viewport(1280, 800, false)?;
    browser.goto(&format!("http://{address}/?memoryLimit=64MiB"))?;
    let banner = check_without_webgpu(&browser)?;
    if !banner.contains("--enable-unsafe-webgpu") {
        return Err(format!("without WebGPU the page's banner says {banner:?}"));
    }
    Ok(
        "without WebGPU: the banner names the flag; ?memoryLimit=64MiB applied; a limit of \
         \"12 parsecs\" and a rows of 0 refused by name; CPU-only and split ran on the CPU"
            .into(),
    )
}

/// The same drive in Firefox ESR and WebKitGTK, which have no WebGPU here.
fn elsewhere(manifest: &Manifest, browser: Other) -> Result<String, String> {
    let address = serve_pages(manifest, "www")?;
    browser.drive(manifest, |page| {
        page.goto(&format!("http://{address}/?memoryLimit=64MiB"))?;
        check_without_webgpu(page)
    })?;
    Ok(format!(
        "{} (no WebGPU): the banner shown; ?memoryLimit=64MiB applied; bad input refused by \
         name; CPU-only and split ran on the CPU",
        browser.name()
    ))
}

/// Checks a demo page opened without WebGPU: the limit from the URL, bad input refused by
/// name, the banner shown, and the CPU-only and split modes run. Returns the banner's text.
fn check_without_webgpu(browser: &(impl Page + ?Sized)) -> Result<String, String> {
    wait_ready(browser, 0)?;
    let limit = browser.eval("return document.getElementById('limit-shown').textContent;")?;
    if limit != "64.0 MiB" {
        return Err(format!("?memoryLimit=64MiB showed the limit as {limit}"));
    }
    // A limit that is not a size is refused by name, and the limit stays.
    let refused = browser.eval(
        "document.getElementById('limit').value = '12 parsecs'; \
         document.getElementById('limit-form').requestSubmit(); \
         return [document.getElementById('limit-status').textContent, \
                 document.getElementById('limit-shown').textContent];",
    )?;
    if !refused[0]
        .as_str()
        .is_some_and(|t| t.contains("is not a size"))
        || refused[1] != "64.0 MiB"
    {
        return Err(format!("a limit of \"12 parsecs\" gave {refused}"));
    }
    // A bad size is named, and nothing runs.
    browser.eval("document.getElementById('m').value = '0'; return null;")?;
    let refused = run_mode(browser, "cpu")?;
    if !refused["error"]
        .as_str()
        .is_some_and(|e| e.contains("a rows must be a whole number"))
    {
        return Err(format!("a rows of 0 gave {}", refused["error"]));
    }
    browser.eval("document.getElementById('m').value = '4096'; return null;")?;
    let banner = browser.eval(
        "const b = document.getElementById('no-webgpu'); return b.hidden ? null : b.textContent;",
    )?;
    let banner = banner.as_str().unwrap_or_default().to_string();
    if !banner.contains("No WebGPU") {
        return Err(format!("without WebGPU the page's banner says {banner:?}"));
    }
    for mode in ["cpu", "split"] {
        check_result(&run_mode(browser, mode)?, mode)?;
    }
    Ok(banner)
}

/// `window.tandemDemo` now.
fn page(browser: &(impl Page + ?Sized)) -> Result<Value, String> {
    browser.eval(
        "const p = window.tandemDemo; return p && {state: p.state, text: p.text, error: p.error, \
         results: p.results, runs: p.runs, active: p.active, frames: p.seen.frames, \
         activeValues: p.seen.activeValues.size, maxActive: p.seen.maxActive, \
         smiSamples: p.smiSamples.length};",
    )
}

/// Waits until the page is between runs with more than `runs` done, and returns its state; a
/// page that failed to start is an error with its message.
fn wait_ready(browser: &(impl Page + ?Sized), runs: u64) -> Result<Value, String> {
    let state = browser.wait_for(
        &format!(
            "const p = window.tandemDemo; if (p && p.state === 'error') return 'error'; \
             return p && p.state === 'ready' && p.runs >= {runs} ? 'ready' : null;"
        ),
        RUN_TIMEOUT,
    )?;
    if state == "error" {
        let p = page(browser)?;
        return Err(format!("the demo page failed to start: {}", p["error"]));
    }
    page(browser)
}

/// Clicks `mode`'s button and returns the page's state once that run has ended.
fn run_mode(browser: &(impl Page + ?Sized), mode: &str) -> Result<Value, String> {
    let runs = page(browser)?["runs"].as_u64().unwrap_or(0);
    click(browser, &format!("button[data-mode='{mode}']"))?;
    wait_ready(browser, runs + 1)
}

fn click(browser: &(impl Page + ?Sized), css: &str) -> Result<(), String> {
    let css_literal = serde_json::to_string(css).map_err(|e| e.to_string())?;
    let clicked = browser.eval(&format!(
        "const b = document.querySelector({css_literal}); if (!b || b.disabled) return false; \
         b.click(); return true;"
    ))?;
    if clicked != Value::Bool(true) {
        return Err(format!("{css} is missing or disabled"));
    }
    Ok(())
}

/// The mode ran without an error, and every time is a positive number.
fn check_result(state: &Value, mode: &str) -> Result<(), String> {
    if !state["error"].is_null() {
        return Err(format!("the {mode} run failed: {}", state["error"]));
    }
    let result = &state["results"][mode];
    let times = result["times"]
        .as_array()
        .ok_or(format!("no times for {mode}: {result}"))?;
    let positive = |v: &Value| v.as_f64().is_some_and(|t| t > 0.0 && t.is_finite());
    if times.is_empty() || !times.iter().all(positive) || !positive(&result["median"]) {
        return Err(format!(
            "the {mode} run's times are not all positive: {result}"
        ));
    }
    Ok(())
}

/// The gauges redrew during the runs and showed more than one active figure.
fn check_gauges_moved(before: &Value, after: &Value) -> Result<(), String> {
    let frames = |s: &Value| s["frames"].as_u64().unwrap_or(0);
    let moved = after["activeValues"].as_u64().unwrap_or(0) >= 2;
    if frames(after) <= frames(before)
        || !moved
        || after["maxActive"].as_f64().unwrap_or(0.0) <= 0.0
    {
        return Err(format!(
            "the gauges did not move during the runs: before {before}, after {after}"
        ));
    }
    if after["smiSamples"].as_u64().unwrap_or(0) == 0 {
        return Err("the monitor took no smi() sample".into());
    }
    Ok(())
}

/// Hovering a CPU bar of the last run's timeline names its op and shape (the compiled split's
/// fused exps, over b's 512x4).
fn report_hover(browser: &Browser) -> Result<(), String> {
    let tip = browser.eval(
        "const bar = document.querySelector('#timeline .cpu-bar'); if (!bar) return null; \
         bar.dispatchEvent(new MouseEvent('mouseenter')); \
         return document.getElementById('timeline-tip').textContent;",
    )?;
    let tip = tip.as_str().unwrap_or_default();
    if !tip.contains("[512x4]") || !tip.contains("on the CPU") {
        return Err(format!("hovering the timeline's CPU bar showed {tip:?}"));
    }
    Ok(())
}

/// The results table shows the medians the printed text has (both to two decimals).
fn check_table_matches(browser: &Browser, state: &Value) -> Result<(), String> {
    let shown = browser.eval(
        "return [...document.querySelectorAll('#results tr')].slice(1) \
         .map((tr) => [...tr.children].map((c) => c.textContent));",
    )?;
    let text = state["text"].as_str().unwrap_or_default();
    let rows = shown.as_array().cloned().unwrap_or_default();
    if rows.len() != MODES.len() {
        return Err(format!(
            "the results table has {} rows: {shown}",
            rows.len()
        ));
    }
    for row in rows {
        let cells: Vec<&str> = row
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let [label, median, ..] = cells[..] else {
            return Err(format!("a short results row: {row}"));
        };
        let printed = text.lines().find(|l| l.starts_with(label));
        if !printed.is_some_and(|l| l.split_whitespace().any(|w| w == median)) {
            return Err(format!(
                "the page shows {label} {median} ms; the text says {printed:?}"
            ));
        }
    }
    Ok(())
}

/// Sets a 1 MiB limit (the example's a alone is 8 MiB): a run shows a MemoryLimitError; with
/// the limit lifted the same run succeeds, and active memory is where it was.
fn limit_bites_then_lifts(browser: &Browser) -> Result<String, String> {
    let active = page(browser)?["active"].clone();
    browser.eval(
        "document.getElementById('limit').value = '1MiB'; \
         document.getElementById('limit-form').requestSubmit(); return null;",
    )?;
    let state = run_mode(browser, "split")?;
    let shown = browser.eval("return document.getElementById('run-error').textContent;")?;
    let shown = shown.as_str().unwrap_or_default().to_string();
    if !shown.contains("MemoryLimitError") || state["error"].is_null() {
        return Err(format!("a 1 MiB limit showed {shown:?} (state {state})"));
    }
    // Nothing the failed run made is left. Fewer bytes may be: to make room, the runtime
    // drops a copy that the other device also holds (the inputs live on both).
    let (after, before) = (state["active"].as_f64(), active.as_f64());
    if after
        .zip(before)
        .is_none_or(|(after, before)| after > before)
    {
        return Err(format!(
            "active bytes {} after the failed run, {active} before",
            state["active"]
        ));
    }
    click(browser, "#no-limit")?;
    let again = run_mode(browser, "split")?;
    check_result(&again, "split")?;
    let first_line = shown.lines().next().unwrap_or_default();
    Ok(format!(
        "limit 1 MiB: the page showed \"{first_line}\"; active {active} bytes before, {} \
         after; lifted, split ran again",
        state["active"]
    ))
}

/// The half-precision card: the float16 weights hold half the float32 ones' bytes, and the
/// page's own safetensors file loads with its progress reported to the end.
fn half_and_weights(browser: &Browser) -> Result<String, String> {
    // The action's result, or the error the card shows.
    let wait = |what: &str| {
        let value = browser.wait_for(
            &format!(
                "const p = window.tandemDemo; if (p.state !== 'ready') return null; \
                 const e = document.getElementById('half-error').textContent; \
                 return e ? {{error: e}} : p.weights.{what};"
            ),
            RUN_TIMEOUT,
        )?;
        match value["error"].as_str() {
            Some(error) => Err(format!("the half-precision card showed {error}")),
            None => Ok(value),
        }
    };
    click(browser, "#half-compare")?;
    let rows = wait("compare")?;
    let bytes = |k: usize, key: &str| rows[k][key].as_f64().unwrap_or(0.0);
    let ratio = bytes(1, "residentBytes") / bytes(0, "residentBytes");
    if !(0.45..=0.55).contains(&ratio) {
        return Err(format!(
            "float16 weights hold {ratio:.2} of float32's bytes: {rows}"
        ));
    }
    click(browser, "#weights-sample")?;
    let loaded = wait("loaded")?;
    let last = &loaded["progress"][loaded["progress"].as_array().map_or(0, |p| p.len()) - 1];
    if loaded["tensors"] != 3 || last[0] != last[1] {
        return Err(format!("the sample file loaded as {loaded}"));
    }
    let mib = |b: f64| b / (1 << 20) as f64;
    Ok(format!(
        "half: float32 weights {:.2} MiB, peak {:.2} MiB, {:.1} ms; float16 {:.2} MiB, peak {:.2} \
         MiB, {:.1} ms; sample file: 3 tensors, progress ended at {} of {} bytes",
        mib(bytes(0, "residentBytes")),
        mib(bytes(0, "peakBytes")),
        bytes(0, "ms"),
        mib(bytes(1, "residentBytes")),
        mib(bytes(1, "peakBytes")),
        bytes(1, "ms"),
        last[0],
        last[1]
    ))
}

/// Opens the memory history, hovers its widest band, and saves the panel.
fn open_history(browser: &Browser) -> Result<String, String> {
    browser.set_viewport(1000, 1400, false)?;
    browser.eval(
        "const panel = document.getElementById('history-panel'); \
         panel.open = true; panel.scrollIntoView(); return null;",
    )?;
    let drawn = browser.wait_for(
        "const h = window.tandemHistory; return h && h.state === 'drawn' ? h : null;",
        Duration::from_secs(60),
    )?;
    let bands = drawn["bands"].as_u64().unwrap_or(0);
    if bands == 0 {
        return Err("the history timeline drew no bands".into());
    }
    // Hover the widest band, as a reader would, so that its op, size and stack show.
    let info = browser.eval(
        "const bands = [...document.querySelectorAll('#history .band')]; \
         const area = (b) => { const r = b.getBBox(); return r.width * r.height; }; \
         const band = bands.reduce((p, q) => (area(q) > area(p) ? q : p)); \
         band.dispatchEvent(new MouseEvent('mouseenter')); \
         return document.getElementById('history-info').textContent;",
    )?;
    let info = info.as_str().unwrap_or_default().to_string();
    // The op and size, then the stack of the page's call that made the array.
    if !info.contains(" on ") || !info.contains("workload.js") {
        return Err(format!("hovering a band showed {info:?}"));
    }
    browser.eval("document.getElementById('history-panel').scrollIntoView(); return null;")?;
    let png = browser.screenshot("#history-panel")?;
    let first_line = info.lines().next().unwrap_or_default();
    let saved = save(&png, HISTORY_SCREENSHOT)?;
    Ok(format!(
        "history: {bands} bands of {} events; hovered: {first_line}\n{saved}",
        drawn["events"]
    ))
}

pub(super) fn save(png: &[u8], relative: &str) -> Result<String, String> {
    let path = root().join(relative);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(&path, png).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(format!("screenshot: {relative} ({} bytes)", png.len()))
}
