//! The gather of `take` and `takeAlongAxis` (`wgsl/gather.wgsl`): an elementwise dispatch over
//! the output whose first operand reads `x` with the gathered axis's stride held apart.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::Result;
use crate::gpu::GpuContext;
use crate::gpu::device::buffers::create_output;
use crate::gpu::device::encoder::CommandBatch;
use crate::gpu::device::pipelines::KernelKey;
use crate::gpu::elementwise::{self, Operand};
use crate::gpu::input::GpuInput;
use crate::graph::shape::gather_strides;
use crate::memory::allocator::GpuBuffer;

const KERNEL: &str = include_str!("wgsl/gather.wgsl");

const POSITIONS: &str = include_str!("wgsl/positions.wgsl");

/// The kernel's source for indices of `index` dtype.
pub fn source(index: DType) -> String {
    indexed_source(KERNEL, index)
}

/// A kernel that places index words on an axis (the gather's, the scatter's), for indices of
/// `index` dtype: the shared index rule, with POSITION naming the one for that dtype.
pub fn indexed_source(kernel: &str, index: DType) -> String {
    let (alias, position) = match index {
        DType::Int32 => ("i32", "position"),
        _ => ("u32", "position_u"),
    };
    let kernel = format!("{POSITIONS}\n{}", kernel.replace("POSITION", position));
    elementwise::strided_source(&format!("alias Index = {alias};"), &kernel)
}

/// The pipeline key for indices of `index` dtype.
pub fn key(index: DType) -> KernelKey {
    KernelKey::new("gather", "", &[index])
}

/// Records the gather of `node` (of `axis`) from `x` by `indices`.
pub fn dispatch(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    node: &Array,
    axis: usize,
    inputs: &[Array],
    data: &[GpuInput],
) -> Result<GpuBuffer> {
    let (x, indices) = (&inputs[0], &inputs[1]);
    let shape = node.shape();
    let (base, step) = gather_strides(x.shape(), &data[0].layout.strides, shape, axis);
    let operands = [
        Operand {
            buffer: data[0].buffer(),
            strides: base,
            offset: data[0].layout.offset,
        },
        Operand {
            buffer: data[1].buffer(),
            strides: data[1].layout.broadcast(indices.shape(), shape),
            offset: data[1].layout.offset,
        },
    ];
    let out = create_output(gpu, node.size(), &[data[0].buffer(), data[1].buffer()])?;
    let extent = x.shape()[axis] as u32;
    let index = indices.dtype();
    elementwise::record(
        gpu,
        batch,
        key(index),
        || source(index),
        shape,
        &operands,
        None,
        [extent, step as i32 as u32, 0, 0],
        &out,
    )?;
    Ok(out)
}
