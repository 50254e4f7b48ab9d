//! `cargo xtask demo`: builds the package and serves the demo page; with `--headless`, drives it
//! in headless Chromium and prints what it shows.

use std::time::Duration;

use crate::cmd::root;
use crate::manifest::Manifest;
use crate::webdriver::Browser;
use crate::{package, serve, setup};

/// The page sets `window.tandemDemo = {state, text}`; `state` ends as `"done"` or `"error"`.
const RESULT_SCRIPT: &str = "const d = window.tandemDemo; \
    return d && d.state !== 'running' ? d : null;";

pub fn demo(manifest: &Manifest, headless: bool) -> Result<(), String> {
    setup::setup(manifest)?;
    package::build(manifest)?;
    if headless {
        let text = run_headless(manifest)?;
        println!("{text}");
        return Ok(());
    }
    let address = serve::start(&manifest.demo_address, root(), manifest.out_dir.clone())?;
    println!("demo: serving on http://{address}/ (Ctrl-C stops)");
    loop {
        std::thread::park();
    }
}

/// Serves the demo on a free port, opens it in headless Chromium, and returns the page's text;
/// an error if the page reports one.
pub fn run_headless(manifest: &Manifest) -> Result<String, String> {
    let address = serve::start("127.0.0.1:0", root(), manifest.out_dir.clone())?;
    let browser = Browser::launch(manifest)?;
    browser.goto(&format!("http://{address}/"))?;
    let result = browser.wait_for(RESULT_SCRIPT, Duration::from_secs(120))?;
    let text = result["text"].as_str().unwrap_or_default().to_string();
    match result["state"].as_str() {
        Some("done") => Ok(text),
        _ => Err(format!("the demo page reported an error:\n{text}")),
    }
}
