//! tandem's task runner: `cargo xtask setup|build|test|demo [--headless]`.

mod bench;
mod cmd;
mod demo;
mod dispatch;
mod docs;
mod firefox;
mod house;
mod imports;
mod interleave;
mod manifest;
mod modules;
mod npm;
mod package;
mod pages;
mod relaxed;
mod serve;
mod setup;
mod test;
mod threads;
mod webdriver;
mod webkit;

use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask <command>

commands:
  setup             install what is missing: the wasm32 target, wasm-pack, wasm-bindgen-cli
                    (the crate's exact version), and Chromium, chromedriver and Mesa's Vulkan
                    driver through apt-get
  build             build the npm package into pkg/ with wasm-pack
  test [package]    setup, then formatting, clippy, native tests on Vulkan, browser tests in
                    headless Chromium, the npm package's checks (its files, its types, the
                    example app under Vite and webpack), the test pages (tests/pages/) and the
                    demo page end to end; `test package` runs only the package's checks and
                    the test pages; `test page PATH [--firefox|--webkit]` builds the package
                    and runs one page of tests/pages/ (in Chromium, or the browser named)
  demo [--headless] setup, build, and serve the demo on the manifest's address;
                    --headless prints what the pages show instead (the streams demo, then
                    the training page; `demo --headless train` drives the training page only)
  bench split       build, then time MLX's GPU-only vs split workload in headless Chromium
  bench batching    build, then time GPU-only workloads per setDispatchesPerSubmit setting
  bench memory      build, then run 2,000 random-sized raw GPU blocks under each allocator
                    policy: device allocations, cache hits, peak bytes, time
  bench peers [--quick] [--only LIST] [--runtimes LIST]
                    build, install the peers (TF.js 4.22, jax-js 0.1.25) into bench/node_modules
                    with npm, and time tandem beside them, each runtime in a fresh headless
                    Chromium; every result checked. Writes target/bench/peers.json.
                    --quick: 7 timed runs after 2 warm-ups per workload, 2.5-3.5 min
                    (default: 11 to 31 runs, more while a workload's runs take under 10 s);
                    --only: workload ids or groups (matmul, exp, exp-chain, mlx, sum,
                    add-chain, softmax); --runtimes: tandem-gpu, tandem-cpu, tfjs-webgpu,
                    tfjs-wasm, tfjs-wasm-2t, jax-webgpu, jax-jit, webgpu-hand (bench/README.md has more)
  bench dispatch    build, and profile the 1000 chained adds of bench peers in tandem, TF.js
                    webgpu and hand-written WGSL with Chromium's sampling profiler: time per op
                    by where it runs (wasm, JS glue, browser). Writes target/bench/dispatch.json.
  interleave [--programs N] [--seed S]
                    the long run of the browser's random interleaving test: N programs
                    (default 2000) of overlapping calls from seed S (default: the time)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &[&str]) -> Result<(), String> {
    let manifest = manifest::Manifest::load(&cmd::root())?;
    match args {
        ["setup"] => setup::setup(&manifest),
        ["build"] => setup::setup(&manifest).and_then(|()| package::build(&manifest)),
        ["test"] => test::test(&manifest),
        ["test", "package"] => test::package_only(&manifest),
        ["test", "page", page, flags @ ..] => {
            let browser = page_browser(flags).ok_or_else(|| unknown(args))?;
            setup::setup(&manifest)
                .and_then(|()| package::build(&manifest))
                .and_then(|()| pages::run_one(&manifest, page, browser))
        }
        ["demo"] => demo::demo(&manifest, false),
        ["demo", "--headless"] => demo::demo(&manifest, true),
        ["demo", "--headless", "train"] => setup::setup(&manifest)
            .and_then(|()| package::build(&manifest))
            .and_then(|()| demo::run_training(&manifest))
            .map(|report| println!("{report}")),
        ["bench", "peers", rest @ ..] => bench::peers(&manifest, rest),
        ["bench", "dispatch"] => dispatch::dispatch(&manifest),
        ["bench", name] => bench::bench(&manifest, name),
        ["interleave", rest @ ..] => interleave::interleave(&manifest, rest),
        ["help" | "--help" | "-h"] => {
            println!("{USAGE}");
            Ok(())
        }
        _ => Err(unknown(args)),
    }
}

fn unknown(args: &[&str]) -> String {
    format!("unknown arguments {args:?}\n\n{USAGE}")
}

/// The browser `test page` runs its page in: `None` for Chromium, else the one its flag names;
/// `None` outright for any other flag.
fn page_browser(flags: &[&str]) -> Option<Option<demo::Other>> {
    match flags {
        [] => Some(None),
        ["--firefox"] => Some(Some(demo::Other::Firefox)),
        ["--webkit"] => Some(Some(demo::Other::WebKit)),
        _ => None,
    }
}
