//! GPU dispatch per op family: each module picks the kernel and its specialization, and
//! [`elementwise::dispatch`] binds the buffers and records the dispatch into the open
//! [`crate::gpu::encoder::CommandBatch`].

pub mod binary;
pub mod elementwise;
pub mod matmul;
pub mod random;
pub mod reduce;
pub mod select;
pub mod unary;
pub mod vectorized;

use crate::array::Array;
use crate::dtype::{DType, promote};
use crate::error::Result;
use crate::gpu::GpuContext;
use crate::gpu::encoder::CommandBatch;
use crate::gpu::pipelines::KernelKey;
use crate::memory::allocator::GpuBuffer;
use crate::primitive::{Primitive, UnaryOp};
use crate::shape::Layout;
use elementwise::Operand;

/// Threads per workgroup of the elementwise kernels.
pub const WORKGROUP_SIZE: u32 = 256;

/// An input's GPU buffer and layout.
pub struct GpuInput<'a> {
    pub buffer: &'a GpuBuffer,
    pub layout: &'a Layout,
}

/// Records the dispatch that computes `node` from its inputs and returns the output buffer.
pub fn eval(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    node: &Array,
    inputs: &[Array],
    data: &[GpuInput],
) -> Result<GpuBuffer> {
    // Unevaluated nodes always have a primitive: only arrays made from data lack one.
    let primitive = node
        .primitive()
        .expect("an unevaluated node has a primitive");
    let dtypes: Vec<DType> = inputs.iter().map(Array::dtype).collect();
    let out = node.dtype();
    match primitive {
        Primitive::Unary(op) => {
            let header = || unary::header(op, dtypes[0], out);
            let key = unary::key(op, dtypes[0], out);
            elementwise_node(gpu, batch, node, inputs, data, &unary::FAMILY, key, header)
        }
        Primitive::Binary(op) => {
            let promoted = promote(dtypes[0], dtypes[1]);
            let header = || binary::header(op, dtypes[0], dtypes[1], promoted);
            let key = binary::key(op, dtypes[0], dtypes[1], promoted);
            elementwise_node(gpu, batch, node, inputs, data, &binary::FAMILY, key, header)
        }
        Primitive::Where => {
            let (c, x, y) = (dtypes[0], dtypes[1], dtypes[2]);
            let header = || select::header(c, x, y, out);
            let key = select::key(c, x, y, out);
            elementwise_node(gpu, batch, node, inputs, data, &select::FAMILY, key, header)
        }
        // A view that cannot share its input's storage: copy the input row-major.
        Primitive::View(_) => contiguous(gpu, batch, &inputs[0], &data[0]),
        Primitive::Reduce(op, axes) => {
            let input = &inputs[0];
            let dense = data[0].layout.offset == 0 && data[0].layout.is_contiguous(input.shape());
            let copied;
            let buffer = if dense {
                data[0].buffer
            } else {
                copied = contiguous(gpu, batch, input, &data[0])?;
                &copied
            };
            let row_len = crate::shape::numel(&input.shape()[input.ndim() - axes..]);
            reduce::dispatch(gpu, batch, op, input.dtype(), buffer, node.size(), row_len)
        }
        Primitive::Matmul => eval_matmul(gpu, batch, node, inputs, data),
        Primitive::Concatenate(axis) => concatenate(gpu, batch, node, axis, inputs, data),
        Primitive::Random(key, distribution) => {
            random::dispatch(gpu, batch, key, distribution, node.size())
        }
    }
}

/// An elementwise kernel over the node's shape: the `vec4` kernel when every input is dense
/// or a scalar, else the strided one, which reads each input through its broadcast strides.
#[allow(clippy::too_many_arguments)]
fn elementwise_node(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    node: &Array,
    inputs: &[Array],
    data: &[GpuInput],
    family: &Family,
    key: KernelKey,
    header: impl Fn() -> String,
) -> Result<GpuBuffer> {
    let shape = node.shape();
    let operands: Vec<Operand> = inputs
        .iter()
        .zip(data)
        .map(|(x, d)| Operand {
            buffer: d.buffer,
            strides: d.layout.broadcast(x.shape(), shape),
            offset: d.layout.offset,
        })
        .collect();
    let accesses: Option<Vec<(&Operand, vectorized::Access)>> = operands
        .iter()
        .map(|o| vectorized::access(shape, &o.strides, o.offset).map(|a| (o, a)))
        .collect();
    match accesses {
        Some(accesses) => {
            let key = KernelKey {
                kernel: family.vec4_kernel,
                ..key
            };
            let op = vectorized::OpHeader {
                inputs: family.inputs,
                function: family.function,
            };
            vectorized::dispatch(gpu, batch, key, header, &op, shape, &accesses)
        }
        None => {
            let source = || elementwise::strided_source(&header(), family.strided_kernel);
            elementwise::dispatch(gpu, batch, key, source, shape, &operands)
        }
    }
}

/// What an elementwise op family's kernels share: the strided kernel's text, the name of its
/// `vec4` kernel, its input aliases in operand order, and the function its header defines.
pub struct Family {
    pub strided_kernel: &'static str,
    pub vec4_kernel: &'static str,
    pub inputs: &'static [&'static str],
    pub function: &'static str,
}

/// Each input copied, converted to the node's dtype, into its slab of one output buffer.
fn concatenate(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    node: &Array,
    axis: usize,
    inputs: &[Array],
    data: &[GpuInput],
) -> Result<GpuBuffer> {
    let out = crate::gpu::encoder::create_storage(gpu, node.size())?;
    let out_strides = crate::shape::contiguous_strides(node.shape());
    let mut start = 0;
    for (x, d) in inputs.iter().zip(data) {
        let (from, to) = (x.dtype(), node.dtype());
        let input = Operand {
            buffer: d.buffer,
            strides: d.layout.strides.clone(),
            offset: d.layout.offset,
        };
        let placement = elementwise::Placement {
            strides: &out_strides,
            offset: start * out_strides[axis] as usize,
        };
        let key = KernelKey::new("copy_into", "", &[from, to]);
        let source = || copy_into_source(from, to);
        elementwise::record(
            gpu,
            batch,
            key,
            source,
            x.shape(),
            &[input],
            Some(placement),
            &out,
        )?;
        start += x.shape()[axis];
    }
    Ok(out)
}

/// The strided copy kernel converting `from` to `to`.
pub fn copy_into_source(from: DType, to: DType) -> String {
    let header = format!(
        "alias In = {};\nalias Out = {};\nfn op(x: In) -> Out {{ return {}; }}",
        elementwise::wgsl_type(from),
        elementwise::wgsl_type(to),
        elementwise::convert("x", from, to),
    );
    elementwise::strided_source(&header, include_str!("../kernels/copy_into.wgsl"))
}

/// A row-major copy of an input.
fn contiguous(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    input: &Array,
    data: &GpuInput,
) -> Result<GpuBuffer> {
    let dtype = input.dtype();
    let copy = Operand {
        buffer: data.buffer,
        strides: data.layout.strides.clone(),
        offset: data.layout.offset,
    };
    let key = unary::key(UnaryOp::Cast, dtype, dtype);
    let source = || unary::source(UnaryOp::Cast, dtype, dtype);
    elementwise::dispatch(gpu, batch, key, source, input.shape(), &[copy])
}

/// The workgroup grid for `threads` one-element threads: x is capped at the per-dimension limit
/// and y takes the rest.
pub fn grid_for(threads: usize, max_per_dimension: u32) -> (u32, u32) {
    let groups = threads.div_ceil(WORKGROUP_SIZE as usize).max(1) as u64;
    let x = groups.min(max_per_dimension as u64);
    let y = groups.div_ceil(x);
    (x as u32, y as u32)
}

/// Matmul of two float32 inputs broadcast to one batch shape; an input whose matrices cannot be
/// walked in place is copied first.
fn eval_matmul(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    node: &Array,
    inputs: &[Array],
    data: &[GpuInput],
) -> Result<GpuBuffer> {
    let mut copies = Vec::new();
    let mut placement = Vec::new();
    for (x, d) in inputs.iter().zip(data) {
        match crate::shape::matrix_batch_stride(x.shape(), d.layout) {
            Some(stride) => placement.push((None, d.layout.offset, stride)),
            None => {
                copies.push(contiguous(gpu, batch, x, d)?);
                let n = x.ndim();
                placement.push((
                    Some(copies.len() - 1),
                    0,
                    x.shape()[n - 2] * x.shape()[n - 1],
                ));
            }
        }
    }
    let operand = |k: usize| matmul::MatrixOperand {
        buffer: placement[k].0.map_or(data[k].buffer, |c| &copies[c]),
        offset: placement[k].1,
        batch_stride: placement[k].2,
    };
    let shape = node.shape();
    let n = shape.len();
    let k = inputs[0].shape()[n - 1];
    let count = crate::shape::numel(&shape[..n - 2]);
    matmul::dispatch(
        gpu,
        batch,
        count,
        shape[n - 2],
        shape[n - 1],
        k,
        operand(0),
        operand(1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_covers_every_thread_within_limits() {
        assert_eq!(grid_for(1, 65535), (1, 1));
        assert_eq!(grid_for(256 * 65535, 65535), (65535, 1));
        let (x, y) = grid_for(256 * 65535 + 1, 65535);
        assert_eq!((x, y), (65535, 2));
        assert!(x as usize * y as usize * 256 > 256 * 65535);
    }
}
