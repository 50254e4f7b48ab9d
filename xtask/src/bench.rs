//! `cargo xtask bench <name>`: builds the package and runs a benchmark page from `bench/` in
//! headless Chromium, printing its table.

use std::time::Duration;

use crate::manifest::Manifest;
use crate::{demo, package, setup};

/// The benchmarks: name and page.
const BENCHES: [(&str, &str); 2] = [
    ("split", "bench/split.html"),
    ("batching", "bench/batching.html"),
];

pub fn bench(manifest: &Manifest, name: &str) -> Result<(), String> {
    let page = BENCHES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, page)| *page)
        .ok_or_else(|| {
            let names: Vec<&str> = BENCHES.iter().map(|(n, _)| *n).collect();
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
