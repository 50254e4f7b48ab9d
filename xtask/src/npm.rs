//! The npm package as a user gets it, checked by `cargo xtask test` after the package is built:
//! `npm pack` ships exactly the package's files; its types declare exactly its exports; and the
//! example app (`examples/vite-app/`), which installs the package from `pkg/`, type-checks
//! against its types, builds with Vite and with webpack 5, and runs in headless Chromium.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::cmd::{Check, Tally, describe, root, run};
use crate::manifest::Manifest;
use crate::{demo, package};

/// The example app, relative to the repository root.
const EXAMPLE: &str = "examples/vite-app";

/// Runs every check; each counts as one test. Fails after running all if any failed.
pub fn check(manifest: &Manifest, tally: &mut Tally) -> Result<(), String> {
    let out = root().join(&manifest.out_dir);
    let checks: Vec<Check> = vec![
        (
            "npm pack ships the package's files".into(),
            Box::new(|| check_pack(&out)),
        ),
        (
            "index.d.ts types index.js's exports".into(),
            Box::new(|| check_exports(&out)),
        ),
        (
            "a release module has no name section; its glue returns values directly".into(),
            Box::new(|| check_module(manifest, &out)),
        ),
        (
            "docs/reference.md is generated from index.d.ts".into(),
            Box::new(check_reference),
        ),
        (
            "the docs' code blocks type-check against index.d.ts".into(),
            Box::new(check_code_blocks),
        ),
        (
            "the example type-checks and builds".into(),
            Box::new(build_example),
        ),
        (
            "the Vite build runs".into(),
            Box::new(|| run_example(manifest, "dist")),
        ),
        (
            "the webpack build runs".into(),
            Box::new(|| run_example(manifest, "dist-webpack")),
        ),
        (
            "Vite's dev server runs it, the package installed from its tarball".into(),
            Box::new(|| vite_dev(manifest, &out)),
        ),
    ];
    tally.run_checks("package checks", checks)
}

/// `npm pack --dry-run`: the tarball holds exactly [`package::FILES`].
fn check_pack(out: &Path) -> Result<String, String> {
    let text = output(npm().current_dir(out).args(["pack", "--dry-run", "--json"]))?;
    let report: Value = serde_json::from_str(&text).map_err(|e| format!("npm pack: {e}"))?;
    let tarball = &report[0];
    let mut files: Vec<&str> = tarball["files"]
        .as_array()
        .ok_or("npm pack listed no files")?
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect();
    files.sort_unstable();
    let mut expected = package::FILES.to_vec();
    expected.sort_unstable();
    if files != expected {
        return Err(format!("the tarball holds {files:?}, not {expected:?}"));
    }
    Ok(format!(
        "{} ({} files, {} bytes packed, {} unpacked)",
        tarball["filename"].as_str().unwrap_or("?"),
        files.len(),
        tarball["size"],
        tarball["unpackedSize"]
    ))
}

/// A release module without its name section, whose glue wasm-bindgen wrote for multi-value
/// returns: a glue that passes results through the stack (`__wbindgen_add_to_stack_pointer`)
/// means the module lost its `target_features` section before wasm-bindgen read it.
fn check_module(manifest: &Manifest, out: &Path) -> Result<String, String> {
    if manifest.profile != "release" {
        return Ok(format!("a {} build: not checked", manifest.profile));
    }
    let mut sizes = Vec::new();
    for (glue_file, module) in package::MODULES {
        let wasm = std::fs::read(out.join(module)).map_err(|e| e.to_string())?;
        let sections = package::custom_sections(&wasm)?;
        if sections.iter().any(|s| s == "name") {
            return Err(format!("{module} keeps its name section ({sections:?})"));
        }
        let glue = std::fs::read_to_string(out.join(glue_file)).map_err(|e| e.to_string())?;
        let return_areas = glue.matches("__wbindgen_add_to_stack_pointer").count();
        if return_areas > 0 {
            return Err(format!(
                "{glue_file} passes results through the stack {return_areas} times: \
                 wasm-bindgen did not see the module's target_features"
            ));
        }
        sizes.push(format!(
            "{module}: {} bytes, custom sections {sections:?}; {glue_file}: {} bytes",
            wasm.len(),
            glue.len()
        ));
    }
    Ok(sizes.join("; "))
}

/// `tests/package/exports.mjs`: every export typed, every type exported, `any` at most 10 times.
fn check_exports(out: &Path) -> Result<String, String> {
    output(
        Command::new("node")
            .current_dir(root())
            .arg("tests/package/exports.mjs")
            .arg(out),
    )
}

/// `docs/tools/reference.mjs` run again gives `docs/reference.md` unchanged.
fn check_reference() -> Result<String, String> {
    let tools = root().join("docs/tools");
    run(npm()
        .current_dir(&tools)
        .args(["install", "--no-audit", "--no-fund"]))?;
    let fresh = std::env::temp_dir().join("tandem-reference.md");
    output(
        Command::new("node")
            .current_dir(&tools)
            .arg("reference.mjs")
            .arg(root().join("npm/index.d.ts"))
            .arg(&fresh),
    )?;
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
    if read(&fresh)? != read(&root().join("docs/reference.md"))? {
        return Err(
            "docs/reference.md is out of date: run `npm run reference` in docs/tools".into(),
        );
    }
    Ok("docs/reference.md matches npm/index.d.ts".into())
}

/// `docs/tools/check-blocks.mjs`: the JS and TS blocks of the README, the npm README, `docs/`
/// and the types' own examples type-check against `npm/index.d.ts` (after `check_reference`,
/// which installs the tools).
fn check_code_blocks() -> Result<String, String> {
    output(
        Command::new("node")
            .current_dir(root().join("docs/tools"))
            .arg("check-blocks.mjs")
            .arg(root()),
    )
}

/// Installs the example's dependencies (the package itself from `pkg/`), type-checks it with
/// `tsc --noEmit`, and builds it with Vite and with webpack.
fn build_example() -> Result<String, String> {
    let dir = root().join(EXAMPLE);
    run(npm()
        .current_dir(&dir)
        .args(["install", "--no-audit", "--no-fund"]))?;
    for script in ["typecheck", "build", "build:webpack"] {
        run(npm().current_dir(&dir).args(["run", "--silent", script]))?;
    }
    Ok("tsc --noEmit, vite build, webpack: done".into())
}

/// Opens the example's build in `folder` in headless Chromium and checks what it reports.
fn run_example(manifest: &Manifest, folder: &str) -> Result<String, String> {
    let page = format!("./{EXAMPLE}/{folder}/index.html");
    let text = demo::run_page(manifest, &page, "tandemExample", Duration::from_secs(120))?;
    if !text.contains("row sums: 1.0000 1.0000 1.0000 1.0000") {
        return Err(format!("the example reported:\n{text}"));
    }
    Ok(text)
}

/// The example under Vite's dev server, with the package installed as users install it: from
/// its tarball, into `node_modules` (where the dev server pre-bundles dependencies, unlike the
/// linked `pkg/` of the builds above).
fn vite_dev(manifest: &Manifest, out: &Path) -> Result<String, String> {
    let work = root().join("target/npm/vite-dev");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(work.join("src")).map_err(|e| e.to_string())?;
    let tarball = output(
        npm()
            .current_dir(out)
            .arg("pack")
            .arg("--pack-destination")
            .arg(&work),
    )?;
    let example = root().join(EXAMPLE);
    for file in ["index.html", "vite.config.js", "src/main.ts"] {
        std::fs::copy(example.join(file), work.join(file)).map_err(|e| format!("{file}: {e}"))?;
    }
    let manifest_text =
        std::fs::read_to_string(example.join("package.json")).map_err(|e| e.to_string())?;
    let mut package: Value = serde_json::from_str(&manifest_text).map_err(|e| e.to_string())?;
    package["dependencies"]["tandem"] =
        Value::from(format!("file:{}", tarball.lines().last().unwrap_or("")));
    std::fs::write(work.join("package.json"), package.to_string()).map_err(|e| e.to_string())?;
    run(npm()
        .current_dir(&work)
        .args(["install", "--no-audit", "--no-fund", "--silent"]))?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| e.to_string())?
        .port();
    let server = Command::new("node")
        .current_dir(&work)
        .args(["node_modules/vite/bin/vite.js", "--strictPort", "--port"])
        .arg(port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("could not start Vite's dev server: {e}"))?;
    let _server = Stop(server);
    let address = format!("127.0.0.1:{port}");
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(&address).is_err() {
        if started.elapsed() > Duration::from_secs(60) {
            return Err("Vite's dev server did not start in 60 s".into());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    use crate::webdriver::Page;
    let browser = crate::webdriver::Browser::launch(manifest)?;
    browser.goto(&format!("http://{address}/"))?;
    let script = "const r = window.tandemExample; return r && r.state !== 'running' ? r : null;";
    let result = browser.wait_for(script, Duration::from_secs(120))?;
    let text = result["text"].as_str().unwrap_or_default().to_string();
    if result["state"] != "done" || !text.contains("row sums: 1.0000 1.0000 1.0000 1.0000") {
        return Err(format!(
            "under Vite's dev server the example reported:\n{text}"
        ));
    }
    Ok(text)
}

/// Stops the child process when dropped.
struct Stop(std::process::Child);

impl Drop for Stop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn npm() -> Command {
    Command::new("npm")
}

/// The command's stdout; an error has its stderr.
fn output(cmd: &mut Command) -> Result<String, String> {
    let out = cmd
        .output()
        .map_err(|e| format!("could not start `{}`: {e}", describe(cmd)))?;
    if !out.status.success() {
        return Err(format!(
            "`{}` failed ({}): {}{}",
            describe(cmd),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[cfg(test)]
mod tests {
    use crate::cmd::root;

    fn read(path: &str) -> String {
        std::fs::read_to_string(root().join(path)).unwrap()
    }

    /// The first ```js block of `text` that imports the package.
    fn quick_start(text: &str) -> Option<&str> {
        text.split("```js\n")
            .skip(1)
            .filter_map(|rest| rest.split("```").next())
            .find(|block| block.contains("from \"tandem\""))
    }

    #[test]
    fn the_readmes_quick_start_is_the_tested_file() {
        let file = read("examples/quickstart.js");
        for readme in ["README.md", "npm/README.md"] {
            let text = read(readme);
            let block = quick_start(&text).unwrap_or_else(|| panic!("{readme} has no quick start"));
            assert_eq!(
                block.trim_end(),
                file.trim_end(),
                "{readme}'s quick start differs from examples/quickstart.js, which the test \
                 page tests/pages/quickstart.html runs"
            );
        }
    }
}
