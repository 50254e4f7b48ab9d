//! `cargo xtask setup`: installs what the build and the tests need, and only what is missing.
//! A second run installs nothing and says so in one line.

use std::path::Path;
use std::process::Command;

use crate::cmd::{output, root, run};
use crate::manifest::Manifest;

const WASM_TARGET: &str = "wasm32-unknown-unknown";

/// Installs whatever is missing.
pub fn setup(manifest: &Manifest) -> Result<(), String> {
    let bindgen_version = locked_version(&root(), "wasm-bindgen")?;
    let mut present = Vec::new();
    let mut installed = Vec::new();
    let mut note = |done: bool, what: String| {
        if done {
            installed.push(what)
        } else {
            present.push(what)
        }
    };
    note(ensure_wasm_target()?, WASM_TARGET.to_string());
    note(
        crate::threads::ensure_nightly()?,
        format!("{} with rust-src", crate::threads::NIGHTLY),
    );
    note(
        ensure_wasm_pack(&manifest.wasm_pack_version)?,
        format!("wasm-pack {}", manifest.wasm_pack_version),
    );
    note(
        ensure_wasm_bindgen(&bindgen_version)?,
        format!("wasm-bindgen-cli {bindgen_version}"),
    );
    present.push(check_node()?);
    for package in ensure_apt_packages(&manifest.apt_packages)? {
        installed.push(package);
    }
    present.extend(
        manifest
            .apt_packages
            .iter()
            .filter(|p| !installed.contains(p))
            .cloned(),
    );
    if installed.is_empty() {
        println!("setup: all tools present ({})", present.join(", "));
    } else if present.is_empty() {
        println!("setup: installed {}", installed.join(", "));
    } else {
        println!(
            "setup: installed {}; already present: {}",
            installed.join(", "),
            present.join(", ")
        );
    }
    Ok(())
}

/// The oldest Node.js the package's checks run on: Vite 7's floor.
const NODE_AT_LEAST: (u32, u32) = (20, 19);

/// Node.js and npm build and check the npm package and its example app. They come with the
/// machine (this kind's images carry Node.js 20): a missing or older one is an error that says
/// so, since no newer Node.js can be fetched here.
fn check_node() -> Result<String, String> {
    let version = output(Command::new("node").arg("--version")).ok_or(
        "setup: Node.js (node and npm) is needed to check the npm package and its example",
    )?;
    let numbers: Vec<u32> = version
        .trim_start_matches('v')
        .split('.')
        .filter_map(|n| n.parse().ok())
        .collect();
    let (major, minor) = (
        numbers.first().copied().unwrap_or(0),
        numbers.get(1).copied().unwrap_or(0),
    );
    if (major, minor) < NODE_AT_LEAST {
        return Err(format!(
            "setup: Node.js {version} is older than {}.{}, which Vite 7 needs",
            NODE_AT_LEAST.0, NODE_AT_LEAST.1
        ));
    }
    output(Command::new("npm").arg("--version")).ok_or("setup: npm is needed beside Node.js")?;
    Ok(format!("node {version}"))
}

/// Adds the wasm target; returns whether anything was installed.
fn ensure_wasm_target() -> Result<bool, String> {
    let installed = output(Command::new("rustup").args(["target", "list", "--installed"]))
        .ok_or("setup: `rustup` is needed to add the wasm32 target")?;
    if installed.lines().any(|t| t.trim() == WASM_TARGET) {
        return Ok(false);
    }
    println!("setup: adding the {WASM_TARGET} target");
    run(Command::new("rustup").args(["target", "add", WASM_TARGET]))?;
    Ok(true)
}

fn ensure_wasm_pack(version: &str) -> Result<bool, String> {
    if tool_version("wasm-pack").as_deref() == Some(version) {
        return Ok(false);
    }
    println!("setup: installing wasm-pack {version} (about 3 minutes)");
    run(Command::new("cargo").args(["install", "wasm-pack", "--locked", "--version", version]))?;
    Ok(true)
}

/// wasm-pack uses a wasm-bindgen on PATH when its version matches the crate's, and otherwise
/// tries to download one, which cannot work offline. So the exact version is installed.
fn ensure_wasm_bindgen(version: &str) -> Result<bool, String> {
    let has_runner = output(Command::new("wasm-bindgen-test-runner").arg("--version")).is_some();
    if tool_version("wasm-bindgen").as_deref() == Some(version) && has_runner {
        return Ok(false);
    }
    println!("setup: installing wasm-bindgen-cli {version} (about 3 minutes)");
    // Not --locked: the lockfile published with 0.2.130 pins a webpki-roots that was yanked.
    run(Command::new("cargo").args(["install", "wasm-bindgen-cli", "--version", version]))?;
    Ok(true)
}

/// The version a tool prints for `--version` (`wasm-pack 0.15.1` → `0.15.1`).
fn tool_version(tool: &str) -> Option<String> {
    let line = output(Command::new(tool).arg("--version"))?;
    line.split_whitespace().nth(1).map(str::to_string)
}

/// Installs the Debian packages that are missing; returns their names.
fn ensure_apt_packages(packages: &[String]) -> Result<Vec<String>, String> {
    let missing: Vec<String> = packages
        .iter()
        .filter(|p| !dpkg_installed(p))
        .cloned()
        .collect();
    if missing.is_empty() {
        return Ok(missing);
    }
    println!("setup: installing {} with apt-get", missing.join(", "));
    run(apt_get().args(["update", "-qq"]))?;
    run(apt_get()
        .args(["install", "-y", "-qq"])
        .args(&missing)
        .env("DEBIAN_FRONTEND", "noninteractive"))?;
    Ok(missing)
}

fn dpkg_installed(package: &str) -> bool {
    output(Command::new("dpkg-query").args(["-W", "-f=${Status}", package]))
        .is_some_and(|status| status == "install ok installed")
}

/// `apt-get`, through sudo when not running as root.
fn apt_get() -> Command {
    let is_root = output(Command::new("id").arg("-u")).as_deref() == Some("0");
    if is_root {
        Command::new("apt-get")
    } else {
        let mut cmd = Command::new("sudo");
        cmd.arg("apt-get");
        cmd
    }
}

/// The version of `package` that `Cargo.lock` resolved.
pub fn locked_version(root: &Path, package: &str) -> Result<String, String> {
    let path = root.join("Cargo.lock");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let lock: toml::Table = text
        .parse()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    lock.get("package")
        .and_then(|p| p.as_array())
        .into_iter()
        .flatten()
        .find(|p| p.get("name").and_then(|n| n.as_str()) == Some(package))
        .and_then(|p| p.get("version")?.as_str().map(str::to_string))
        .ok_or_else(|| format!("Cargo.lock has no package {package}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lockfile_pins_the_wasm_bindgen_of_cargo_toml() {
        let root = root();
        let locked = locked_version(&root, "wasm-bindgen").unwrap();
        let cargo_toml = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
        assert!(cargo_toml.contains(&format!("wasm-bindgen = \"={locked}\"")));
    }
}
