//! WebKit, as Debian packages it: WebKitGTK's MiniBrowser driven by `WebKitWebDriver`
//! (`webkit2gtk-driver`), a W3C WebDriver like chromedriver, so `webdriver::Browser` drives it.
//! MiniBrowser has no headless mode and needs an X display: a private `Xvfb` runs for each
//! session and ends with it.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::manifest::Manifest;
use crate::webdriver::{Browser, free_port};

/// Starts an X server, WebKitWebDriver on it and a MiniBrowser session.
pub fn launch(manifest: &Manifest) -> Result<Browser, String> {
    let (display, number) = start_display(manifest)?;
    let port = free_port()?;
    let driver = Command::new(&manifest.webkit_driver)
        .arg(format!("--port={port}"))
        .env("DISPLAY", format!(":{number}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", manifest.webkit_driver.display()))?;
    let profile = std::env::temp_dir().join(format!("tandem-webkit-{}-{port}", std::process::id()));
    let capabilities = json!({ "capabilities": { "alwaysMatch": {
        "browserName": "MiniBrowser",
        "webkitgtk:browserOptions": {
            "binary": manifest.minibrowser,
            "args": ["--automation"]
        }
    }}});
    Browser::open(driver, port, profile, Some(display), capabilities)
}

/// An `Xvfb` on the first free display number from 100, once its socket is there.
fn start_display(manifest: &Manifest) -> Result<(Child, u32), String> {
    let number = (100..200)
        .find(|n| !Path::new(&format!("/tmp/.X{n}-lock")).exists())
        .ok_or("no free X display number from 100 to 199")?;
    let display = Command::new(&manifest.xvfb)
        .arg(format!(":{number}"))
        .args(["-screen", "0", "1280x800x24", "-nolisten", "tcp"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", manifest.xvfb.display()))?;
    let socket = format!("/tmp/.X11-unix/X{number}");
    let started = Instant::now();
    while !Path::new(&socket).exists() {
        if started.elapsed() > Duration::from_secs(10) {
            return Err(format!("Xvfb :{number} did not start within 10 s"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok((display, number))
}
