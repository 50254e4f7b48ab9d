//! `cargo xtask build`: the npm package, built by wasm-pack into the manifest's out-dir.

use std::process::Command;

use crate::cmd::{root, run};
use crate::manifest::Manifest;

/// `wasm-pack build` with the manifest's target, out-dir and profile.
pub fn build(manifest: &Manifest) -> Result<(), String> {
    let profile_flag = match manifest.profile.as_str() {
        "release" => "--release",
        "dev" => "--dev",
        "profiling" => "--profiling",
        other => {
            return Err(format!(
                "wasm-pack.toml: unknown [build] profile \"{other}\""
            ));
        }
    };
    run(Command::new("wasm-pack")
        .current_dir(root())
        .args([
            "build",
            "--target",
            &manifest.target,
            "--out-dir",
            &manifest.out_dir,
        ])
        .arg(profile_flag))
}
