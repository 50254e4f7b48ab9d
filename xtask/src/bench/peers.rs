//! `cargo xtask bench peers`: tandem beside its peers on the same workloads, each runtime in a
//! fresh headless Chromium: TF.js 4.22 (webgpu and wasm backends), jax-js 0.1.25 (eager and
//! `jit`) and hand-written WGSL. The page (`bench/peers.html`) times each workload and checks
//! every result; this module installs the peers from npm into `bench/node_modules`, drives one
//! page per runtime, survives a workload that hangs or crashes its page, prints one table and
//! the ratios, and writes every raw number to `target/bench/peers.json`.

use std::time::{Duration, Instant};

use crate::cmd::root;
use crate::manifest::Manifest;
use crate::{demo, package, setup};

use super::drive::*;
use super::json::*;
use super::npm::*;
use super::plan::*;
use super::ratios::*;
use super::rounds::{merge, order};
use super::table::*;

pub fn peers(manifest: &Manifest, args: &[&str]) -> Result<(), String> {
    let options = parse_args(args)?;
    let catalog = load_catalog(&root().join("bench/peers/workloads.json"))?;
    let workloads = select(&catalog, options.only.as_deref())?;
    let plan = if options.quick { QUICK } else { FULL };
    let started = Instant::now();
    setup::setup(manifest)?;
    package::build(manifest)?;
    ensure_npm_packages(&root().join("bench"))?;
    let address = demo::serve_pages(manifest, "bench")?;
    println!(
        "peers: {} workload(s) x {} runtime(s), {}{}",
        workloads.len(),
        options.runtimes.len(),
        plan.describe(),
        match options.rounds {
            1 => String::new(),
            n => format!(", in {n} rounds of alternating order"),
        }
    );
    let rounds = (0..options.rounds)
        .map(|round| {
            if options.rounds > 1 {
                println!("peers: round {} of {}", round + 1, options.rounds);
            }
            order(round, &options.runtimes)
                .into_iter()
                .map(|runtime| run_runtime(manifest, address, runtime, &workloads, &plan))
                .collect()
        })
        .collect();
    let reports = merge(&options.runtimes, rounds);
    let ratios = Ratios::compute(&workloads, &reports);
    println!();
    println!("{}", table(&workloads, &reports, &plan, options.quick));
    println!("{}", ratios.text(&workloads));
    let wall = started.elapsed();
    let path = root().join("target/bench/peers.json");
    write_json(
        &path,
        &summary_json(&workloads, &reports, &ratios, &plan, args, wall),
    )?;
    println!(
        "peers: wrote {}; wall time {}",
        path.display(),
        minutes(wall)
    );
    Ok(())
}

fn minutes(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}m{:02}s", s / 60, s % 60)
}

// ---- npm ----------------------------------------------------------------------------------
