//! The scatter of `putAlongAxis`, `sliceUpdate` and `scatterAdd`: `x` copied into a fresh
//! output (`copy_into.wgsl`), then the updates written over it: through the slice's strides by
//! the same copy kernel, or along an axis at their indices by `wgsl/scatter.wgsl`, which writes
//! them (`scatter_write.wgsl`) or adds them (`scatter_add.wgsl`). All are elementwise
//! dispatches over the updates, recorded in order in one batch.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::Result;
use crate::gpu::GpuContext;
use crate::gpu::device::buffers::create_output;
use crate::gpu::device::encoder::CommandBatch;
use crate::gpu::device::pipelines::KernelKey;
use crate::gpu::elementwise::{self, Operand, Placement};
use crate::gpu::input::GpuInput;
use crate::graph::primitive::Scatter;
use crate::graph::shape::{Layout, contiguous_strides, slice_view};
use crate::memory::allocator::GpuBuffer;

const KERNEL: &str = include_str!("wgsl/scatter.wgsl");
const WRITE: &str = include_str!("wgsl/scatter_write.wgsl");
const ADD: &str = include_str!("wgsl/scatter_add.wgsl");

/// The kernel's source for indices of `index` dtype; with `add`, the one that adds.
pub fn source(index: DType, add: bool) -> String {
    let land = if add { ADD } else { WRITE };
    crate::gpu::gather::indexed_source(&format!("{land}\n{KERNEL}"), index)
}

/// The pipeline key for indices of `index` dtype.
pub fn key(index: DType, add: bool) -> KernelKey {
    KernelKey::new(if add { "scatter_add" } else { "scatter" }, "", &[index])
}

/// Records `scatter` into a copy of `x` (`inputs[0]`) and returns the output buffer.
pub fn dispatch(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    node: &Array,
    scatter: &Scatter,
    inputs: &[Array],
    data: &[GpuInput],
) -> Result<GpuBuffer> {
    let sources: Vec<&GpuBuffer> = data.iter().map(GpuInput::buffer).collect();
    let out = create_output(gpu, node.size(), &sources)?;
    let shape = node.shape();
    let out_strides = contiguous_strides(shape);
    let whole = Placement {
        strides: &out_strides,
        offset: 0,
    };
    copy(
        gpu,
        batch,
        (shape, node.dtype()),
        operand(&data[0]),
        whole,
        &out,
    )?;
    match scatter {
        Scatter::Axis(axis) | Scatter::AxisAdd(axis) => {
            let add = matches!(scatter, Scatter::AxisAdd(_));
            let mut strides = out_strides.clone();
            strides[*axis] = 0;
            let placement = Placement {
                strides: &strides,
                offset: 0,
            };
            let geometry = [shape[*axis] as u32, out_strides[*axis] as u32, 0, 0];
            let index = inputs[1].dtype();
            let operands = [operand(&data[2]), operand(&data[1])];
            elementwise::record(
                gpu,
                batch,
                key(index, add),
                || source(index, add),
                inputs[1].shape(),
                &operands,
                Some(placement),
                geometry,
                &out,
            )?;
        }
        Scatter::Slice { start, step } => {
            let region = slice_view(&Layout::contiguous(shape), start, step);
            let placement = Placement {
                strides: &region.strides,
                offset: region.offset,
            };
            let update = (inputs[1].shape(), node.dtype());
            copy(gpu, batch, update, operand(&data[1]), placement, &out)?;
        }
    }
    Ok(out)
}

/// An input read through its own layout.
fn operand<'a>(input: &'a GpuInput) -> Operand<'a> {
    Operand {
        buffer: input.buffer(),
        strides: input.layout.strides.clone(),
        offset: input.layout.offset,
    }
}

/// Records the copy of `input` (of `shape`, `dtype`) into `out` wherever `placement` says.
fn copy(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    (shape, dtype): (&[usize], DType),
    input: Operand,
    placement: Placement,
    out: &GpuBuffer,
) -> Result<()> {
    let key = KernelKey::new("copy_into", "", &[dtype, dtype]);
    let source = || elementwise::copy_into_source(dtype, dtype);
    let extra = [0; 4];
    elementwise::record(
        gpu,
        batch,
        key,
        source,
        shape,
        &[input],
        Some(placement),
        extra,
        out,
    )
}
