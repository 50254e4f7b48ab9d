//! The training page (`www/train.html`) driven end to end: it trains on the CPU and then on the
//! GPU, the loss falls, a step's memory history is drawn with the ops that made each block,
//! checkpointing lowers a step's peak, a limit too small for a step stops training with a
//! `MemoryLimitError` that the page shows and training goes on once it is lifted; screenshots
//! at a desktop's and a phone's size.

use std::time::Duration;

use serde_json::Value;

use super::drive::save;
use super::serve_pages;
use crate::manifest::Manifest;
use crate::webdriver::{Browser, Page};

pub const TRAIN_SCREENSHOT: &str = "target/screenshots/train.png";
pub const TRAIN_PHONE_SCREENSHOT: &str = "target/screenshots/train-phone.png";
pub const TRAIN_HISTORY_SCREENSHOT: &str = "target/screenshots/train-history.png";

/// A GPU step on a software adapter takes up to a second; start-up compiles kernels.
const TIMEOUT: Duration = Duration::from_secs(300);

pub fn run_training(manifest: &Manifest) -> Result<String, String> {
    let address = serve_pages(manifest, "www")?;
    let browser = Browser::launch(manifest)?;
    browser.set_viewport(1280, 900, false)?;
    browser.goto(&format!("http://{address}/train.html"))?;
    wait(
        &browser,
        "const p = window.tandemTrain; return p && p.state !== 'starting' ? p.state : null;",
    )?;
    let state = state(&browser)?;
    if state["state"] == "error" {
        return Err(format!(
            "the training page failed to start: {}",
            state["error"]
        ));
    }
    let mut report = Vec::new();
    set(&browser, "device", "'cpu'")?;
    set(&browser, "checkpoint", "false")?;
    browser.eval("document.getElementById('start').click(); return null;")?;
    let plain = steps_until(&browser, 30)?;
    set(&browser, "checkpoint", "true")?;
    let kept = steps_until(&browser, plain["steps"].as_u64().unwrap_or(0) + 10)?;
    let peaks = &kept["peaks"]["cpu"];
    let (plain_peak, kept_peak) = (number(&peaks["plain"]), number(&peaks["checkpoint"]));
    // NaN (a peak not measured) fails too.
    if kept_peak.partial_cmp(&(0.8 * plain_peak)) != Some(std::cmp::Ordering::Less) {
        return Err(format!(
            "on the CPU a checkpointed step should peak lower: {kept_peak} B against {plain_peak} B"
        ));
    }
    report.push(format!(
        "train.html on the cpu: a step peaks at {:.2} MiB plain and {:.2} MiB with checkpoint \
         ({:.0} %); {:.1} steps/s checkpointed",
        plain_peak / 1048576.0,
        kept_peak / 1048576.0,
        100.0 * kept_peak / plain_peak,
        number(&kept["stepsPerSecond"])
    ));
    set(&browser, "device", "'gpu'")?;
    let gpu = steps_until(&browser, kept["steps"].as_u64().unwrap_or(0) + 10)?;
    report.push(format!(
        "train.html on the gpu: {} steps in all, {:.1} steps/s checkpointed (this machine's \
         adapter)",
        gpu["steps"],
        number(&gpu["stepsPerSecond"])
    ));
    report.push(check_learning(&gpu)?);
    report.push(check_history(&gpu)?);
    report.push(save(&browser.screenshot_viewport()?, TRAIN_SCREENSHOT)?);
    browser.eval("document.getElementById('step-history').scrollIntoView(); return null;")?;
    report.push(save(
        &browser.screenshot("#step-history")?,
        TRAIN_HISTORY_SCREENSHOT,
    )?);
    report.push(limit_stops_then_lifts(&browser)?);
    browser.set_viewport(390, 844, true)?;
    browser.eval(
        "return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));",
    )?;
    report.push(save(
        &browser.screenshot_viewport()?,
        TRAIN_PHONE_SCREENSHOT,
    )?);
    browser.eval("document.getElementById('start').click(); return null;")?;
    Ok(report.join("\n"))
}

fn state(browser: &(impl Page + ?Sized)) -> Result<Value, String> {
    browser.eval(
        "const p = window.tandemTrain; return p && {state: p.state, steps: p.steps, \
         first: p.losses[0] ?? null, last: p.losses.at(-1) ?? null, accuracy: p.accuracy, \
         peaks: p.peaks, error: p.error, historyDrawn: p.historyDrawn ?? null, \
         stepsPerSecond: p.stepsPerSecond};",
    )
}

fn wait(browser: &(impl Page + ?Sized), script: &str) -> Result<Value, String> {
    browser.wait_for(script, TIMEOUT)
}

fn number(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

/// Sets a control: `device`'s value or `checkpoint`'s checked state (a JS literal).
fn set(browser: &(impl Page + ?Sized), id: &str, value: &str) -> Result<(), String> {
    let property = if id == "checkpoint" {
        "checked"
    } else {
        "value"
    };
    browser.eval(&format!(
        "document.getElementById('{id}').{property} = {value}; return null;"
    ))?;
    Ok(())
}

/// Waits until training has taken `steps` steps (or stopped with an error).
fn steps_until(browser: &(impl Page + ?Sized), steps: u64) -> Result<Value, String> {
    wait(
        browser,
        &format!(
            "const p = window.tandemTrain; return p.error || p.steps >= {steps} ? true : null;"
        ),
    )?;
    let now = state(browser)?;
    if !now["error"].is_null() {
        return Err(format!("training stopped: {}", now["error"]));
    }
    Ok(now)
}

fn check_learning(state: &Value) -> Result<String, String> {
    let (first, last) = (number(&state["first"]), number(&state["last"]));
    if last.partial_cmp(&(0.9 * first)) != Some(std::cmp::Ordering::Less) {
        return Err(format!(
            "the loss did not fall: {first} at the first step, {last} now"
        ));
    }
    Ok(format!(
        "train.html: the loss fell from {first:.3} to {last:.3}; accuracy {:.1} %",
        100.0 * number(&state["accuracy"])
    ))
}

fn check_history(state: &Value) -> Result<String, String> {
    let drawn = &state["historyDrawn"];
    let ops: Vec<&str> = drawn["ops"]
        .as_array()
        .map_or(Vec::new(), |o| o.iter().filter_map(Value::as_str).collect());
    if drawn["bands"].as_u64().unwrap_or(0) == 0 || !ops.contains(&"matmul") {
        return Err(format!(
            "a step's memory history was not drawn by op: {drawn}"
        ));
    }
    Ok(format!(
        "train.html: a step's history drawn, {} bands of {} events, by {}",
        drawn["bands"],
        drawn["events"],
        ops.join(", ")
    ))
}

/// A 256 KiB limit stops training with a `MemoryLimitError` on the page; lifted, it trains on.
fn limit_stops_then_lifts(browser: &(impl Page + ?Sized)) -> Result<String, String> {
    browser.eval(
        "document.getElementById('limit').value = '256KiB'; \
         document.getElementById('limit-form').requestSubmit(); return null;",
    )?;
    wait(
        browser,
        "const p = window.tandemTrain; return p.error ? p.error : null;",
    )?;
    let shown = browser.eval("return document.getElementById('train-error').textContent;")?;
    let shown = shown.as_str().unwrap_or_default().to_string();
    if !shown.contains("MemoryLimitError") {
        return Err(format!("a 256 KiB limit showed {shown:?}"));
    }
    browser.eval(
        "document.getElementById('no-limit').click(); window.tandemTrain.error = null; \
         return null;",
    )?;
    wait(
        browser,
        "return window.tandemTrain.state === 'ready' ? true : null;",
    )?;
    let steps = state(browser)?["steps"].as_u64().unwrap_or(0);
    browser.eval("document.getElementById('start').click(); return null;")?;
    steps_until(browser, steps + 3)?;
    let first_line = shown.lines().next().unwrap_or_default();
    Ok(format!(
        "train.html: a 256 KiB limit stopped training ({first_line}); lifted, it trained on"
    ))
}
