//! `cargo xtask bench <name>`: builds the package and runs a benchmark page from `bench/` in
//! headless Chromium, printing its table. `bench peers` has its own driver (`peers.rs` and the
//! files beside it: plan, npm, drive, rounds, table, ratios, json).

use std::time::Duration;

use crate::manifest::Manifest;

mod drive;
mod format;
mod json;
mod npm;
mod peers;
mod plan;
mod ratios;
mod rounds;
mod table;
#[cfg(test)]
mod tests;

use crate::{demo, package, setup};
pub(crate) use json::write_json;
pub(crate) use npm::ensure_npm_packages;
pub use peers::peers;

/// The benchmarks: name and page.
const BENCHES: [(&str, &str); 3] = [
    ("split", "bench/split.html"),
    ("batching", "bench/batching.html"),
    ("memory", "bench/memory.html"),
];

pub fn bench(manifest: &Manifest, name: &str) -> Result<(), String> {
    let page = BENCHES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, page)| *page)
        .ok_or_else(|| {
            // `peers` has options and its own driver (peers.rs); main.rs routes it.
            let mut names: Vec<&str> = BENCHES.iter().map(|(n, _)| *n).collect();
            names.extend(["peers", "dispatch"]);
            format!(
                "unknown benchmark \"{name}\"; there are: {}",
                names.join(", ")
            )
        })?;
    setup::setup(manifest)?;
    package::build(manifest)?;
    let text = demo::run_page(manifest, page, "tandemBench", Duration::from_secs(600))?;
    println!("{text}");
    Ok(())
}
