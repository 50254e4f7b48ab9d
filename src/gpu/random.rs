//! Dispatch of random number generation (`wgsl/random.wgsl`).

use crate::error::Result;
use crate::gpu::GpuContext;
use crate::gpu::device::grid::grid_for;
use crate::gpu::device::pipelines::KernelKey;
use crate::gpu::device::{buffers::create_storage, encoder::CommandBatch};
use crate::gpu::elementwise::MATH;
use crate::graph::primitive::Distribution;
use crate::memory::allocator::GpuBuffer;

const KERNEL: &str = include_str!("wgsl/random.wgsl");

/// The kernel's full source.
pub fn source() -> String {
    format!("{MATH}\n{KERNEL}")
}

/// Records `len` draws from `distribution` under `key`.
pub fn dispatch(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    key: [u32; 2],
    distribution: Distribution,
    len: usize,
) -> Result<GpuBuffer> {
    let out = create_storage(gpu, len)?;
    if len == 0 {
        return Ok(out);
    }
    let pipeline = gpu.pipelines.get_or_create(
        &gpu.device,
        KernelKey::new("random", "", &[]),
        "main",
        0,
        source,
    );
    let (normal, a, b) = distribution.parts();
    let params = [
        key[0],
        key[1],
        len as u32,
        u32::from(normal),
        a.to_bits(),
        b.to_bits(),
        0,
        0,
    ];
    let (x, y) = grid_for(len, gpu.limits().max_compute_workgroups_per_dimension);
    batch.dispatch(&pipeline, &params, &[&out], (x, y, 1))?;
    Ok(out)
}
