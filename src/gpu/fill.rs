//! Creation ops on the GPU (`wgsl/fill.wgsl`): constants and the identity by a kernel;
//! `arange` and `linspace` are computed on the host in f64 and rounded once, as on the CPU,
//! then uploaded, so that both devices give the same values to the last bit.

use crate::dtype::DType;
use crate::error::Result;
use crate::gpu::GpuContext;
use crate::gpu::device::grid::grid_for;
use crate::gpu::device::pipelines::KernelKey;
use crate::gpu::device::{
    buffers::{create_storage, upload_words},
    encoder::CommandBatch,
};
use crate::graph::primitive::Fill;
use crate::graph::shape::numel;
use crate::memory::allocator::GpuBuffer;

const KERNEL: &str = include_str!("wgsl/fill.wgsl");

/// Records `fill` of an array of `shape` and `dtype`; returns its buffer.
pub fn dispatch(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    fill: Fill,
    dtype: DType,
    shape: &[usize],
) -> Result<GpuBuffer> {
    let len = numel(shape);
    let (entry, word) = match fill {
        Fill::Constant(word) => ("fill", word),
        Fill::Eye(word) => ("eye", word),
        Fill::Arange { .. } | Fill::Linspace { .. } => {
            let words = crate::cpu::fill::fill(fill, dtype, shape)?;
            return upload_words(gpu, &words);
        }
    };
    let out = create_storage(gpu, len)?;
    if len == 0 {
        return Ok(out);
    }
    let key = KernelKey::new("fill", entry, &[]);
    let kernel = gpu
        .pipelines
        .get_or_create(&gpu.device, key, entry, 0, || KERNEL.to_string());
    let len4 = len.div_ceil(4);
    let side = shape.last().copied().unwrap_or(1);
    let params = [len4 as u32, word, side as u32, 0];
    let (x, y) = grid_for(len4, gpu.limits().max_compute_workgroups_per_dimension);
    batch.dispatch(&kernel, &params, &[&out], (x, y, 1))?;
    Ok(out)
}
