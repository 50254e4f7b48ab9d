//! The default device on a fallback adapter, chosen by measurement.
//!
//! A fallback (software) adapter such as SwiftShader or llvmpipe runs its "GPU" on the same
//! CPU cores as wasm, so which device is faster depends on the adapter and the machine. The
//! runtime times one small, typical workload on both devices and picks the faster one. On a
//! hardware adapter it does not measure: the GPU is the default, as in MLX.

use crate::array::Array;
use crate::error::Result;
use crate::graph::primitive::{BinaryOp, ReduceOp};
use crate::observe::clock::now_ms;
use crate::ops;
use crate::scheduler::Scheduler;
use crate::stream::Device;

/// The probe's median time on each device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    pub cpu_ms: f64,
    pub gpu_ms: f64,
}

impl Calibration {
    /// The device that ran the probe faster.
    pub fn faster(&self) -> Device {
        if self.gpu_ms < self.cpu_ms {
            Device::Gpu
        } else {
            Device::Cpu
        }
    }

    /// Why [`Calibration::faster`] is the default, in words for `RuntimeInfo`.
    pub fn reason(&self, adapter: &str) -> String {
        let adapter = if adapter.is_empty() {
            "the GPU adapter"
        } else {
            adapter
        };
        format!(
            "{adapter} is a software (fallback) adapter that runs on the CPU; {PROBE} took \
             {:.2} ms on the cpu and {:.2} ms on the gpu (median of {RUNS})",
            self.cpu_ms, self.gpu_ms
        )
    }
}

const RUNS: usize = 3;
const SIDE: usize = 128;
const PROBE: &str = "a probe of 24 elementwise ops (fused) and a sum over 16,384 floats";

/// Times the probe on both devices, after a run each that compiles what it needs.
pub async fn calibrate(scheduler: &Scheduler) -> Result<Calibration> {
    Ok(Calibration {
        cpu_ms: median_time(scheduler, Device::Cpu).await?,
        gpu_ms: median_time(scheduler, Device::Gpu).await?,
    })
}

async fn median_time(scheduler: &Scheduler, device: Device) -> Result<f64> {
    run_probe(scheduler, device).await?;
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = now_ms();
        run_probe(scheduler, device).await?;
        times.push(now_ms() - start);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[RUNS / 2])
}

/// Inputs from the host, eight rounds of a scale, a shift and a `relu`-style clamp, and a
/// sum read back: the shape of a small model step, dominated by per-op cost as such steps
/// are. Its kernels are cheap to compile (no transcendental, no random-number kernel), since
/// compiling is a one-off cost the choice should not weigh.
async fn run_probe(scheduler: &Scheduler, device: Device) -> Result<()> {
    let scale = Array::from_f32(&[1.5], &[])?;
    let shift = Array::from_f32(&[0.1], &[])?;
    let zero = Array::from_f32(&[0.0], &[])?;
    let values: Vec<f32> = (0..SIDE * SIDE)
        .map(|i| ((i * 7919) % 2001) as f32 / 1000.0 - 1.0)
        .collect();
    let mut y = Array::from_f32(&values, &[SIDE, SIDE])?;
    for _ in 0..8 {
        y = ops::binary(BinaryOp::Multiply, &y, &scale, device)?;
        y = ops::binary(BinaryOp::Add, &y, &shift, device)?;
        y = ops::binary(BinaryOp::Maximum, &y, &zero, device)?;
    }
    let total = ops::reduce(ReduceOp::Sum, &y, None, false, device)?;
    // Fused from the first run, as a page's repeated step would be after its first: one GPU
    // pipeline to compile rather than one per op and then the fused one.
    crate::transforms::fuse::fuse(
        std::slice::from_ref(&total),
        crate::transforms::fuse::When::Always,
    );
    scheduler.read(&[total]).await?;
    Ok(())
}
