//! How each of the package's wasm modules is compiled (`cargo build` of the library for wasm32
//! with its build's flags, in a target folder of its own) and bound (wasm-bindgen writes its
//! glue), and the four release builds run at once.

use std::path::Path;
use std::process::Command;

use crate::cmd::{root, run};
use crate::manifest::Manifest;

/// How a module's cargo build is set up: its flags (on a `cargo` command) and target folder.
type Setup = (fn(&mut Command) -> &mut Command, std::path::PathBuf);

/// Compiles the four release modules side by side, before each is built and bound in turn
/// (whose cargo then has nothing left to do). A build ends in a link-time optimization on one
/// core: one build took 95 s at 134 % of a core here, two at once 144 s for both (against 190
/// one after the other). Each build's output is shown only if it fails.
pub fn compile_at_once(manifest: &Manifest) -> Result<(), String> {
    let start = std::time::Instant::now();
    let builds: [Setup; 4] = [
        (|cargo| cargo, root().join("target")),
        (crate::threads::threaded, crate::threads::target_dir()),
        (crate::relaxed::single, crate::relaxed::single_target_dir()),
        (
            crate::threads::threaded_relaxed,
            crate::threads::relaxed_target_dir(),
        ),
    ];
    let outputs: Vec<_> = std::thread::scope(|scope| {
        let running: Vec<_> = builds
            .iter()
            .map(|(configure, dir)| {
                let mut cargo = cargo_build(manifest, *configure, dir);
                scope.spawn(move || cargo.output())
            })
            .collect();
        running.into_iter().map(|h| h.join()).collect()
    });
    for output in outputs {
        let output = output
            .map_err(|_| "a build's thread panicked".to_string())?
            .map_err(|e| format!("could not start cargo: {e}"))?;
        if !output.status.success() {
            eprint!("{}", String::from_utf8_lossy(&output.stderr));
            return Err(format!("a module's cargo build failed ({})", output.status));
        }
    }
    println!(
        "build: the four modules compiled side by side in {:.0} s",
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `cargo build` of the library for wasm32 in the manifest's profile, with the flags
/// `configure` sets, into `target_dir`.
fn cargo_build(
    manifest: &Manifest,
    configure: impl FnOnce(&mut Command) -> &mut Command,
    target_dir: &Path,
) -> Command {
    let mut cargo = Command::new("cargo");
    cargo.current_dir(root()).args([
        "build",
        "--lib",
        "--package",
        "tandem",
        "--target",
        "wasm32-unknown-unknown",
    ]);
    if profile_folder(manifest) == "release" {
        cargo.arg("--release");
    }
    configure(&mut cargo).env("CARGO_TARGET_DIR", target_dir);
    cargo
}

/// [`cargo_build`], then wasm-bindgen (the one wasm-pack uses) of its module into `out_dir` as
/// `{out_name}.js` and `{out_name}_bg.wasm`.
pub fn build_and_bind(
    manifest: &Manifest,
    configure: impl FnOnce(&mut Command) -> &mut Command,
    target_dir: &Path,
    out_name: &str,
    out_dir: &Path,
) -> Result<(), String> {
    run(&mut cargo_build(manifest, configure, target_dir))?;
    let module = target_dir
        .join("wasm32-unknown-unknown")
        .join(profile_folder(manifest))
        .join("tandem.wasm");
    run(Command::new("wasm-bindgen")
        .args(["--target", &manifest.target, "--no-typescript"])
        .args(["--out-name", out_name, "--out-dir"])
        .arg(out_dir)
        .arg(module))
}

/// The folder of cargo's output for the manifest's profile: `debug` for `dev`, else `release`
/// (`profiling` is a release build too).
fn profile_folder(manifest: &Manifest) -> &'static str {
    if manifest.profile == "dev" {
        "debug"
    } else {
        "release"
    }
}
