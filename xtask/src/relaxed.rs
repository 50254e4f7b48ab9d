//! The relaxed-SIMD variant of each build: the same crate compiled with wasm's relaxed SIMD
//! as well, whose `f32x4.relaxed_madd` is one fused multiply-add where the processor has one
//! (the CPU stream's product tiles run at about 1.3-1.4 times the speed). A browser without
//! relaxed SIMD rejects such a module outright, so the package ships both variants and
//! `index.js` picks one by validating a probe. Both variants have the same exports and
//! imports, so they share one glue (`tandem.js`, `tandem_threaded.js`); the build checks that
//! the glue wasm-bindgen writes for the relaxed module is that one, byte for byte.

use std::path::Path;
use std::process::Command;

use crate::cmd::root;
use crate::manifest::Manifest;

/// The relaxed variants: (glue they share, the variant's module).
pub const MODULES: [(&str, &str); 2] = [
    ("tandem.js", "tandem_relaxed_bg.wasm"),
    ("tandem_threaded.js", "tandem_threaded_relaxed_bg.wasm"),
];

/// The single-threaded build's flags (`.cargo/config.toml`'s) with relaxed SIMD added.
const SINGLE_RUSTFLAGS: &str = "-C target-feature=+simd128,+relaxed-simd";

/// Builds both relaxed variants into `out`, beside the glue the plain builds wrote there.
pub fn build(manifest: &Manifest, out: &Path) -> Result<(), String> {
    variant(manifest, single, &single_target_dir(), MODULES[0], out)?;
    let dir = crate::threads::relaxed_target_dir();
    variant(
        manifest,
        crate::threads::threaded_relaxed,
        &dir,
        MODULES[1],
        out,
    )
}

/// Makes `cargo` build the single-threaded variant.
pub fn single(cargo: &mut Command) -> &mut Command {
    cargo.env("RUSTFLAGS", SINGLE_RUSTFLAGS)
}

/// Where [`single`] builds.
pub fn single_target_dir() -> std::path::PathBuf {
    root().join("target/relaxed")
}

/// Builds the variant into `target_dir` and binds it in a folder of its own, under its plain
/// build's out-name (the module's imports are named after it); keeps the module as `module`
/// in `out` once its glue is found to be `glue` in `out`.
fn variant(
    manifest: &Manifest,
    configure: impl FnOnce(&mut Command) -> &mut Command,
    target_dir: &Path,
    (glue, module): (&str, &str),
    out: &Path,
) -> Result<(), String> {
    let (scratch, name) = (target_dir.join("glue"), glue.trim_end_matches(".js"));
    crate::modules::build_and_bind(manifest, configure, target_dir, name, &scratch)?;
    if read(&scratch.join(glue))? != read(&out.join(glue))? {
        return Err(format!(
            "the glue wasm-bindgen wrote for {module} is not {glue}: the relaxed variant \
             cannot share it (do the builds' exports differ?)"
        ));
    }
    std::fs::copy(scratch.join(format!("{name}_bg.wasm")), out.join(module))
        .map_err(|e| format!("cannot copy {module}: {e}"))?;
    Ok(())
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}
