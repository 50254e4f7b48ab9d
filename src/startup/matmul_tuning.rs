//! The matmul kernel and tile for an adapter, chosen by measurement.
//!
//! Which kernel is fastest depends on the adapter: workgroup-memory tiles suit most hardware
//! GPUs, register tiles suit software adapters, and the best tile size differs between them.
//! At the first GPU matmul (`startup::settle`), the runtime times each candidate on a product
//! of that matmul's shape (each side clamped to 32..=512) and keeps the adapter's usual kernel
//! unless another is faster by a clear margin: close candidates would otherwise swap from load
//! to load with the noise of a shared machine. The verdict is kept per adapter for the life of
//! the process (the page), and by the page's storage across loads.

use std::sync::Mutex;

use crate::error::Result;
use crate::gpu::matmul::MatmulKernel;
use crate::gpu::{AdapterSummary, GpuContext};
use crate::graph::primitive::ReduceOp;
use crate::observe::clock::now_ms;
use crate::ops;
use crate::scheduler::Scheduler;
use crate::stream::Device;

/// The probe's sides are the first matmul's, clamped to this range: large enough that the
/// kernel, not the dispatch or the readback, dominates, and small enough to time in a few ms.
const SIDES: std::ops::RangeInclusive<usize> = 32..=512;
/// Timed runs of a candidate that is not clearly losing; its time is their median.
const RUNS: usize = 5;
/// How much faster than the adapter's usual kernel another must be to replace it.
const MARGIN: f64 = 1.15;
/// A candidate whose first run is this many times the best so far is not run again.
const CLEARLY_SLOWER: f64 = 2.0;

/// One candidate's measurement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    pub kernel: MatmulKernel,
    /// The median of its runs, in ms.
    pub best_ms: f64,
    pub runs: usize,
}

/// The kernel matmul uses on an adapter, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct MatmulTuning {
    pub kernel: MatmulKernel,
    /// Empty when the measurement failed or was not made.
    pub timings: Vec<Timing>,
    pub reason: String,
    pub source: crate::startup::remembered::Source,
}

impl MatmulTuning {
    /// The usual kernel unless another's median is faster by [`MARGIN`].
    fn measured(
        usual: MatmulKernel,
        shape: (usize, usize, usize),
        timings: Vec<Timing>,
    ) -> MatmulTuning {
        let fastest = timings
            .iter()
            .min_by(|a, b| a.best_ms.total_cmp(&b.best_ms))
            .expect("at least one candidate");
        let usual_ms = timings
            .iter()
            .find(|t| t.kernel == usual)
            .map(|t| t.best_ms);
        let kernel = match usual_ms {
            Some(ms) if ms <= MARGIN * fastest.best_ms => usual,
            _ => fastest.kernel,
        };
        let each: Vec<String> = timings
            .iter()
            .map(|t| {
                let runs = match t.runs {
                    1 => "1 run".to_string(),
                    n => format!("median of {n} runs"),
                };
                format!("{} {:.2} ms ({runs})", t.kernel.name(), t.best_ms)
            })
            .collect();
        let (m, k, n) = shape;
        MatmulTuning {
            kernel,
            reason: format!(
                "timed at the first GPU matmul on {m}x{k} @ {k}x{n}; {} is kept unless another \
                 is {:.0}% faster: {}",
                usual.name(),
                (MARGIN - 1.0) * 100.0,
                each.join(", ")
            ),
            timings,
            source: crate::startup::remembered::Source::Measured,
        }
    }
}

/// Verdicts so far, by adapter.
static TUNED: Mutex<Vec<(String, MatmulTuning)>> = Mutex::new(Vec::new());

fn adapter_key(adapter: &AdapterSummary) -> String {
    format!(
        "{}|{}|{}",
        adapter.backend, adapter.device, adapter.description
    )
}

/// The kernel for the runtime's adapter: measured the first time, remembered afterwards. The
/// chosen kernel is set on the runtime's GPU context. A failed measurement keeps the kernel
/// the adapter's kind suggests, and says why.
pub async fn tune_matmul(
    scheduler: &Scheduler,
    gpu: &GpuContext,
    shape: (usize, usize, usize),
) -> MatmulTuning {
    let clamp = |side: usize| side.clamp(*SIDES.start(), *SIDES.end());
    let shape = (clamp(shape.0), clamp(shape.1), clamp(shape.2));
    let key = adapter_key(gpu.adapter());
    let earlier = TUNED.lock().ok().and_then(|tuned| {
        tuned
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, t)| t.clone())
    });
    let tuning = match earlier {
        Some(tuning) => tuning,
        None => {
            let prior = gpu.choices.matmul.get();
            let tuning = match time_candidates(scheduler, gpu, shape).await {
                Ok(timings) => MatmulTuning::measured(prior, shape, timings),
                Err(err) => MatmulTuning {
                    kernel: prior,
                    timings: Vec::new(),
                    source: crate::startup::remembered::Source::Given,
                    reason: format!(
                        "timing the candidates failed ({}), so {} stays, as the adapter's kind suggests",
                        err.message(),
                        prior.name()
                    ),
                },
            };
            if let Ok(mut tuned) = TUNED.lock() {
                tuned.push((key, tuning.clone()));
            }
            tuning
        }
    };
    gpu.choices.matmul.set(tuning.kernel);
    tuning
}

async fn time_candidates(
    scheduler: &Scheduler,
    gpu: &GpuContext,
    (m, k, n): (usize, usize, usize),
) -> Result<Vec<Timing>> {
    let a = ops::random::uniform(&[m, k], [3, 5], -1.0, 1.0, Device::Gpu)?;
    let b = ops::random::uniform(&[k, n], [7, 9], -1.0, 1.0, Device::Gpu)?;
    scheduler.evaluate(&[a.clone(), b.clone()]).await?;
    let run = |kernel| {
        gpu.choices.matmul.set(kernel);
        run_product(scheduler, &a, &b)
    };
    // Workgroup-memory tiles lose badly on a software adapter (barriers are expensive there,
    // 2-20x slower than register tiles on SwiftShader), so they are not timed there.
    let software = gpu.adapter().is_fallback_adapter;
    let candidates = MatmulKernel::CANDIDATES
        .into_iter()
        .filter(|k| !(software && *k == MatmulKernel::WorkgroupTiled));
    // A first run of each compiles it and drops the clearly slower ones; then rounds run
    // every remaining candidate once each, so that drift on a shared machine (another
    // page, a compile in the background) falls on all of them alike.
    let mut runs: Vec<(MatmulKernel, Vec<f64>)> = Vec::new();
    for kernel in candidates {
        run(kernel).await?;
        let first = run(kernel).await?;
        runs.push((kernel, vec![first]));
    }
    let best_first = runs.iter().map(|(_, r)| r[0]).fold(f64::MAX, f64::min);
    for _ in 1..RUNS {
        for (kernel, times) in &mut runs {
            if times[0] <= CLEARLY_SLOWER * best_first {
                times.push(run(*kernel).await?);
            }
        }
    }
    Ok(runs
        .into_iter()
        .map(|(kernel, mut times)| {
            times.sort_by(f64::total_cmp);
            Timing {
                kernel,
                best_ms: times[times.len() / 2],
                runs: times.len(),
            }
        })
        .collect())
}

/// Times one product on the GPU, ending in a readback of its sum so that the GPU has finished.
async fn run_product(
    scheduler: &Scheduler,
    a: &crate::array::Array,
    b: &crate::array::Array,
) -> Result<f64> {
    let start = now_ms();
    let product = ops::matmul(a, b, Device::Gpu)?;
    let total = ops::reduce(ReduceOp::Sum, &product, None, false, Device::Gpu)?;
    scheduler.read(&[total]).await?;
    Ok(now_ms() - start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fastest_candidate_wins_and_the_reason_lists_every_one() {
        let timing = |kernel, best_ms| Timing {
            kernel,
            best_ms,
            runs: 3,
        };
        let [a, b, c, ..] = MatmulKernel::CANDIDATES;
        let shape = (64, 64, 64);
        let timings = vec![timing(a, 3.0), timing(b, 2.5), timing(c, 9.0)];
        let tuning = MatmulTuning::measured(c, shape, timings);
        assert_eq!(tuning.kernel, b, "the usual kernel is clearly slower");
        for kernel in [a, b, c] {
            assert!(tuning.reason.contains(&kernel.name()), "{}", tuning.reason);
        }
        let close = vec![timing(a, 2.7), timing(b, 2.5), timing(c, 9.0)];
        let tuning = MatmulTuning::measured(a, shape, close);
        assert_eq!(
            tuning.kernel, a,
            "within the margin, the usual kernel stays"
        );
    }
}
