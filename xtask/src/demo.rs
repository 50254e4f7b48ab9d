//! `cargo xtask demo`: builds the package and serves the demo page; with `--headless`, drives it
//! in headless Chromium and prints what it shows. The benchmark pages run the same way.

use std::net::SocketAddr;
use std::time::Duration;

use crate::cmd::root;
use crate::manifest::Manifest;
use crate::webdriver::Browser;
use crate::{package, serve, setup};

pub fn demo(manifest: &Manifest, headless: bool) -> Result<(), String> {
    setup::setup(manifest)?;
    package::build(manifest)?;
    if headless {
        println!("{}", run_demo(manifest)?);
        return Ok(());
    }
    let package = root().join(&manifest.out_dir);
    let address = serve::start(&manifest.demo_address, root().join("www"), package)?;
    println!("demo: serving on http://{address}/ (Ctrl-C stops)");
    loop {
        std::thread::park();
    }
}

/// Serves the folder of `page` (`"www/"`, `"bench/split.html"`) on a free port, opens the page
/// in headless Chromium, and returns the text it reports. A page reports through
/// `window[global] = {state, text}`, with `state` ending as `"done"` or `"error"`.
pub fn run_page(
    manifest: &Manifest,
    page: &str,
    global: &str,
    timeout: Duration,
) -> Result<String, String> {
    run_page_then(manifest, page, global, timeout, |_| Ok(String::new()))
}

/// As [`run_page`], then runs `then` on the finished page and appends what it returns.
fn run_page_then(
    manifest: &Manifest,
    page: &str,
    global: &str,
    timeout: Duration,
    then: impl FnOnce(&Browser) -> Result<String, String>,
) -> Result<String, String> {
    let (folder, file) = page.split_once('/').unwrap_or((page, ""));
    let address = serve_pages(manifest, folder)?;
    let browser = Browser::launch(manifest)?;
    browser.goto(&format!("http://{address}/{file}"))?;
    let script =
        format!("const r = window.{global}; return r && r.state !== 'running' ? r : null;");
    let result = browser.wait_for(&script, timeout)?;
    let text = result["text"].as_str().unwrap_or_default().to_string();
    match result["state"].as_str() {
        Some("done") => Ok(text + &then(&browser)?),
        _ => Err(format!("the page in {folder}/ reported an error:\n{text}")),
    }
}

/// Where the demo's end-to-end run saves the history timeline.
pub const HISTORY_SCREENSHOT: &str = "target/demo/history-timeline.png";

/// Runs the demo page headless, then opens its memory history timeline, hovers the biggest
/// band, and saves a screenshot of the panel to [`HISTORY_SCREENSHOT`].
pub fn run_demo(manifest: &Manifest) -> Result<String, String> {
    run_page_then(
        manifest,
        "www/",
        "tandemDemo",
        Duration::from_secs(120),
        open_history,
    )
}

fn open_history(browser: &Browser) -> Result<String, String> {
    browser.set_window_size(1000, 1400)?;
    browser.eval(
        "const panel = document.getElementById('history-panel'); \
         panel.open = true; panel.scrollIntoView(); return null;",
    )?;
    let drawn = browser.wait_for(
        "const h = window.tandemHistory; return h && h.state === 'drawn' ? h : null;",
        Duration::from_secs(30),
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
    if !info.contains(" on ") || !info.contains("main.js") {
        return Err(format!("hovering a band showed {info:?}"));
    }
    // Drawn, the panel is taller than when it opened: bring all of it into view.
    browser.eval("document.getElementById('history-panel').scrollIntoView(); return null;")?;
    let png = browser.screenshot("#history-panel")?;
    let path = root().join(HISTORY_SCREENSHOT);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(&path, &png).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let first_line = info.lines().next().unwrap_or_default();
    Ok(format!(
        "\nHistory timeline: {bands} bands of {} events; hovered: {first_line}\n\
         screenshot: {HISTORY_SCREENSHOT} ({} bytes)",
        drawn["events"],
        png.len()
    ))
}

/// Serves `folder` (relative to the repository root) at `/` and the package at `/pkg/` on a
/// free port, for as long as xtask runs; returns the address.
pub fn serve_pages(manifest: &Manifest, folder: &str) -> Result<SocketAddr, String> {
    let package = root().join(&manifest.out_dir);
    serve::start("127.0.0.1:0", root().join(folder), package)
}
