//! Headless Firefox (Debian's `firefox-esr`) driven over WebDriver BiDi, which Firefox serves
//! itself on `--remote-debugging-port`: Debian packages no geckodriver. Just enough to open a
//! page and run scripts in it, as `webdriver::Browser` does for Chromium; the socket is
//! `tungstenite`'s.
//!
//! The test pages run in a Firefox with no remote protocol attached ([`run_unattended`]), and
//! post their reports to the server: with a BiDi session open, Firefox ESR 153 now and then
//! hangs a worker's `new Worker(...)` for good (in a page of module workers each starting
//! workers in turn, within some tens of starts; none in 700 starts with no session), and a
//! page running tandem in a worker starts its pool's workers that way.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tungstenite::{Message, WebSocket};

use crate::manifest::Manifest;
use crate::webdriver::{Page, free_port};

/// A headless Firefox with a fresh profile and one BiDi session; ended, with its profile, on
/// drop.
pub struct Firefox {
    process: Process,
    socket: std::cell::RefCell<WebSocket<TcpStream>>,
    next_id: std::cell::Cell<u64>,
    context: String,
}

/// How long Firefox may take to open its BiDi port.
const START_TIMEOUT: Duration = Duration::from_secs(60);

impl Firefox {
    /// Starts `firefox` (the manifest's) headless and opens a session on its only tab.
    pub fn launch(manifest: &Manifest) -> Result<Firefox, String> {
        let port = free_port()?;
        let process = Process::start(
            manifest,
            &format!("firefox-{}-{port}", std::process::id()),
            &[
                format!("--remote-debugging-port={port}"),
                "about:blank".into(),
            ],
        )?;
        let socket = connect(port)?;
        let mut firefox = Firefox {
            process,
            socket: std::cell::RefCell::new(socket),
            next_id: std::cell::Cell::new(1),
            context: String::new(),
        };
        firefox.command("session.new", json!({ "capabilities": {} }))?;
        let tree = firefox.command("browsingContext.getTree", json!({}))?;
        firefox.context = tree["contexts"][0]["context"]
            .as_str()
            .ok_or_else(|| format!("Firefox listed no tab: {tree}"))?
            .to_string();
        Ok(firefox)
    }

    /// One BiDi command; its `result`, or the error Firefox gave.
    fn command(&self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id.replace(self.next_id.get() + 1);
        let text = json!({ "id": id, "method": method, "params": params }).to_string();
        let mut socket = self.socket.borrow_mut();
        socket
            .send(Message::text(text))
            .map_err(|e| format!("Firefox: {method}: {e}"))?;
        loop {
            let reply = socket
                .read()
                .map_err(|e| format!("Firefox: {method}: {e}"))?;
            let Message::Text(text) = reply else {
                continue;
            };
            let reply: Value = serde_json::from_str(text.as_str())
                .map_err(|e| format!("Firefox sent invalid JSON: {e}"))?;
            // Events arrive between replies; only this command's reply ends the wait.
            if reply["id"] != json!(id) {
                continue;
            }
            return match reply["type"].as_str() {
                Some("success") => Ok(reply["result"].clone()),
                _ => Err(format!(
                    "Firefox: {method}: {}: {}",
                    reply["error"].as_str().unwrap_or("error"),
                    reply["message"].as_str().unwrap_or_default()
                )),
            };
        }
    }
}

impl Page for Firefox {
    fn goto(&self, url: &str) -> Result<(), String> {
        let params = json!({ "context": self.context, "url": url, "wait": "complete" });
        self.command("browsingContext.navigate", params).map(drop)
    }

    fn eval(&self, script: &str) -> Result<Value, String> {
        let params = json!({
            "functionDeclaration": format!("function () {{\n{script}\n}}"),
            "awaitPromise": false,
            "target": { "context": self.context },
            "resultOwnership": "none",
        });
        let result = self.command("script.callFunction", params)?;
        match result["type"].as_str() {
            Some("success") => Ok(plain(&result["result"])),
            _ => Err(format!(
                "the script threw: {}",
                result["exceptionDetails"]["text"]
                    .as_str()
                    .unwrap_or("an exception")
            )),
        }
    }
}

impl Drop for Firefox {
    fn drop(&mut self) {
        let _ = self.command("browser.close", json!({}));
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(5) {
            if matches!(self.process.child.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // `process` then kills what is left and removes the profile.
    }
}

/// Opens `url` (served by `serve`) in a headless Firefox with no remote protocol attached,
/// and returns the `{state, text}` the page posted (`tests/pages/report.js`, for
/// `#report=TOKEN`); an error if none came within `timeout`.
pub fn run_unattended(manifest: &Manifest, url: &str, timeout: Duration) -> Result<Value, String> {
    // A token per page run: a page of an earlier run that reports late is never taken for
    // this one's.
    static RUNS: AtomicU64 = AtomicU64::new(0);
    let run = RUNS.fetch_add(1, Ordering::Relaxed);
    let token = format!("firefox-page-{}-{run}", std::process::id());
    let _firefox = Process::start(manifest, &token, &[format!("{url}#report={token}")])?;
    let started = Instant::now();
    while started.elapsed() < timeout {
        if let Some(report) = crate::serve::take_report(&token) {
            return serde_json::from_str(&report)
                .map_err(|e| format!("the page {url} posted a report that is not JSON: {e}"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!(
        "the page {url} did not report within {} s",
        timeout.as_secs()
    ))
}

/// A headless Firefox on a fresh profile: killed, and its profile removed, on drop (also
/// when what started it fails midway).
struct Process {
    child: Child,
    profile: PathBuf,
}

impl Process {
    /// Starts the manifest's `firefox` headless on a fresh profile `tandem-NAME` in the
    /// temporary folder, with `args` after it.
    fn start(manifest: &Manifest, name: &str, args: &[String]) -> Result<Process, String> {
        let profile = std::env::temp_dir().join(format!("tandem-{name}"));
        write_profile(&profile)?;
        let child = Command::new(&manifest.firefox)
            .args(["--headless", "--no-remote", "--profile"])
            .arg(&profile)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", manifest.firefox.display()))?;
        Ok(Process { child, profile })
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// A fresh profile that keeps Firefox from reaching for the network on its own.
fn write_profile(profile: &Path) -> Result<(), String> {
    std::fs::create_dir_all(profile).map_err(|e| format!("{}: {e}", profile.display()))?;
    let prefs = [
        ("app.update.disabledForTesting", "true"),
        ("browser.shell.checkDefaultBrowser", "false"),
        ("datareporting.policy.dataSubmissionEnabled", "false"),
        ("toolkit.telemetry.enabled", "false"),
        ("network.captive-portal-service.enabled", "false"),
        ("browser.safebrowsing.malware.enabled", "false"),
        ("browser.safebrowsing.phishing.enabled", "false"),
    ];
    let text: String = prefs
        .iter()
        .map(|(k, v)| format!("user_pref(\"{k}\", {v});\n"))
        .collect();
    std::fs::write(profile.join("user.js"), text).map_err(|e| e.to_string())
}

/// Connects to Firefox's BiDi endpoint once it listens.
fn connect(port: u16) -> Result<WebSocket<TcpStream>, String> {
    let started = Instant::now();
    loop {
        if let Ok(stream) = TcpStream::connect(("127.0.0.1", port)) {
            let url = format!("ws://127.0.0.1:{port}/session");
            match tungstenite::client(url.as_str(), stream) {
                Ok((socket, _)) => return Ok(socket),
                Err(e) if started.elapsed() > START_TIMEOUT => {
                    return Err(format!("Firefox's WebDriver BiDi refused a session: {e}"));
                }
                Err(_) => {}
            }
        }
        if started.elapsed() > START_TIMEOUT {
            return Err(format!(
                "Firefox did not open WebDriver BiDi on port {port} within {} s",
                START_TIMEOUT.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A BiDi remote value (`{type: "object", value: [[key, value], …]}`) as plain JSON, as
/// classic WebDriver returns script results.
fn plain(remote: &Value) -> Value {
    let value = &remote["value"];
    match remote["type"].as_str().unwrap_or_default() {
        "string" | "boolean" => value.clone(),
        "number" => match value {
            Value::String(_) => Value::Null,
            other => other.clone(),
        },
        "bigint" => value.clone(),
        "array" | "set" => Value::Array(
            value
                .as_array()
                .map(|items| items.iter().map(plain).collect())
                .unwrap_or_default(),
        ),
        "object" | "map" => {
            let mut object = Map::new();
            for pair in value.as_array().into_iter().flatten() {
                let key = match &pair[0] {
                    Value::String(key) => key.clone(),
                    other => plain(other).to_string(),
                };
                object.insert(key, plain(&pair[1]));
            }
            Value::Object(object)
        }
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_values_become_plain_json() {
        let remote = json!({ "type": "object", "value": [
            ["state", { "type": "string", "value": "done" }],
            ["n", { "type": "number", "value": 3 }],
            ["nan", { "type": "number", "value": "NaN" }],
            ["list", { "type": "array", "value": [{ "type": "boolean", "value": true }, { "type": "null" }] }],
        ]});
        assert_eq!(
            plain(&remote),
            json!({ "state": "done", "n": 3, "nan": null, "list": [true, null] })
        );
        assert_eq!(plain(&json!({ "type": "undefined" })), Value::Null);
    }
}
