//! `cargo xtask interleave [--programs N] [--seed S]`: the long run of the browser's random
//! interleaving test (`tests/web_interleave.rs`), outside CI. The count and seed reach the
//! test at build time, so each new pair rebuilds it.

use std::process::Command;

use crate::cmd::{root, run};
use crate::manifest::Manifest;
use crate::setup;

/// Programs in a long run unless `--programs` says otherwise.
const DEFAULT_PROGRAMS: u64 = 2000;

pub fn interleave(manifest: &Manifest, args: &[&str]) -> Result<(), String> {
    let mut programs = DEFAULT_PROGRAMS;
    let mut seed = now_seed();
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let value = rest.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = value
            .parse::<u64>()
            .map_err(|_| format!("{flag} needs a whole number, got {value}"))?;
        match *flag {
            "--programs" => programs = number,
            "--seed" => seed = number,
            other => return Err(format!("unknown option {other}")),
        }
    }
    setup::setup(manifest)?;
    std::fs::write(root().join("webdriver.json"), manifest.webdriver_json())
        .map_err(|e| format!("cannot write webdriver.json: {e}"))?;
    println!("interleave: {programs} programs from seed {seed} (rerun with --seed {seed})");
    run(Command::new("wasm-pack")
        .current_dir(root())
        .args(["test", "--headless", "--chrome"])
        .arg("--chromedriver")
        .arg(&manifest.chromedriver)
        .args(["--", "--test", "web_interleave", "--", "--nocapture"])
        // About 40 ms a program on SwiftShader (its reference run, then the interleaved one);
        // a wasm panic hangs the runner until this.
        .env(
            "WASM_BINDGEN_TEST_TIMEOUT",
            (120 + programs / 5).to_string(),
        )
        .env("TANDEM_INTERLEAVE_PROGRAMS", programs.to_string())
        .env("TANDEM_INTERLEAVE_SEED", seed.to_string()))?;
    println!("interleave: {programs} programs from seed {seed} passed");
    Ok(())
}

fn now_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_secs())
}
