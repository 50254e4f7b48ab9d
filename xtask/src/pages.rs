//! Test pages that use the built package as a page does (`tests/pages/`): each imports
//! `/pkg/index.js`, runs its checks and reports through `window.tandemPage` ({state, text}).
//! `cargo xtask test` opens each in headless Chromium after building the package.

use std::time::Duration;

use crate::cmd::{Check, Tally};
use crate::demo;
use crate::manifest::Manifest;

/// The pages, relative to the repository root, and what each checks.
const PAGES: [(&str, &str); 3] = [
    (
        "tests/pages/compile-memory.html",
        "a compiled function lets go of what it held: after gc, and at once on dispose()",
    ),
    (
        "tests/pages/held-memory.html",
        "memory that nothing holds (issue 29's repros, the number-operand loop)",
    ),
    (
        "tests/pages/quickstart.html",
        "the README's quick start (examples/quickstart.js) in a plain page with an import map",
    ),
];

/// Runs one page (a path relative to the repository root) and prints its report.
pub fn run_one(manifest: &Manifest, page: &str) -> Result<(), String> {
    let served = format!("./{}", page.trim_start_matches("./"));
    let text = demo::run_page(manifest, &served, "tandemPage", Duration::from_secs(300))?;
    println!("{text}");
    Ok(())
}

/// Runs every page; each counts as one test. Fails after running all if any failed.
pub fn run_all(manifest: &Manifest, tally: &mut Tally) -> Result<(), String> {
    let checks: Vec<Check> = PAGES
        .iter()
        .map(|&(page, what)| -> Check {
            // Served from the repository root: pages import /pkg/ and files of other folders.
            let served = format!("./{page}");
            let run =
                move || demo::run_page(manifest, &served, "tandemPage", Duration::from_secs(300));
            (format!("page {page}: {what}"), Box::new(run))
        })
        .collect();
    tally.run_checks("test pages", checks)
}
