//! `cargo xtask build`: the npm package. wasm-pack builds the WebAssembly module and its glue
//! (`tandem.js`) into the manifest's out-dir, and `modules.rs` the threaded build and the
//! relaxed variants beside it (in a release build, the four compiled at once first); each
//! module of a release build is then optimized with wasm-opt
//! (or, without it, stripped of its name section); then the package's own files from
//! `npm/` (the entry `index.js`, its types `index.d.ts`, the npm README) are copied beside them
//! and `package.json` is written for them.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::cmd::{root, run};
use crate::manifest::Manifest;

/// What the package ships; `npm pack` must give exactly these (checked by `cargo xtask test`).
/// `tandem.js` and its modules are the single-threaded build; `tandem_threaded.js` and its
/// modules the threaded one, which `index.js` loads on a cross-origin isolated page. Each
/// build has a relaxed-SIMD variant (`relaxed.rs`) that shares its glue.
pub const FILES: [&str; 11] = [
    "LICENSE",
    "README.md",
    "index.d.ts",
    "index.js",
    "package.json",
    "tandem.js",
    "tandem_bg.wasm",
    "tandem_relaxed_bg.wasm",
    "tandem_threaded.js",
    "tandem_threaded_bg.wasm",
    "tandem_threaded_relaxed_bg.wasm",
];

/// Every module of the package with the glue that loads it.
pub const MODULES: [(&str, &str); 4] = [
    ("tandem.js", "tandem_bg.wasm"),
    ("tandem_threaded.js", "tandem_threaded_bg.wasm"),
    crate::relaxed::MODULES[0],
    crate::relaxed::MODULES[1],
];

/// The files of `npm/` copied into the package.
const OWN_FILES: [&str; 3] = ["index.js", "index.d.ts", "README.md"];

const KEYWORDS: [&str; 10] = [
    "webgpu",
    "wasm",
    "webassembly",
    "tensor",
    "ndarray",
    "array",
    "gpu",
    "mlx",
    "machine-learning",
    "memory",
];

/// `wasm-pack build` with the manifest's target, out-dir and profile, then the package's own
/// files and `package.json`.
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
    let release = manifest.profile == "release";
    let optimize = release && manifest.wasm_opt != "none";
    let mut wasm_pack = Command::new("wasm-pack");
    wasm_pack
        .current_dir(root())
        .args([
            "build",
            "--target",
            &manifest.target,
            "--out-dir",
            &manifest.out_dir,
            // The package's types are npm/index.d.ts.
            "--no-typescript",
        ])
        .arg(profile_flag);
    let out = root().join(&manifest.out_dir);
    // wasm-pack leaves files of earlier builds in place; the package is only this build's.
    if out.exists() {
        std::fs::remove_dir_all(&out)
            .map_err(|e| format!("cannot empty {}: {e}", out.display()))?;
    }
    if release {
        crate::modules::compile_at_once(manifest)?;
    }
    run(&mut wasm_pack)?;
    build_threaded(manifest, &out)?;
    crate::relaxed::build(manifest, &out)?;
    for (_, module) in MODULES {
        let wasm = out.join(module);
        if optimize {
            wasm_opt(manifest, &wasm)?;
        } else if release {
            drop_name_section(&wasm)?;
        }
    }
    assemble(&out)
}

/// The threaded build (`threads.rs`): cargo with the pinned nightly, then the same
/// wasm-bindgen as wasm-pack uses, into `out` as `tandem_threaded.js` and its module.
fn build_threaded(manifest: &Manifest, out: &Path) -> Result<(), String> {
    let target_dir = crate::threads::target_dir();
    crate::modules::build_and_bind(
        manifest,
        crate::threads::threaded,
        &target_dir,
        "tandem_threaded",
        out,
    )
}

/// Runs wasm-opt on `wasm` in place, at the manifest's level. It reads the features the module
/// uses from its `target_features` section, and drops its name section.
fn wasm_opt(manifest: &Manifest, wasm: &Path) -> Result<(), String> {
    let tool = ensure_binaryen(&manifest.binaryen_version)?;
    let before = file_size(wasm)?;
    run(Command::new("node")
        .arg(tool)
        .arg(format!("-{}", manifest.wasm_opt))
        .arg(wasm)
        .arg("-o")
        .arg(wasm))?;
    println!(
        "build: wasm-opt -{}: {before} -> {} bytes",
        manifest.wasm_opt,
        file_size(wasm)?
    );
    Ok(())
}

/// Rewrites `wasm` without its `name` section, which only names functions for debuggers (a
/// fifth of the module). Done after wasm-bindgen rather than by rustc's `strip = "symbols"`,
/// which also drops the `target_features` section: without it wasm-bindgen cannot see that
/// the module returns multiple values, and every call's glue goes through a return area.
fn drop_name_section(wasm: &Path) -> Result<(), String> {
    let bytes = std::fs::read(wasm).map_err(|e| format!("{}: {e}", wasm.display()))?;
    let kept =
        without_custom_section(&bytes, "name").map_err(|e| format!("{}: {e}", wasm.display()))?;
    std::fs::write(wasm, &kept).map_err(|e| format!("{}: {e}", wasm.display()))?;
    println!(
        "build: name section dropped: {} -> {} bytes",
        bytes.len(),
        kept.len()
    );
    Ok(())
}

/// The names of the module's custom sections, in order.
pub fn custom_sections(module: &[u8]) -> Result<Vec<String>, String> {
    use wasmparser::{Parser, Payload};
    let mut names = Vec::new();
    for payload in Parser::new(0).parse_all(module) {
        if let Payload::CustomSection(c) = payload.map_err(|e| e.to_string())? {
            names.push(c.name().to_string());
        }
    }
    Ok(names)
}

/// The module's bytes without the custom sections called `name`; every other byte is kept
/// as it was, in order.
fn without_custom_section(module: &[u8], name: &str) -> Result<Vec<u8>, String> {
    use wasmparser::{Parser, Payload};
    let mut kept = Vec::with_capacity(module.len());
    let mut section_start = 0;
    for payload in Parser::new(0).parse_all(module) {
        let payload = payload.map_err(|e| e.to_string())?;
        if let Payload::Version { range, .. } = &payload {
            kept.extend_from_slice(&module[range.clone()]);
            section_start = range.end;
            continue;
        }
        let Some((_, range)) = payload.as_section() else {
            continue;
        };
        let dropped = matches!(&payload, Payload::CustomSection(c) if c.name() == name);
        if !dropped {
            kept.extend_from_slice(&module[section_start..range.end]);
        }
        section_start = range.end;
    }
    Ok(kept)
}

/// wasm-opt of the npm package `binaryen` at `version` (Debian's is too old for the module's
/// features, and wasm-pack cannot download one here), installed into `target/` once.
fn ensure_binaryen(version: &str) -> Result<std::path::PathBuf, String> {
    let prefix = root().join("target/binaryen").join(version);
    let tool = prefix.join("node_modules/binaryen/bin/wasm-opt");
    if !tool.exists() {
        println!("build: installing binaryen {version} (wasm-opt) from npm");
        std::fs::create_dir_all(&prefix).map_err(|e| e.to_string())?;
        run(Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--silent", "--prefix"])
            .arg(&prefix)
            .arg(format!("binaryen@{version}")))?;
    }
    Ok(tool)
}

fn file_size(path: &Path) -> Result<u64, String> {
    std::fs::metadata(path)
        .map(|m| m.len())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Copies `npm/`'s files into `out` and rewrites its `package.json`.
fn assemble(out: &Path) -> Result<(), String> {
    for file in OWN_FILES {
        let from = root().join("npm").join(file);
        std::fs::copy(&from, out.join(file))
            .map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
    }
    let path = out.join("package.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let generated: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let package = package_json(&generated);
    let text = serde_json::to_string_pretty(&package).map_err(|e| e.to_string())? + "\n";
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The package's manifest: name, version, description and license as wasm-pack took them from
/// Cargo.toml, and the entry, types, exports and files of this package. Nothing that the
/// project does not have (no repository or homepage URL).
fn package_json(generated: &Value) -> Value {
    let field = |key: &str| generated.get(key).cloned().unwrap_or(Value::Null);
    json!({
        "name": field("name"),
        "version": field("version"),
        "description": field("description"),
        "license": field("license"),
        "keywords": KEYWORDS,
        "type": "module",
        "main": "./index.js",
        "module": "./index.js",
        "types": "./index.d.ts",
        "exports": {
            ".": {
                "types": "./index.d.ts",
                "default": "./index.js"
            },
            "./tandem_bg.wasm": "./tandem_bg.wasm",
            "./tandem_relaxed_bg.wasm": "./tandem_relaxed_bg.wasm",
            "./tandem_threaded_bg.wasm": "./tandem_threaded_bg.wasm",
            "./tandem_threaded_relaxed_bg.wasm": "./tandem_threaded_relaxed_bg.wasm",
            "./package.json": "./package.json"
        },
        "files": FILES.iter().filter(|f| **f != "package.json").collect::<Vec<_>>(),
        "sideEffects": false
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_names_the_entry_its_types_and_no_invented_url() {
        let generated = json!({
            "name": "tandem", "version": "0.1.0", "description": "d", "license": "MIT",
            "repository": {"type": "git", "url": "https://example.invalid/tandem"},
            "main": "tandem.js", "sideEffects": ["./snippets/*"]
        });
        let package = package_json(&generated);
        assert_eq!(package["name"], "tandem");
        assert_eq!(package["version"], "0.1.0");
        assert_eq!(package["type"], "module");
        assert_eq!(package["exports"]["."]["types"], "./index.d.ts");
        assert_eq!(package["exports"]["."]["default"], "./index.js");
        assert!(package.get("repository").is_none());
        assert_eq!(package["sideEffects"], false);
        let files = package["files"].as_array().unwrap();
        assert!(files.iter().any(|f| f == "tandem_bg.wasm"));
        assert!(!files.iter().any(|f| f == "tandem.d.ts"));
    }

    /// A custom section: id 0, its size, then its name and data.
    fn custom(name: &str, data: &[u8]) -> Vec<u8> {
        let mut body = vec![name.len() as u8];
        body.extend_from_slice(name.as_bytes());
        body.extend_from_slice(data);
        let mut section = vec![0, body.len() as u8];
        section.extend(body);
        section
    }

    #[test]
    fn only_the_name_section_is_dropped() {
        let header = b"\0asm\x01\0\0\0".to_vec();
        let types = vec![1, 1, 0]; // a type section with no types
        let features = custom(
            "target_features",
            &[&[1, b'+', 10], &b"multivalue"[..]].concat(),
        );
        let names = custom("name", &[0, 2, 1, b'f']);
        let module = [
            header.clone(),
            types.clone(),
            names.clone(),
            features.clone(),
        ]
        .concat();
        let kept = without_custom_section(&module, "name").unwrap();
        assert_eq!(kept, [header, types, features].concat());
        assert_eq!(
            custom_sections(&module).unwrap(),
            ["name", "target_features"]
        );
        assert!(without_custom_section(b"not wasm", "name").is_err());
    }
}
