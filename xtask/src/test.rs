//! `cargo xtask test`: every check CI runs, in order of cost: formatting, lints for both targets,
//! native tests on Vulkan (lavapipe), browser tests in headless Chromium, then the test pages
//! and the demo page driven end to end from the built package.

use std::process::Command;

use crate::cmd::{Tally, root, run, run_tests};
use crate::manifest::Manifest;
use crate::{demo, npm, package, pages, setup};

pub fn test(manifest: &Manifest) -> Result<(), String> {
    setup::setup(manifest)?;
    let mut tally = Tally::default();
    let outcome = run_all(manifest, &mut tally);
    // The closing line CI reads, printed whether or not a step failed.
    println!("tests: {} passed, {} failed", tally.passed, tally.failed);
    outcome
}

/// `cargo xtask test package`: only the steps that use the built package (the npm checks, the
/// example app, the test pages), for work on the package.
pub fn package_only(manifest: &Manifest) -> Result<(), String> {
    setup::setup(manifest)?;
    let mut tally = Tally::default();
    let outcome = package::build(manifest).and_then(|()| package_steps(manifest, &mut tally));
    println!("tests: {} passed, {} failed", tally.passed, tally.failed);
    outcome
}

fn package_steps(manifest: &Manifest, tally: &mut Tally) -> Result<(), String> {
    step("the npm package: its files, its types, the example app under Vite and webpack");
    npm::check(manifest, tally)?;
    step("test pages (built package, headless Chromium)");
    pages::run_all(manifest, tally)
}

fn run_all(manifest: &Manifest, tally: &mut Tally) -> Result<(), String> {
    step("format");
    run(cargo().args(["fmt", "--all", "--check"]))?;
    step("clippy (native)");
    run(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    step("clippy (wasm32)");
    run(cargo()
        .args([
            "clippy",
            "--package",
            "tandem",
            "--all-targets",
            "--target",
            "wasm32-unknown-unknown",
        ])
        .args(["--", "-D", "warnings"]))?;
    step("native tests (wgpu on Vulkan)");
    run_tests(
        cargo()
            .args(["test", "--workspace"])
            .env("XDG_RUNTIME_DIR", runtime_dir()),
        tally,
    )?;
    for build in [Build::Single, Build::Threaded] {
        step(&format!(
            "browser tests, {} (headless Chromium, WebGPU)",
            build.what()
        ));
        write_webdriver_json(&manifest.webdriver_json())?;
        run_browser_tests(&mut build.wasm_pack_test(), tally)?;
        step(&format!(
            "browser tests without WebGPU, {} (headless Chromium, no WebGPU flag)",
            build.what()
        ));
        write_webdriver_json(&manifest.webdriver_json_without_webgpu())?;
        let outcome = run_browser_tests(
            build
                .wasm_pack_test()
                .args(["--test", "web_no_gpu"])
                .env("TANDEM_EXPECT_NO_WEBGPU", "1"),
            tally,
        );
        write_webdriver_json(&manifest.webdriver_json())?;
        outcome?;
    }
    package::build(manifest)?;
    package_steps(manifest, tally)?;
    step("demo page (built package, headless Chromium)");
    let demo = demo::run_demo(manifest);
    count(tally, &demo);
    step("training page (built package, headless Chromium)");
    let training = demo::run_training(manifest);
    count(tally, &training);
    demo.and(training).map(drop)
}

/// Tallies a page's drive and prints its report (or nothing: the error is returned).
fn count(tally: &mut Tally, outcome: &Result<String, String>) {
    match outcome {
        Ok(text) => {
            println!("{text}");
            tally.passed += 1;
        }
        Err(e) => {
            eprintln!("{e}");
            tally.failed += 1;
        }
    }
}

/// Which build of the module a browser suite runs.
#[derive(Clone, Copy)]
enum Build {
    /// The single-threaded build, on a page that is not cross-origin isolated.
    Single,
    /// The threaded build (`threads.rs`) with relaxed SIMD (`relaxed.rs`), on an isolated page
    /// (the runner's default).
    Threaded,
}

impl Build {
    fn what(self) -> &'static str {
        match self {
            Build::Single => "single-threaded build, page not isolated",
            Build::Threaded => "threaded build with relaxed SIMD, isolated page",
        }
    }

    fn wasm_pack_test(self) -> Command {
        let mut command = wasm_pack_test();
        match self {
            Build::Single => command.env("WASM_BINDGEN_TEST_NO_ORIGIN_ISOLATION", "1"),
            // The variant a Chromium page loads when isolated, so that the fused kernels
            // of relaxed SIMD meet every browser test.
            Build::Threaded => crate::threads::threaded_relaxed(&mut command),
        };
        command
    }
}

/// `wasm-pack test --headless --chrome`, exactly as the README tells a person to type it: the
/// runner's time limit comes from `.cargo/config.toml`'s `[env]`, chromedriver from `PATH`
/// (setup installs Debian's), the browser's flags from `webdriver.json`.
fn wasm_pack_test() -> Command {
    let mut command = Command::new("wasm-pack");
    command
        .current_dir(root())
        .args(["test", "--headless", "--chrome"]);
    command
}

/// Runs a `wasm-pack test` with its temporary files in a folder of its own, removed after
/// it: chromedriver gives each browser a profile in the temporary folder (60 to 100 MB once
/// the page has run) and leaves it behind, a gigabyte over the suite's browser runs.
fn run_browser_tests(command: &mut Command, tally: &mut Tally) -> Result<(), String> {
    let tmp = root().join("target/tmp/browser-tests");
    std::fs::create_dir_all(&tmp).map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
    let outcome = run_tests(command.env("TMPDIR", &tmp), tally);
    let _ = std::fs::remove_dir_all(&tmp);
    outcome
}

/// wasm-pack reads the browser's flags from webdriver.json in the crate's root.
fn write_webdriver_json(text: &str) -> Result<(), String> {
    std::fs::write(root().join("webdriver.json"), text)
        .map_err(|e| format!("cannot write webdriver.json: {e}"))
}

fn step(name: &str) {
    println!("\n== xtask test: {name}");
}

fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root());
    cmd
}

/// Vulkan's loader warns on every device creation when XDG_RUNTIME_DIR is unset; a private
/// folder keeps the test output readable.
fn runtime_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join("tandem-xdg-runtime");
    let _ = std::fs::create_dir_all(&dir);
    dir
}
