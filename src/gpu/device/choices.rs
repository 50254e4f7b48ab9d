//! The kernel choices start-up makes for a device, which the kernel families read at each
//! dispatch:
//! - which `exp` the kernels use: WGSL's built-in (guarded) or math.wgsl's `exp_acc`.
//!   `startup::exp_probe` measures the built-in (or an earlier page load's verdict is
//!   remembered) when the device is made, and the pipeline cache builds every kernel with it;
//! - which matmul kernel: the adapter's default until `startup::matmul_tuning` measures the
//!   candidates at the first GPU matmul.
//!
//! They live here, not in start-up, because start-up sits above the GPU evaluator: it decides
//! and writes them once; `gpu::matmul` and the pipelines only read them.

use std::cell::Cell;

use crate::gpu::matmul::MatmulKernel;

/// What start-up chose for a device.
#[derive(Debug)]
pub struct KernelChoices {
    pub exp: ExpChoice,
    /// Set again whenever start-up measures another kernel faster.
    pub matmul: Cell<MatmulKernel>,
}

/// Which `exp` a device's kernels use.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpChoice {
    /// WGSL's built-in (guarded), rather than math.wgsl's `exp_acc`.
    pub builtin: bool,
    /// Why, in words, for `RuntimeInfo`.
    pub reason: String,
    /// What the probe took, in milliseconds.
    pub ms: f64,
    /// Whether an earlier page load measured it (no probe ran).
    pub remembered: bool,
    /// Whether the verdict is known: measured or remembered, not a probe that failed to run.
    pub known: bool,
}

impl ExpChoice {
    /// The verdict an earlier page load measured on this adapter.
    pub fn remembered(builtin: bool) -> ExpChoice {
        let which = if builtin {
            "the built-in (guarded), which passed"
        } else {
            "math.wgsl's exp_acc, since the built-in failed"
        };
        ExpChoice {
            builtin,
            reason: format!("{which} the probe on an earlier page load on this adapter"),
            ms: 0.0,
            remembered: true,
            known: true,
        }
    }
}
