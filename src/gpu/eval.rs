//! A GPU node's dispatch: `eval` picks the family module (`super::binary`, `super::reduce`,
//! …) that picks the kernel and its specialization, and [`elementwise::dispatch`] binds the
//! buffers and records the dispatch into the open
//! [`crate::gpu::device::encoder::CommandBatch`].

use crate::array::Array;
use crate::dtype::{DType, promote};
use crate::error::Result;
use crate::gpu::GpuContext;
use crate::gpu::device::pipelines::KernelKey;
use crate::gpu::device::{buffers::upload_words, encoder::CommandBatch};
use crate::gpu::elementwise::Family;
use crate::gpu::elementwise::{self, Operand};
use crate::gpu::epilogue::Epilogue;
use crate::gpu::input::converted;
use crate::gpu::input::{GpuInput, contiguous};
use crate::gpu::{
    binary, cast, fill, fused, gather, matmul, norm, patches, random, reduce, row_norm, scan,
    scatter, select, sort, unary, vectorized,
};
use crate::graph::primitive::{NormKind, Primitive, ReduceOp, UnaryOp};
use crate::graph::shape::Layout;
use crate::memory::allocator::GpuBuffer;

/// Whether `primitive` takes one-element host inputs as words ([`GpuInput::word`]): the
/// elementwise ops, and a matmul's epilogue program (its inputs from the third on).
pub fn takes_words(primitive: &Primitive) -> bool {
    matches!(
        primitive,
        Primitive::Unary(_)
            | Primitive::Binary(_)
            | Primitive::Where
            | Primitive::Fused(_)
            | Primitive::MatmulThen(_)
    )
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
        Primitive::Unary(UnaryOp::Cast) if cast::handles(dtypes[0], out) => {
            converted(gpu, batch, &inputs[0], &data[0], out)
        }
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
        Primitive::Reduce(op, axes) => eval_reduce(gpu, batch, op, axes, &inputs[0], &data[0]),
        Primitive::RowNorm(op, axes) => {
            // The fused kernels read rows only.
            let rows = |block: &reduce::Block| block.inner == 1;
            let (copy, block) = reduced_block(gpu, batch, &inputs[0], &data[0], axes, rows)?;
            let buffer = copy.as_ref().unwrap_or_else(|| data[0].buffer());
            row_norm::dispatch(gpu, batch, op, (buffer, dtypes[0]), block)
        }
        Primitive::Fused(expr) => fused::dispatch(gpu, batch, &expr, node, inputs, data),
        Primitive::Matmul => matmul::eval(gpu, batch, inputs, data, out, None),
        Primitive::MatmulThen(expr) => {
            let epilogue = Epilogue {
                expr: &expr,
                node,
                inputs: &inputs[2..],
                data: &data[2..],
            };
            matmul::eval(gpu, batch, &inputs[..2], &data[..2], out, Some(&epilogue))
        }
        // Fusion makes it on the CPU stream only (`transforms/fuse/product.rs`).
        Primitive::PatchesThen(..) => Err(crate::error::Error::Device(
            "fusedConv runs on the CPU stream only".into(),
        )),
        Primitive::Concatenate(axis) => concatenate(gpu, batch, node, axis, inputs, data),
        Primitive::Gather(_)
        | Primitive::Scatter(_)
        | Primitive::Patches(_)
        | Primitive::Sort { .. }
        | Primitive::Norm { .. }
        | Primitive::Scan { .. } => eval_axis_op(gpu, batch, &primitive, node, inputs, data),
        Primitive::Random(key, distribution) => {
            random::dispatch(gpu, batch, key, distribution, node.size())
        }
        Primitive::Fill(fill) => fill::dispatch(gpu, batch, fill, node.dtype(), node.shape()),
    }
}

/// The ops along an axis that models need: the gather, and sorts, norms and scans along the
/// last axis.
fn eval_axis_op(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    primitive: &Primitive,
    node: &Array,
    inputs: &[Array],
    data: &[GpuInput],
) -> Result<GpuBuffer> {
    match *primitive {
        Primitive::Gather(axis) => gather::dispatch(gpu, batch, node, axis, inputs, data),
        Primitive::Scatter(ref scatter) => {
            scatter::dispatch(gpu, batch, node, scatter, inputs, data)
        }
        Primitive::Patches(ref p) => patches::dispatch(gpu, batch, p, node, inputs, data),
        Primitive::Sort {
            indices,
            descending,
            keep,
        } => {
            let output = sort::SortOutput {
                indices,
                descending,
                keep,
            };
            sort::eval(gpu, batch, &inputs[0], &data[0], output)
        }
        Primitive::Norm { .. } => {
            let kind = NormKind::of(primitive).expect("a norm primitive");
            norm::dispatch(gpu, batch, kind, node, inputs, data)
        }
        Primitive::Scan {
            op,
            reverse,
            inclusive,
        } => {
            let scan = scan::Scan {
                op,
                reverse,
                inclusive,
                input: inputs[0].dtype(),
                out: node.dtype(),
            };
            scan::eval(gpu, batch, scan, &inputs[0], &data[0])
        }
        _ => unreachable!("eval sends only the axis ops here"),
    }
}

/// An elementwise kernel over the node's shape: the `vec4` kernel when every input is dense,
/// a repeated row or column, or a scalar, else the strided one, which reads each input through
/// its broadcast strides.
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
    let fast: Option<Vec<vectorized::Access>> = inputs
        .iter()
        .zip(data)
        .map(|(x, d)| match d.word {
            Some(word) => Some(vectorized::Access::Word(word)),
            None => {
                let strides = d.layout.broadcast(x.shape(), shape);
                vectorized::access_or_column(shape, &strides, d.layout.offset)
            }
        })
        .collect();
    if let Some(accesses) = fast {
        let operands: Vec<(Option<&GpuBuffer>, usize, vectorized::Access)> = data
            .iter()
            .zip(accesses)
            .map(|(d, a)| (d.buffer, d.layout.offset, a))
            .collect();
        let key = KernelKey {
            kernel: family.vec4_kernel,
            ..key
        };
        let stored: Vec<DType> = inputs.iter().map(Array::dtype).collect();
        let op = vectorized::OpHeader {
            inputs: family.inputs,
            function: family.function,
            stored: &stored,
            out: node.dtype(),
        };
        return vectorized::dispatch(gpu, batch, key, header, &op, shape, &operands);
    }
    // The strided kernel binds every operand: words get a buffer of their own for this once.
    let uploads: Vec<Option<GpuBuffer>> = data
        .iter()
        .map(|d| d.word.map(|w| upload_words(gpu, &[w])).transpose())
        .collect::<Result<_>>()?;
    let operands: Vec<Operand> = inputs
        .iter()
        .zip(data)
        .zip(&uploads)
        .map(|((x, d), upload)| match upload {
            Some(buffer) => Operand {
                buffer,
                strides: vec![0; shape.len()],
                offset: 0,
            },
            None => Operand {
                buffer: d.buffer(),
                strides: d.layout.broadcast(x.shape(), shape),
                offset: d.layout.offset,
            },
        })
        .collect();
    let source = || elementwise::strided_source(&header(), family.strided_kernel);
    elementwise::dispatch(gpu, batch, key, source, shape, &operands)
}

/// A reduction over the last `axes` axes of `input`, read in place where its layout is a
/// row-major block with those axes as rows or as columns; otherwise from a row-major copy.
fn eval_reduce(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    op: ReduceOp,
    axes: usize,
    input: &Array,
    data: &GpuInput,
) -> Result<GpuBuffer> {
    let in_place = |block: &reduce::Block| !block.better_as_rows();
    let (copy, block) = reduced_block(gpu, batch, input, data, axes, in_place)?;
    let buffer = copy.as_ref().unwrap_or_else(|| data.buffer());
    reduce::dispatch(gpu, batch, op, input.dtype(), buffer, block)
}

/// The block a reduction over the last `axes` axes of `input` reads: in place when its layout
/// has one and `in_place` accepts it (no copy is returned), else rows of a row-major copy,
/// which is returned so that the caller binds it.
fn reduced_block(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    input: &Array,
    data: &GpuInput,
    axes: usize,
    in_place: impl Fn(&reduce::Block) -> bool,
) -> Result<(Option<GpuBuffer>, reduce::Block)> {
    let shape = input.shape();
    if let Some(block) = reduction_block(shape, data.layout, axes).filter(|b| in_place(b)) {
        return Ok((None, block));
    }
    let copied = contiguous(gpu, batch, input, data)?;
    let kept = crate::graph::shape::numel(&shape[..shape.len() - axes]);
    let row_len = crate::graph::shape::numel(&shape[shape.len() - axes..]);
    Ok((Some(copied), reduce::Block::rows(kept, row_len)))
}

/// How a reduction reads its input in place, if it can: `shape` is the kept axes then the
/// `reduced` ones, and the input qualifies when, for some split of the kept axes into outer
/// and inner, `layout` is row-major over (outer, reduced, inner).
pub fn reduction_block(shape: &[usize], layout: &Layout, reduced: usize) -> Option<reduce::Block> {
    let n = shape.len();
    let kept = n - reduced;
    (0..=kept).rev().find_map(|split| {
        let order: Vec<usize> = (0..split).chain(kept..n).chain(split..kept).collect();
        let permuted: Vec<usize> = order.iter().map(|&a| shape[a]).collect();
        let strides: Vec<isize> = order.iter().map(|&a| layout.strides[a]).collect();
        let candidate = Layout {
            strides,
            offset: layout.offset,
        };
        candidate.is_contiguous(&permuted).then(|| reduce::Block {
            rows: crate::graph::shape::numel(&shape[..split]),
            row_len: crate::graph::shape::numel(&shape[kept..]),
            inner: crate::graph::shape::numel(&shape[split..kept]),
            offset: layout.offset,
        })
    })
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
    let sources: Vec<&GpuBuffer> = data.iter().map(GpuInput::buffer).collect();
    let out = crate::gpu::device::buffers::create_output(gpu, node.size(), &sources)?;
    let out_strides = crate::graph::shape::contiguous_strides(node.shape());
    let mut start = 0;
    for (x, d) in inputs.iter().zip(data) {
        let (from, to) = (x.dtype(), node.dtype());
        let input = Operand {
            buffer: d.buffer(),
            strides: d.layout.strides.clone(),
            offset: d.layout.offset,
        };
        let placement = elementwise::Placement {
            strides: &out_strides,
            offset: start * out_strides[axis] as usize,
        };
        let key = KernelKey::new("copy_into", "", &[from, to]);
        let source = || elementwise::copy_into_source(from, to);
        elementwise::record(
            gpu,
            batch,
            key,
            source,
            x.shape(),
            &[input],
            Some(placement),
            [0; 4],
            &out,
        )?;
        start += x.shape()[axis];
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reductions_read_rows_and_columns_in_place() {
        let block = |shape: &[usize], strides: &[isize], offset, reduced| {
            let layout = Layout {
                strides: strides.to_vec(),
                offset,
            };
            reduction_block(shape, &layout, reduced).map(|b| (b.rows, b.row_len, b.inner, b.offset))
        };
        // [4, 5] over its last axis: rows.
        assert_eq!(block(&[4, 5], &[5, 1], 0, 1), Some((4, 5, 1, 0)));
        // [4, 5] over axis 0, seen as the transpose [5, 4]: columns.
        assert_eq!(block(&[5, 4], &[1, 5], 3, 1), Some((1, 4, 5, 3)));
        // [2, 3, 4] over axis 1, moved last: [2, 4, 3].
        assert_eq!(block(&[2, 4, 3], &[12, 1, 4], 0, 1), Some((2, 3, 4, 0)));
        // Everything: one row.
        assert_eq!(block(&[2, 3], &[3, 1], 0, 2), Some((1, 6, 1, 0)));
        // A strided slice has no block.
        assert_eq!(block(&[4, 5], &[10, 2], 0, 1), None);
    }
}
