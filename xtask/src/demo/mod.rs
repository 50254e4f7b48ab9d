//! `cargo xtask demo`: builds the package and serves the demo page; with `--headless`, drives it
//! in headless Chromium (`drive`) and prints what it shows. The benchmark pages run the same way.

mod code;
mod drive;
mod train;

pub use drive::run_demo;
pub use train::run_training;

use std::net::SocketAddr;
use std::time::Duration;

use crate::cmd::root;
use crate::firefox::Firefox;
use crate::manifest::Manifest;
use crate::webdriver::{Browser, Page};
use crate::{package, serve, setup};

pub fn demo(manifest: &Manifest, headless: bool) -> Result<(), String> {
    setup::setup(manifest)?;
    package::build(manifest)?;
    if headless {
        println!("{}", run_demo(manifest)?);
        println!("{}", run_training(manifest)?);
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
    let text = finish_page(
        &browser,
        &format!("http://{address}/{file}"),
        global,
        timeout,
    )?;
    Ok(text + &then(&browser)?)
}

/// The browsers beside Chromium that `cargo xtask test` runs pages in. Neither has WebGPU on
/// this machine's Debian, so tandem runs on its CPU path in both.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Other {
    /// Firefox ESR, over WebDriver BiDi.
    Firefox,
    /// WebKitGTK's MiniBrowser, through WebKitWebDriver on a private Xvfb.
    WebKit,
}

impl Other {
    pub const ALL: [Other; 2] = [Other::Firefox, Other::WebKit];

    pub fn name(self) -> &'static str {
        match self {
            Other::Firefox => "Firefox ESR",
            Other::WebKit => "WebKitGTK",
        }
    }

    /// Opens the browser and runs `drive` on it.
    pub fn drive<T>(
        self,
        manifest: &Manifest,
        drive: impl FnOnce(&dyn Page) -> Result<T, String>,
    ) -> Result<T, String> {
        match self {
            Other::Firefox => drive(&Firefox::launch(manifest)?),
            Other::WebKit => drive(&crate::webkit::launch(manifest)?),
        }
    }
}

/// As [`run_page`], in `browser` (where tandem runs on its CPU path).
pub fn run_page_in(
    manifest: &Manifest,
    browser: Other,
    page: &str,
    global: &str,
    timeout: Duration,
) -> Result<String, String> {
    let (folder, file) = page.split_once('/').unwrap_or((page, ""));
    let address = serve_pages(manifest, folder)?;
    let url = format!("http://{address}/{file}");
    match browser {
        // Unattended: see `firefox`'s module notes (the report comes through the server, as
        // `tests/pages/report.js` posts it, so `global` is not read).
        Other::Firefox => outcome(
            &url,
            &crate::firefox::run_unattended(manifest, &url, timeout)?,
        ),
        Other::WebKit => browser.drive(manifest, |b| finish_page(b, &url, global, timeout)),
    }
}

/// Opens `url` and waits for its report in `window[global]`; its text, or an error with it.
fn finish_page(
    browser: &(impl Page + ?Sized),
    url: &str,
    global: &str,
    timeout: Duration,
) -> Result<String, String> {
    browser.goto(url)?;
    let script =
        format!("const r = window.{global}; return r && r.state !== 'running' ? r : null;");
    outcome(url, &browser.wait_for(&script, timeout)?)
}

/// A page's `{state, text}` report: its text if it is done, else an error with the text.
fn outcome(url: &str, result: &serde_json::Value) -> Result<String, String> {
    let text = result["text"].as_str().unwrap_or_default().to_string();
    match result["state"].as_str() {
        Some("done") => Ok(text),
        _ => Err(format!("the page {url} reported an error:\n{text}")),
    }
}

/// Serves `folder` (relative to the repository root) at `/` and the package at `/pkg/` on a
/// free port, for as long as xtask runs; returns the address.
pub fn serve_pages(manifest: &Manifest, folder: &str) -> Result<SocketAddr, String> {
    let package = root().join(&manifest.out_dir);
    serve::start("127.0.0.1:0", root().join(folder), package)
}
