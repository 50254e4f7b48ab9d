//! Whether an adapter's built-in `exp` keeps tandem's accuracy promise, measured once per
//! device.
//!
//! Vulkan bounds WGSL's built-in `exp` only by 3 + 2|x| ULP, so the kernels use math.wgsl's
//! range-reduced `exp_acc` unless measured otherwise. The built-in is much cheaper on some
//! adapters (SwiftShader: `exp` over 2^20 floats in 8.7 ms against 14.2). So when a device is
//! made, this probe runs the guarded built-in (`exp_guarded` in math.wgsl, which handles NaN,
//! overflow and underflow itself) over a sweep of the float32 range, compares every result with
//! `f64::exp`, and the kernels use the built-in only if every point is within
//! [`RELATIVE_BOUND`]. Its buffers are the probe's own, made and destroyed before any array
//! exists, so the memory statistics never see them.

use wgpu::util::DeviceExt;

use crate::error::{Error, Result};
use crate::gpu::device::choices::ExpChoice;
use crate::gpu::device::readback::read_once;
use crate::gpu::elementwise::MATH;

const KERNEL: &str = include_str!("../gpu/wgsl/exp_probe.wgsl");

/// The largest relative error accepted from the built-in: math.wgsl's `exp_acc` is within
/// about 1e-6, and the built-in must not be worse.
pub const RELATIVE_BOUND: f64 = 2e-6;

/// Points spread evenly over the finite range of `exp`'s argument, and over the range most
/// inputs fall in.
const SWEEP_POINTS: usize = 1 << 16;
const CENTRE_POINTS: usize = 1 << 14;

/// What the probe found.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpProbe {
    /// The largest relative error over the points with a normal float32 result.
    pub worst_relative_error: f64,
    /// The input with that error.
    pub worst_input: f32,
    /// The first point outside the promise, in words; `None` if every point kept it.
    pub failure: Option<String>,
}

impl ExpProbe {
    /// Whether kernels may use the built-in.
    pub fn passed(&self) -> bool {
        self.failure.is_none()
    }

    /// The verdict in words, for `RuntimeInfo`.
    pub fn summary(&self) -> String {
        match &self.failure {
            None => format!(
                "the built-in exp (worst relative error {:.2e} at {}, within {RELATIVE_BOUND:.0e})",
                self.worst_relative_error, self.worst_input
            ),
            Some(why) => format!("math.wgsl's exp_acc, since the built-in failed: {why}"),
        }
    }
}

/// The built-in if the probe ran and passed, else `exp_acc`.
pub fn choice_of(probe: Result<ExpProbe>) -> ExpChoice {
    match probe {
        Ok(probe) => ExpChoice {
            builtin: probe.passed(),
            reason: probe.summary(),
            ms: 0.0,
            remembered: false,
            known: true,
        },
        Err(err) => ExpChoice {
            builtin: false,
            ms: 0.0,
            remembered: false,
            known: false,
            reason: format!(
                "math.wgsl's exp_acc: the probe of the built-in did not run ({})",
                err.message()
            ),
        },
    }
}

/// The `exp` for a new device: `remembered`, the verdict of an earlier page load on this
/// adapter, if there is one; else the probe's, with the time it took.
pub async fn decide(
    remembered: Option<bool>,
    device: &wgpu::Device,
    queue: &wgpu::Queue,
) -> ExpChoice {
    match remembered {
        Some(builtin) => ExpChoice::remembered(builtin),
        None => {
            let start = crate::observe::clock::now_ms();
            let mut exp = choice_of(probe_builtin_exp(device, queue).await);
            exp.ms = crate::observe::clock::now_ms() - start;
            exp
        }
    }
}

/// Probes the guarded built-in on `device`. An error means the probe could not run, not that
/// the built-in failed it.
pub async fn probe_builtin_exp(device: &wgpu::Device, queue: &wgpu::Queue) -> Result<ExpProbe> {
    probe_exp(device, queue, "exp_guarded").await
}

/// Probes `function`, a math.wgsl function `fn(f32) -> f32` that computes `exp`.
pub async fn probe_exp(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    function: &str,
) -> Result<ExpProbe> {
    let inputs = probe_inputs();
    let outputs = run_kernel(device, queue, &inputs, function).await?;
    Ok(judge(&inputs, &outputs))
}

/// The sweep, the centre, and the edges: zeros, infinities, NaN, and both sides of the
/// overflow and underflow thresholds.
pub fn probe_inputs() -> Vec<f32> {
    let sweep = spaced(-104.0, 89.0, SWEEP_POINTS);
    let centre = spaced(-4.0, 4.0, CENTRE_POINTS);
    let edges = [
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        88.72283,
        88.72284,
        88.7229,
        -87.33654,
        -87.3366,
        -103.97207,
        -103.9721,
        1e-30,
        -1e-30,
        f32::MAX,
        f32::MIN,
    ];
    sweep.into_iter().chain(centre).chain(edges).collect()
}

fn spaced(from: f64, to: f64, n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| (from + (to - from) * i as f64 / (n - 1) as f64) as f32)
        .collect()
}

/// Compares each output with `exp` in f64. Subnormal results may be flushed to zero, as
/// math.wgsl allows; infinite and NaN results must match exactly.
pub fn judge(inputs: &[f32], outputs: &[f32]) -> ExpProbe {
    let mut probe = ExpProbe {
        worst_relative_error: 0.0,
        worst_input: 0.0,
        failure: None,
    };
    for (&x, &got) in inputs.iter().zip(outputs) {
        let exact = (x as f64).exp();
        let expected = exact as f32;
        let ok = if x.is_nan() {
            got.is_nan()
        } else if expected.is_infinite() || expected == 0.0 {
            got == expected
        } else if expected < f32::MIN_POSITIVE {
            got == 0.0 || ((got as f64) - exact).abs() <= f32::MIN_POSITIVE as f64 * 1e-3
        } else {
            let error = ((got as f64) - exact).abs() / exact;
            if error > probe.worst_relative_error {
                probe.worst_relative_error = error;
                probe.worst_input = x;
            }
            error <= RELATIVE_BOUND
        };
        if !ok && probe.failure.is_none() {
            probe.failure = Some(format!("exp({x:e}) gave {got:e}, not {exact:e}"));
        }
    }
    probe
}

async fn run_kernel(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    inputs: &[f32],
    function: &str,
) -> Result<Vec<f32>> {
    let bytes = std::mem::size_of_val(inputs) as u64;
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let input = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("tandem exp probe input"),
        contents: bytemuck::cast_slice(inputs),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let output = probe_buffer(
        device,
        bytes,
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
    );
    let staging = probe_buffer(
        device,
        bytes,
        wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
    );
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("tandem exp probe"),
        source: wgpu::ShaderSource::Wgsl(
            format!("{MATH}\n{KERNEL}\nfn probed(x: f32) -> f32 {{ return {function}(x); }}")
                .into(),
        ),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("tandem exp probe"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("tandem exp probe"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: input.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: output.as_entire_binding(),
            },
        ],
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups(inputs.len().div_ceil(64) as u32, 1, 1);
    }
    encoder.copy_buffer_to_buffer(&output, 0, &staging, 0, bytes);
    let submission = queue.submit([encoder.finish()]);
    if let Some(error) = scope.pop().await {
        return Err(Error::Device(format!(
            "the exp probe was rejected ({error})"
        )));
    }
    let outputs = read_once(device, &staging, 0..bytes, submission)
        .await
        .map_err(|e| Error::Device(format!("the exp probe's readback failed ({e})")))?;
    for buffer in [input, output, staging] {
        buffer.destroy();
    }
    Ok(outputs)
}

fn probe_buffer(device: &wgpu::Device, size: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("tandem exp probe"),
        size,
        usage,
        mapped_at_creation: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(inputs: &[f32]) -> Vec<f32> {
        inputs.iter().map(|&x| (x as f64).exp() as f32).collect()
    }

    #[test]
    fn correctly_rounded_results_pass() {
        let inputs = probe_inputs();
        let probe = judge(&inputs, &exact(&inputs));
        assert!(probe.passed(), "{probe:?}");
        assert!(probe.worst_relative_error < 1e-7);
    }

    #[test]
    fn flushed_subnormals_pass_and_everything_else_out_of_line_fails() {
        let inputs = [-100.0f32, 1.0, 89.0, f32::NAN, -104.5];
        let mut outputs = exact(&inputs);
        outputs[0] = 0.0;
        assert!(judge(&inputs, &outputs).passed());
        let wrong = |at: usize, value: f32| {
            let mut bad = outputs.clone();
            bad[at] = value;
            judge(&inputs, &bad)
        };
        let off = wrong(1, std::f32::consts::E * (1.0 + 4e-6));
        assert!(off.failure.unwrap().contains("exp(1e0)"));
        assert!(!wrong(2, f32::MAX).passed(), "overflow must give infinity");
        assert!(!wrong(3, 1.0).passed(), "NaN must stay NaN");
        assert!(!wrong(4, 1e-45).passed(), "exp(-104.5) rounds to 0");
    }
}
