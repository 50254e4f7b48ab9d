//! The matmul kernel and tile for an adapter, chosen by measurement.
//!
//! Which kernel is fastest depends on the adapter: workgroup-memory tiles suit most hardware
//! GPUs, register tiles suit software adapters, and the best tile size differs between them.
//! When a runtime first gets a device, it times each candidate of
//! [`MatmulKernel::CANDIDATES`] on one product and keeps the fastest. The verdict is kept per
//! adapter for the life of the process (the page), so a second device on the same adapter
//! (after a device loss, say) does not measure again.

use std::sync::Mutex;

use crate::clock::now_ms;
use crate::error::Result;
use crate::gpu::ops::matmul::MatmulKernel;
use crate::gpu::{AdapterSummary, GpuContext};
use crate::ops;
use crate::primitive::ReduceOp;
use crate::scheduler::Scheduler;
use crate::stream::Device;

/// The probe's product: (M x K) @ (K x N), large enough that the kernel, not the dispatch or
/// the readback, dominates on a software adapter, and small enough to time in a few ms.
const M: usize = 192;
const K: usize = 256;
const N: usize = 192;
/// Timed runs of a candidate that is not clearly losing; its time is the fastest of them.
const RUNS: usize = 3;
/// A candidate whose first run is this many times the best so far is not run again.
const CLEARLY_SLOWER: f64 = 2.0;

/// One candidate's measurement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    pub kernel: MatmulKernel,
    /// The fastest of its runs, in ms.
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
}

impl MatmulTuning {
    fn measured(timings: Vec<Timing>) -> MatmulTuning {
        let fastest = timings
            .iter()
            .min_by(|a, b| a.best_ms.total_cmp(&b.best_ms))
            .expect("at least one candidate");
        let each: Vec<String> = timings
            .iter()
            .map(|t| {
                let runs = match t.runs {
                    1 => "1 run".to_string(),
                    n => format!("{n} runs"),
                };
                format!("{} {:.2} ms ({runs})", t.kernel.name(), t.best_ms)
            })
            .collect();
        MatmulTuning {
            kernel: fastest.kernel,
            reason: format!(
                "fastest on {M}x{K} @ {K}x{N} when the device was first used (the best of {RUNS} \
                 runs, or of 1 run for one {CLEARLY_SLOWER}x slower than the best so far): {}",
                each.join(", ")
            ),
            timings,
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
pub async fn tune_matmul(scheduler: &Scheduler, gpu: &GpuContext) -> MatmulTuning {
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
            let prior = gpu.matmul.get();
            let tuning = match time_candidates(scheduler, gpu).await {
                Ok(timings) => MatmulTuning::measured(timings),
                Err(err) => MatmulTuning {
                    kernel: prior,
                    timings: Vec::new(),
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
    gpu.matmul.set(tuning.kernel);
    tuning
}

async fn time_candidates(scheduler: &Scheduler, gpu: &GpuContext) -> Result<Vec<Timing>> {
    let a = ops::random::uniform(&[M, K], [3, 5], -1.0, 1.0, Device::Gpu)?;
    let b = ops::random::uniform(&[K, N], [7, 9], -1.0, 1.0, Device::Gpu)?;
    scheduler.evaluate(&[a.clone(), b.clone()]).await?;
    let run = |kernel| {
        gpu.matmul.set(kernel);
        run_product(scheduler, &a, &b)
    };
    let mut timings: Vec<Timing> = Vec::new();
    for kernel in MatmulKernel::CANDIDATES {
        // The first run compiles the kernel.
        run(kernel).await?;
        let best_so_far = timings.iter().map(|t| t.best_ms).fold(f64::MAX, f64::min);
        let mut timing = Timing {
            kernel,
            best_ms: f64::MAX,
            runs: 0,
        };
        while timing.runs < RUNS {
            let ms = run(kernel).await?;
            timing.best_ms = timing.best_ms.min(ms);
            timing.runs += 1;
            if ms > CLEARLY_SLOWER * best_so_far {
                break;
            }
        }
        timings.push(timing);
    }
    Ok(timings)
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
        let tuning = MatmulTuning::measured(vec![timing(a, 3.0), timing(b, 2.5), timing(c, 9.0)]);
        assert_eq!(tuning.kernel, b);
        for kernel in [a, b, c] {
            assert!(tuning.reason.contains(&kernel.name()), "{}", tuning.reason);
        }
    }
}
