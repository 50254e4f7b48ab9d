//! `wasm-pack.toml`, the project's build manifest.

use std::path::{Path, PathBuf};

use toml::Table;

/// What xtask needs from the manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    pub target: String,
    pub out_dir: String,
    pub profile: String,
    /// wasm-opt's level for release builds (`"O"`, `"Oz"`, …), or `"none"`.
    pub wasm_opt: String,
    /// The npm `binaryen` version that provides wasm-opt.
    pub binaryen_version: String,
    pub wasm_pack_version: String,
    pub apt_packages: Vec<String>,
    pub chromium: PathBuf,
    pub chromedriver: PathBuf,
    /// Firefox ESR, driven over WebDriver BiDi (`firefox.rs`).
    pub firefox: PathBuf,
    /// WebKitGTK's WebDriver, its MiniBrowser, and the X server it draws into (`webkit.rs`).
    pub webkit_driver: PathBuf,
    pub minibrowser: PathBuf,
    pub xvfb: PathBuf,
    pub browser_flags: Vec<String>,
    pub demo_address: String,
}

impl Manifest {
    /// Reads `wasm-pack.toml` in the repository root.
    pub fn load(root: &Path) -> Result<Manifest, String> {
        let path = root.join("wasm-pack.toml");
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        Manifest::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Manifest, String> {
        let table: Table = text.parse().map_err(|e| format!("invalid TOML: {e}"))?;
        Ok(Manifest {
            target: string(&table, "build", "target")?,
            out_dir: string(&table, "build", "out-dir")?,
            profile: string(&table, "build", "profile")?,
            wasm_opt: string(&table, "build", "wasm-opt")?,
            binaryen_version: string(&table, "tools", "binaryen")?,
            wasm_pack_version: string(&table, "tools", "wasm-pack")?,
            apt_packages: strings(&table, "tools", "apt")?,
            chromium: string(&table, "browser", "chromium")?.into(),
            chromedriver: string(&table, "browser", "chromedriver")?.into(),
            firefox: string(&table, "browser", "firefox")?.into(),
            webkit_driver: string(&table, "browser", "webkit-driver")?.into(),
            minibrowser: string(&table, "browser", "minibrowser")?.into(),
            xvfb: string(&table, "browser", "xvfb")?.into(),
            browser_flags: strings(&table, "browser", "flags")?,
            demo_address: string(&table, "demo", "address")?,
        })
    }

    /// `webdriver.json` for `wasm-pack test`, carrying the browser flags.
    pub fn webdriver_json(&self) -> String {
        webdriver_json(&self.browser_flags)
    }

    /// The same browser without WebGPU: the flag that turns it on in headless Chromium on
    /// Linux is left out.
    pub fn webdriver_json_without_webgpu(&self) -> String {
        webdriver_json(&self.flags_without_webgpu())
    }

    /// The browser flags less the one that turns WebGPU on in headless Chromium on Linux.
    pub fn flags_without_webgpu(&self) -> Vec<String> {
        self.browser_flags
            .iter()
            .filter(|flag| *flag != "--enable-unsafe-webgpu")
            .cloned()
            .collect()
    }
}

fn webdriver_json(flags: &[String]) -> String {
    let config = serde_json::json!({ "goog:chromeOptions": { "args": flags } });
    serde_json::to_string_pretty(&config).expect("a JSON value serializes") + "\n"
}

fn value<'a>(table: &'a Table, section: &str, key: &str) -> Result<&'a toml::Value, String> {
    table
        .get(section)
        .and_then(|s| s.get(key))
        .ok_or_else(|| format!("missing [{section}] {key}"))
}

fn string(table: &Table, section: &str, key: &str) -> Result<String, String> {
    value(table, section, key)?
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("[{section}] {key} must be a string"))
}

fn strings(table: &Table, section: &str, key: &str) -> Result<Vec<String>, String> {
    let list = value(table, section, key)?
        .as_array()
        .ok_or_else(|| format!("[{section}] {key} must be a list of strings"))?;
    list.iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| format!("[{section}] {key} must be a list of strings"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_manifest() -> Manifest {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        Manifest::load(root).unwrap()
    }

    #[test]
    fn reads_the_repository_manifest() {
        let m = repo_manifest();
        assert_eq!(m.out_dir, "pkg");
        assert_eq!(m.target, "web");
        assert!(
            m.browser_flags
                .contains(&"--enable-unsafe-webgpu".to_string())
        );
        assert!(m.apt_packages.contains(&"mesa-vulkan-drivers".to_string()));
    }

    #[test]
    fn committed_webdriver_json_matches_the_manifest() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let committed = std::fs::read_to_string(root.join("webdriver.json")).unwrap();
        assert_eq!(committed, repo_manifest().webdriver_json());
    }

    #[test]
    fn missing_key_is_named() {
        let err = Manifest::parse("[build]\ntarget = \"web\"\n").unwrap_err();
        assert_eq!(err, "missing [build] out-dir");
    }
}
