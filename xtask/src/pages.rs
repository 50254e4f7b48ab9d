//! Test pages that use the built package as a page does (`tests/pages/`): each imports
//! `/pkg/index.js`, runs its checks and reports through `window.tandemPage` ({state, text}).
//! `cargo xtask test` opens each in headless Chromium after building the package.

use std::time::Duration;

use crate::cmd::Tally;
use crate::demo;
use crate::manifest::Manifest;

/// The pages, relative to the repository root, and what each checks.
const PAGES: [(&str, &str); 2] = [
    (
        "tests/pages/held-memory.html",
        "memory that nothing holds (issue 29's repros, the number-operand loop)",
    ),
    (
        "tests/pages/quickstart.html",
        "the README's quick start (examples/quickstart.js) in a plain page with an import map",
    ),
];

/// Runs every page; each counts as one test. Fails after running all if any failed.
pub fn run_all(manifest: &Manifest, tally: &mut Tally) -> Result<(), String> {
    let mut failures = Vec::new();
    for (page, what) in PAGES {
        // Served from the repository root: pages import /pkg/ and files of other folders.
        let served = format!("./{page}");
        match demo::run_page(manifest, &served, "tandemPage", Duration::from_secs(300)) {
            Ok(text) => {
                println!("page {page}: {what}\n{text}");
                tally.passed += 1;
            }
            Err(err) => {
                println!("page {page} FAILED: {err}");
                tally.failed += 1;
                failures.push(page);
            }
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!("test pages failed: {}", failures.join(", ")))
    }
}
