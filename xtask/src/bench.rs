//! `cargo xtask bench <name>`: builds the package and runs a benchmark page from `bench/` in
//! headless Chromium, printing its table.

use std::time::Duration;

use crate::manifest::Manifest;
use crate::{demo, package, setup};

/// The benchmarks: name and page.
const BENCHES: [(&str, &str); 1] = [("split", "bench/split.html")];

pub fn bench(manifest: &Manifest, name: &str) -> Result<(), String> {
    let page = BENCHES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, page)| *page)
        .ok_or_else(|| format!("unknown benchmark \"{name}\"; there is: split"))?;
    setup::setup(manifest)?;
    package::build(manifest)?;
    let text = demo::run_page(manifest, page, "tandemBench", Duration::from_secs(600))?;
    println!("{text}");
    Ok(())
}
