//! Dispatch of `layerNorm` and `rmsNorm` (`wgsl/norm.wgsl`): one workgroup per row, one kernel.

use crate::array::Array;
use crate::error::Result;
use crate::gpu::GpuContext;
use crate::gpu::device::buffers::{create_output, create_storage};
use crate::gpu::device::encoder::CommandBatch;
use crate::gpu::device::grid::grid_of;
use crate::gpu::device::pipelines::KernelKey;
use crate::gpu::input::{GpuInput, RowMajor, row_major};
use crate::memory::allocator::GpuBuffer;

const KERNEL: &str = include_str!("wgsl/norm.wgsl");

/// The norm's flags: which affine rows it has, and whether it is RMS.
pub struct NormKind {
    pub rms: bool,
    pub weight: bool,
    pub bias: bool,
    pub eps: f32,
}

/// Records the norm of `inputs[0]`'s rows; the weight and the bias follow it where present.
/// Inputs that are not row-major are copied first.
pub fn dispatch(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    kind: NormKind,
    node: &Array,
    inputs: &[Array],
    data: &[GpuInput],
) -> Result<GpuBuffer> {
    if node.size() == 0 {
        return create_storage(gpu, 0);
    }
    let dense: Vec<RowMajor> = inputs
        .iter()
        .zip(data)
        .map(|(x, d)| row_major(gpu, batch, x, d))
        .collect::<Result<_>>()?;
    let placed = |k: usize| -> (&GpuBuffer, u32) { (dense[k].buffer(), dense[k].offset() as u32) };
    let (x, x_offset) = placed(0);
    let (weight, weight_offset) = if kind.weight { placed(1) } else { (x, 0) };
    let (bias, bias_offset) = if kind.bias {
        placed(1 + usize::from(kind.weight))
    } else {
        (x, 0)
    };
    let row_len = node.shape().last().copied().unwrap_or(1);
    let rows = node.size() / row_len;
    let flags = u32::from(kind.weight) | u32::from(kind.bias) << 1 | u32::from(kind.rms) << 2;
    let params = [
        rows as u32,
        row_len as u32,
        x_offset,
        weight_offset,
        bias_offset,
        flags,
        kind.eps.to_bits(),
        0,
    ];
    // Apart from every buffer the dispatch reads: the weight and bias may live in a buffer
    // the output would otherwise be carved from.
    let out = create_output(gpu, node.size(), &[x, weight, bias])?;
    let key = KernelKey::new("norm", "", &[]);
    let kernel = gpu
        .pipelines
        .get_or_create(&gpu.device, key, "main", 3, || KERNEL.to_string());
    let (gx, gy) = grid_of(rows, 1, gpu.limits().max_compute_workgroups_per_dimension);
    batch.dispatch(&kernel, &params, &[x, weight, bias, &out], (gx, gy, 1))?;
    Ok(out)
}
