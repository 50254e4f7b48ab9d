//! The peers' npm packages, installed into `bench/node_modules` at the versions
//! `bench/package.json` pins.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::cmd::{root, run};

/// Installs `bench/package.json`'s exact versions into `bench/node_modules` unless they are
/// all there already.
pub(crate) fn ensure_npm_packages(bench: &Path) -> Result<(), String> {
    let wanted = pinned_dependencies(bench)?;
    let missing: Vec<String> = wanted
        .iter()
        .filter(|(name, version)| {
            installed_version(bench, name).as_deref() != Some(version.as_str())
        })
        .map(|(name, version)| format!("{name}@{version}"))
        .collect();
    let names: Vec<String> = wanted.iter().map(|(n, v)| format!("{n}@{v}")).collect();
    if missing.is_empty() {
        println!("peers: npm packages present ({})", names.join(", "));
        return Ok(());
    }
    println!(
        "peers: installing {} into bench/node_modules",
        missing.join(", ")
    );
    run(Command::new("npm")
        .current_dir(root())
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(bench))?;
    match wanted
        .iter()
        .find(|(n, v)| installed_version(bench, n).as_deref() != Some(v.as_str()))
    {
        Some((name, version)) => Err(format!(
            "npm install left {name} at {:?}, not {version}",
            installed_version(bench, name)
        )),
        None => Ok(()),
    }
}

/// `dependencies` of `package.json`, which must pin exact versions.
pub(super) fn pinned_dependencies(folder: &Path) -> Result<Vec<(String, String)>, String> {
    let path = folder.join("package.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let json: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let deps = json["dependencies"]
        .as_object()
        .ok_or_else(|| format!("{}: no dependencies", path.display()))?;
    deps.iter()
        .map(|(name, version)| match version.as_str() {
            Some(v) if v.chars().all(|c| c.is_ascii_digit() || c == '.') => {
                Ok((name.clone(), v.to_string()))
            }
            _ => Err(format!(
                "{}: {name} must be pinned to an exact version, not {version}",
                path.display()
            )),
        })
        .collect()
}

pub(super) fn installed_version(folder: &Path, name: &str) -> Option<String> {
    let path = folder.join("node_modules").join(name).join("package.json");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    json["version"].as_str().map(String::from)
}

// ---- driving one runtime's page -----------------------------------------------------------
