//! Dispatch of `layerNorm` and `rmsNorm` (`wgsl/norm.wgsl`): one kernel, with one workgroup
//! per row, or on a software adapter one thread per row where the rows are many enough to
//! keep its cores busy and short enough that one thread's pass over a row is cheap.

use crate::array::Array;
use crate::error::Result;
use crate::gpu::device::buffers::{create_output, create_storage};
use crate::gpu::device::encoder::CommandBatch;
use crate::gpu::device::grid::grid_of;
use crate::gpu::device::pipelines::KernelKey;
use crate::gpu::input::{GpuInput, RowMajor, row_major};
use crate::gpu::reduce::parts_per_row;
use crate::gpu::{GpuContext, packed};
use crate::memory::allocator::GpuBuffer;

const KERNEL: &str = include_str!("wgsl/norm.wgsl");

pub use crate::graph::primitive::NormKind;

/// The `rows` entry's workgroup size (`ROW_THREADS` in the kernel).
const ROW_THREADS: u32 = 16;

/// Whether one thread per row beats one workgroup per row: on a software adapter, where a
/// workgroup barrier costs a switch of every fiber, for rows that a reduction would not split
/// either (`parts_per_row`) and at least a few workgroups of them. Real GPUs keep the
/// workgroup kernel, whose reads of a row are coalesced.
fn thread_per_row(gpu: &GpuContext, rows: usize, row_len: usize) -> bool {
    gpu.adapter().is_fallback_adapter
        && rows >= 2 * ROW_THREADS as usize
        && parts_per_row(rows, row_len) == 1
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
    let (entry, threads_per_group) = if thread_per_row(gpu, rows, row_len) {
        ("rows", ROW_THREADS)
    } else {
        ("main", 1)
    };
    // A packed input is read in place; the weight and bias are float32.
    let dtype = inputs[0].dtype();
    let key = KernelKey::new("norm", entry, &[dtype]);
    let kernel = gpu.pipelines.get_or_create(&gpu.device, key, entry, 3, || {
        let helpers = packed::source_for(&[dtype], "");
        format!("{helpers}\n{}{KERNEL}", packed::input_text("x", 1, dtype))
    });
    let max = gpu.limits().max_compute_workgroups_per_dimension;
    let (gx, gy) = grid_of(rows, threads_per_group, max);
    batch.dispatch(&kernel, &params, &[x, weight, bias, &out], (gx, gy, 1))?;
    Ok(out)
}
