//! Just enough of the WebDriver protocol to drive headless Chromium through chromedriver: open
//! a page and evaluate scripts in it. No browser download and no npm: only the Debian packages.
//! The HTTP is `ureq`'s; the commands and their JSON are here.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::manifest::Manifest;

/// A headless Chromium session; closed, with its driver and profile, on drop.
pub struct Browser {
    driver: Child,
    port: u16,
    session: String,
    profile: PathBuf,
    /// How long one WebDriver command may take; `None` waits as long as the command runs.
    timeout: Option<Duration>,
    /// The X server the browser draws into, where it needs one (WebKitGTK's MiniBrowser).
    display: Option<Child>,
}

/// How long closing the session may take on drop before the driver is killed instead.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(10);

impl Browser {
    /// Starts chromedriver and a headless Chromium with the manifest's flags and a fresh profile.
    pub fn launch(manifest: &Manifest) -> Result<Browser, String> {
        Browser::launch_with(manifest, &manifest.browser_flags)
    }

    /// As [`Browser::launch`], with these browser flags instead of the manifest's.
    pub fn launch_with(manifest: &Manifest, flags: &[String]) -> Result<Browser, String> {
        let port = free_port()?;
        let driver = Command::new(&manifest.chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", manifest.chromedriver.display()))?;
        let profile =
            std::env::temp_dir().join(format!("tandem-chromium-{}-{port}", std::process::id()));
        let mut args = flags.to_vec();
        args.push("--headless=new".into());
        args.push(format!("--user-data-dir={}", profile.display()));
        let capabilities = json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": { "binary": manifest.chromium, "args": args }
        }}});
        Browser::open(driver, port, profile, None, capabilities)
    }

    /// A session of the driver `driver` (listening on `port`) with `capabilities`, for a
    /// browser whose profile folder is `profile` and whose X server, if any, is `display`.
    pub fn open(
        driver: Child,
        port: u16,
        profile: PathBuf,
        display: Option<Child>,
        capabilities: Value,
    ) -> Result<Browser, String> {
        let mut browser = Browser {
            driver,
            port,
            session: String::new(),
            profile,
            timeout: None,
            display,
        };
        browser.wait_until_ready()?;
        let reply = browser.request("POST", "/session", Some(capabilities))?;
        browser.session = reply["sessionId"]
            .as_str()
            .ok_or_else(|| format!("the WebDriver gave no session: {reply}"))?
            .to_string();
        Ok(browser)
    }

    /// Bounds how long each later command may take (a page stuck in a synchronous loop never
    /// answers a script); past it the command fails with a timeout.
    pub fn set_timeout(&mut self, timeout: Option<Duration>) {
        self.timeout = timeout;
    }

    /// Sends a Chrome DevTools Protocol command (`Profiler.start`, …) through chromedriver and
    /// returns its result.
    pub fn cdp(&self, command: &str, params: Value) -> Result<Value, String> {
        let body = json!({ "cmd": command, "params": params });
        self.request("POST", &self.path("goog/cdp/execute"), Some(body))
    }

    /// Sets the viewport's size, as a phone's (`mobile`) or a desktop's; also so that a
    /// screenshot of a tall element is not cut off.
    pub fn set_viewport(&self, width: u32, height: u32, mobile: bool) -> Result<(), String> {
        // Headless Chromium keeps its viewport whatever the window rect; the DevTools
        // override sets the viewport itself.
        let metrics = json!({
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile
        });
        self.cdp("Emulation.setDeviceMetricsOverride", metrics)
            .map(drop)
    }

    /// A PNG of the viewport.
    pub fn screenshot_viewport(&self) -> Result<Vec<u8>, String> {
        let png = self.request("GET", &self.path("screenshot"), None)?;
        base64_decode(png.as_str().ok_or("chromedriver sent no screenshot")?)
    }

    /// A PNG of the first element that matches `css`, scrolled into view.
    pub fn screenshot(&self, css: &str) -> Result<Vec<u8>, String> {
        let body = json!({ "using": "css selector", "value": css });
        let element = self.request("POST", &self.path("element"), Some(body))?;
        // The W3C key of an element reference.
        let id = element["element-6066-11e4-a52e-4f735466cecf"]
            .as_str()
            .ok_or_else(|| format!("no element matches {css}"))?
            .to_string();
        let png = self.request("GET", &self.path(&format!("element/{id}/screenshot")), None)?;
        let text = png.as_str().ok_or("chromedriver sent no screenshot")?;
        base64_decode(text)
    }

    fn path(&self, command: &str) -> String {
        format!("/session/{}/{command}", self.session)
    }

    fn wait_until_ready(&self) -> Result<(), String> {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(20) {
            if let Ok(status) = self.request("GET", "/status", None)
                && status["ready"] == json!(true)
            {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err("the WebDriver did not become ready within 20 s".into())
    }

    /// One WebDriver command; returns the reply's `value`, or its error message.
    fn request(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, String> {
        // A WebDriver error comes with an error status and its JSON body: keep the body.
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(self.timeout)
            .build()
            .into();
        let url = format!("http://127.0.0.1:{}{path}", self.port);
        let sent = match (method, body) {
            ("DELETE", _) => agent.delete(&url).call(),
            (_, None) => agent.get(&url).call(),
            (_, Some(body)) => agent
                .post(&url)
                .header("Content-Type", "application/json")
                .send(body.to_string()),
        };
        let timed_out = |e: ureq::Error| match e {
            ureq::Error::Timeout(_) => "the WebDriver command timed out".to_string(),
            e => e.to_string(),
        };
        let text = sent
            .map_err(timed_out)?
            .body_mut()
            .with_config()
            .limit(u64::MAX)
            .read_to_string()
            .map_err(timed_out)?;
        let json: Value = serde_json::from_str(&text)
            .map_err(|e| format!("chromedriver sent invalid JSON: {e}"))?;
        let value = json["value"].clone();
        // A WebDriver error names itself with a string; a script's own result may have an
        // `error` field of any kind.
        match (value.get("error"), value.get("message")) {
            (Some(Value::String(error)), Some(message)) => Err(format!("{error}: {message}")),
            _ => Ok(value),
        }
    }
}

/// A page in a browser, as the test drivers use it: open a URL, run scripts in it.
pub trait Page {
    /// Opens `url`.
    fn goto(&self, url: &str) -> Result<(), String>;

    /// Runs `script` (a function body) in the page and returns what it returns, as JSON.
    fn eval(&self, script: &str) -> Result<Value, String>;

    /// Evaluates `script` every 100 ms until it returns something other than `null`.
    fn wait_for(&self, script: &str, timeout: Duration) -> Result<Value, String> {
        let start = Instant::now();
        loop {
            let value = self.eval(script)?;
            if !value.is_null() {
                return Ok(value);
            }
            if start.elapsed() > timeout {
                return Err(format!(
                    "the page did not finish within {} s",
                    timeout.as_secs()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Page for Browser {
    fn goto(&self, url: &str) -> Result<(), String> {
        self.request("POST", &self.path("url"), Some(json!({ "url": url })))
            .map(drop)
    }

    fn eval(&self, script: &str) -> Result<Value, String> {
        let body = json!({ "script": script, "args": [] });
        self.request("POST", &self.path("execute/sync"), Some(body))
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            self.timeout = Some(self.timeout.map_or(CLOSE_TIMEOUT, |t| t.min(CLOSE_TIMEOUT)));
            let _ = self.request("DELETE", &format!("/session/{}", self.session), None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        // SIGTERM, not SIGKILL: Xvfb then removes its lock file and socket, freeing the display
        // number for the next session.
        if let Some(display) = &mut self.display {
            let _ = Command::new("kill")
                .args(["-TERM", &display.id().to_string()])
                .status();
            let _ = display.wait();
        }
        // A browser whose session could not be closed (its page stuck in a loop) outlives its
        // driver; it is found by its own profile folder and ended.
        for pid in processes_using(&self.profile) {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// The processes started with `--user-data-dir=<profile>` (Linux's /proc; none elsewhere).
fn processes_using(profile: &Path) -> Vec<u32> {
    let flag = format!("--user-data-dir={}", profile.display());
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| {
            let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            cmdline
                .split(|&b| b == 0)
                .any(|arg| arg == flag.as_bytes())
                .then_some(pid)
        })
        .collect()
}

/// Standard base64, as screenshots arrive; whitespace is skipped.
fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    use base64::Engine;
    let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact)
        .map_err(|e| format!("chromedriver sent invalid base64 ({e})"))
}

/// A port nothing listens on now.
pub fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(listener.local_addr().map_err(|e| e.to_string())?.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_base64() {
        assert_eq!(base64_decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(
            base64_decode("iVBO\nRw==").unwrap(),
            [0x89, 0x50, 0x4e, 0x47]
        );
        assert!(base64_decode("a*b").is_err());
    }
}
