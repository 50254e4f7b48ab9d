//! Test pages that use the built package as a page does (`tests/pages/`): each imports
//! `../pkg/tandem.js`, runs its checks and reports through `window.tandemPage` ({state,
//! text}). `cargo xtask test` opens each in headless Chromium after building the package.

use std::time::Duration;

use crate::cmd::Tally;
use crate::demo;
use crate::manifest::Manifest;

/// The pages, relative to the repository root, and what each checks.
const PAGES: [(&str, &str); 1] = [(
    "tests/pages/held-memory.html",
    "memory that nothing holds (issue 29's repros, the number-operand loop)",
)];

/// Runs every page; each counts as one test. Fails after running all if any failed.
pub fn run_all(manifest: &Manifest, tally: &mut Tally) -> Result<(), String> {
    let mut failures = Vec::new();
    for (page, what) in PAGES {
        match demo::run_page(manifest, page, "tandemPage", Duration::from_secs(300)) {
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
