//! The threaded build: the crate compiled with wasm atomics and shared memory, for pages that
//! are cross-origin isolated. Rust's standard library is shipped compiled without atomics, so
//! the build rebuilds it (`-Z build-std`), which needs a nightly compiler and its `rust-src`.
//! The nightly is pinned here, so that every machine builds the same module; `setup` installs
//! it beside the stable toolchain that builds everything else.

use std::process::Command;

use crate::cmd::{output, root, run};

/// The pinned nightly (rustc 1.97.0-nightly e50aa6fba 2026-05-19).
pub const NIGHTLY: &str = "nightly-2026-05-20";

/// The linker's and compiler's flags: atomics and bulk memory (which shared memory needs),
/// SIMD as in the single-threaded build, memory imported (the pool's workers are given the
/// page's) and shared, up to 4 GiB like the single-threaded build's, and the thread-local
/// storage symbols wasm-bindgen's thread start-up calls.
const RUSTFLAGS: &str = "-C target-feature=+atomics,+bulk-memory,+mutable-globals,+simd128 \
     -C link-arg=--shared-memory -C link-arg=--max-memory=4294967296 \
     -C link-arg=--import-memory -C link-arg=--export=__wasm_init_tls \
     -C link-arg=--export=__tls_size -C link-arg=--export=__tls_align \
     -C link-arg=--export=__tls_base";

/// Where the threaded build's artifacts go: apart from the single-threaded build's, whose
/// standard library and flags differ, so neither rebuilds the other.
pub fn target_dir() -> std::path::PathBuf {
    root().join("target/threads")
}

/// Makes `command` (a cargo or wasm-pack invocation) build the threaded module.
pub fn threaded(command: &mut Command) -> &mut Command {
    command
        .env("RUSTUP_TOOLCHAIN", NIGHTLY)
        .env("RUSTFLAGS", RUSTFLAGS)
        .env("CARGO_UNSTABLE_BUILD_STD", "std,panic_abort")
        .env("CARGO_TARGET_DIR", target_dir())
}

/// [`threaded`] with relaxed SIMD too (`relaxed.rs`), in a target folder of its own.
pub fn threaded_relaxed(command: &mut Command) -> &mut Command {
    threaded(command)
        .env(
            "RUSTFLAGS",
            RUSTFLAGS.replacen("+simd128", "+simd128,+relaxed-simd", 1),
        )
        .env("CARGO_TARGET_DIR", relaxed_target_dir())
}

/// Where [`threaded_relaxed`] builds.
pub fn relaxed_target_dir() -> std::path::PathBuf {
    root().join("target/threads-relaxed")
}

/// Installs the pinned nightly with `rust-src` and the wasm target; returns whether anything
/// was installed (about 10 s of download).
pub fn ensure_nightly() -> Result<bool, String> {
    let ready = output(
        Command::new("rustup").args(["run", NIGHTLY, "rustc", "--print", "sysroot"]),
    )
    .map(|sysroot| {
        let sysroot = std::path::Path::new(sysroot.trim());
        sysroot.join("lib/rustlib/src/rust/library").exists()
            && sysroot.join("lib/rustlib/wasm32-unknown-unknown").exists()
    });
    if ready == Some(true) {
        return Ok(false);
    }
    println!("setup: installing the {NIGHTLY} toolchain for the threaded build");
    run(Command::new("rustup").args([
        "toolchain",
        "install",
        NIGHTLY,
        "--profile",
        "minimal",
        "--component",
        "rust-src",
        "--target",
        "wasm32-unknown-unknown",
    ]))?;
    Ok(true)
}
