//! Test pages that use the built package as a page does (`tests/pages/`): each imports
//! `/pkg/index.js`, runs its checks and reports through `window.tandemPage` ({state, text}).
//! `cargo xtask test` opens each in headless Chromium after building the package, on a cross-origin
//! isolated page (the threaded build) and on one that is not (the single-threaded build), and
//! those that need nothing Chromium-only in Firefox ESR and WebKitGTK as well.

use std::time::Duration;

use crate::cmd::{Check, Tally};
use crate::demo::{self, Other};
use crate::manifest::Manifest;

/// The pages, relative to the repository root, and what each checks.
const PAGES: [(&str, &str); 5] = [
    (
        "tests/pages/compile-memory.html",
        "a compiled function, an optimizer and a gradient step let go of what they held: after \
         gc, and at once on dispose()",
    ),
    (
        "tests/pages/held-memory.html",
        "memory that nothing holds (issue 29's repros, the number-operand loop)",
    ),
    (
        "tests/pages/quickstart.html",
        "the README's quick start (examples/quickstart.js) in a plain page with an import map",
    ),
    (
        "tests/pages/worker.html",
        "tandem in a module Web Worker: an add on its gpu stream, no memory left behind",
    ),
    (
        "tests/pages/transforms.html",
        "grad, vjp, jvp, vmap, checkpoint and compile on trees; optimizers against MLX; errors",
    ),
];

/// Runs one page (a path relative to the repository root) in Chromium, or in `other`, and
/// prints its report.
pub fn run_one(manifest: &Manifest, page: &str, other: Option<Other>) -> Result<(), String> {
    let served = format!("./{}", page.trim_start_matches("./"));
    let timeout = Duration::from_secs(300);
    let text = match other {
        None => demo::run_page(manifest, &served, "tandemPage", timeout)?,
        Some(browser) => demo::run_page_in(manifest, browser, &served, "tandemPage", timeout)?,
    };
    println!("{text}");
    Ok(())
}

/// The pages that also run in Firefox ESR and WebKitGTK, and the query each gets there: all
/// but compile-memory.html, which forces garbage collections through Chromium's
/// `--expose-gc`. Neither has WebGPU here, so tandem runs on its CPU path there.
const ELSEWHERE: [(&str, &str); 4] = [
    ("tests/pages/held-memory.html", "?without-webgpu"),
    ("tests/pages/quickstart.html", ""),
    ("tests/pages/worker.html", ""),
    ("tests/pages/transforms.html", "?without-webgpu"),
];

/// Runs every page in Chromium, and those of [`ELSEWHERE`] in Firefox and WebKit too; each run
/// counts as one test. Fails after running all if any failed.
pub fn run_all(manifest: &Manifest, tally: &mut Tally) -> Result<(), String> {
    let timeout = Duration::from_secs(300);
    let mut checks: Vec<Check> = Vec::new();
    for &(page, what) in &PAGES {
        // Served from the repository root: pages import /pkg/ and files of other folders.
        let served = format!("./{page}");
        let run = move || demo::run_page(manifest, &served, "tandemPage", timeout);
        checks.push((format!("page {page}: {what}"), Box::new(run)));
        // The same page without cross-origin isolation: the single-threaded build.
        let plain = format!("./plain/{page}");
        let run = move || demo::run_page(manifest, &plain, "tandemPage", timeout);
        let name = format!("page {page} without isolation (single-threaded build): {what}");
        checks.push((name, Box::new(run)));
        let Some((_, query)) = ELSEWHERE.iter().find(|(p, _)| *p == page) else {
            continue;
        };
        for browser in Other::ALL {
            let served = format!("./{page}{query}");
            let run = move || demo::run_page_in(manifest, browser, &served, "tandemPage", timeout);
            let name = browser.name();
            checks.push((format!("page {page} in {name}: {what}"), Box::new(run)));
        }
    }
    tally.run_checks("test pages", checks)
}
