//! CPU kernels in Rust: the reference implementation of every primitive, and the engine of the
//! `cpu` stream. Built with `+simd128` for wasm, so the contiguous loops vectorise.

pub mod binary;
pub mod cast;
pub mod elementwise;
pub mod fill;
pub mod fused;
pub mod gather;
pub mod lanes;
pub mod math;
pub mod matmul;
pub mod norm;
pub mod patches;
pub mod pool;
mod product;
pub mod random;
pub mod reduce;
pub mod row_norm;
pub mod scan;
pub mod scatter;
pub mod select;
pub mod simd;
pub mod sort;
pub mod unary;

use std::borrow::Cow;

use crate::dtype::{DType, promote};
use crate::error::Result;
use crate::graph::primitive::{Primitive, UnaryOp};
use crate::graph::shape::Layout;
use cast::Operand;

/// An input's host words and layout.
pub struct HostInput<'a> {
    pub words: &'a [u32],
    pub layout: &'a Layout,
}

/// What a kernel reads of a node or of an input besides its words: its dtype and shape. Kernels
/// take these, not arrays, so that a kernel can run on a pool worker (`cpu::queue`): an array
/// is the page thread's alone.
#[derive(Clone, Debug)]
pub struct Spec {
    dtype: DType,
    shape: Vec<usize>,
}

impl Spec {
    pub fn new(dtype: DType, shape: &[usize]) -> Spec {
        Spec {
            dtype,
            shape: shape.to_vec(),
        }
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    pub fn size(&self) -> usize {
        crate::graph::shape::numel(&self.shape)
    }
}

/// Computes a node of `primitive` from its inputs' host data and returns its words, row-major.
pub fn eval(
    primitive: &Primitive,
    node: &Spec,
    inputs: &[Spec],
    host: &[HostInput],
) -> Result<Vec<u32>> {
    let shape = node.shape();
    match *primitive {
        Primitive::Unary(op) => unary::unary(
            op,
            node.dtype(),
            shape,
            operand(node, inputs, host, 0).as_operand(),
        ),
        Primitive::Binary(op) => {
            let promoted = promote(inputs[0].dtype(), inputs[1].dtype());
            let (a, b) = (
                operand(node, inputs, host, 0),
                operand(node, inputs, host, 1),
            );
            Ok(binary::binary(
                op,
                promoted,
                shape,
                a.as_operand(),
                b.as_operand(),
            ))
        }
        Primitive::Where => {
            let [c, x, y] = [0, 1, 2].map(|k| operand(node, inputs, host, k));
            Ok(select::select(
                node.dtype(),
                shape,
                c.as_operand(),
                x.as_operand(),
                y.as_operand(),
            ))
        }
        // A view that cannot share its input's storage: copy the input row-major.
        Primitive::View(_) => contiguous(&inputs[0], &host[0]),
        Primitive::Reduce(op, axes) => {
            let (words, rows, row_len) = rows_of(&inputs[0], &host[0], axes)?;
            Ok(reduce::reduce_rows(
                op,
                inputs[0].dtype(),
                &words,
                rows,
                row_len,
            ))
        }
        Primitive::RowNorm(op, axes) => {
            let (words, rows, row_len) = rows_of(&inputs[0], &host[0], axes)?;
            let x = bytemuck::cast_slice(&words);
            Ok(row_norm::row_norm(op, x, rows, row_len))
        }
        Primitive::Fused(ref expr) => eval_fused(expr, node, inputs, host),
        Primitive::Matmul => Ok(product::eval_matmul(inputs, host)),
        Primitive::MatmulThen(ref expr) => product::eval_matmul_then(expr, node, inputs, host),
        Primitive::PatchesThen(ref p, ref expr) => {
            product::eval_patches_then(p, expr, node, inputs, host)
        }
        Primitive::Concatenate(axis) => concatenate(node, axis, inputs, host),
        Primitive::Scan { .. }
        | Primitive::Norm { .. }
        | Primitive::Sort { .. }
        | Primitive::Gather(_)
        | Primitive::Scatter(_)
        | Primitive::Patches(_) => eval_axis_op(primitive, node, inputs, host),
        Primitive::Fill(fill) => fill::fill(fill, node.dtype(), shape),
        Primitive::Random(key, distribution) => Ok(random::draw(key, distribution, node.size())),
    }
}

/// The ops along an axis that models need: scans, norms and sorts along the last axis, and
/// the gather.
fn eval_axis_op(
    primitive: &Primitive,
    node: &Spec,
    inputs: &[Spec],
    host: &[HostInput],
) -> Result<Vec<u32>> {
    match *primitive {
        Primitive::Scan {
            op,
            reverse,
            inclusive,
        } => scan::eval(op, reverse, inclusive, node.dtype(), &inputs[0], &host[0]),
        Primitive::Norm {
            rms,
            weight,
            bias,
            eps,
        } => eval_norm(node, inputs, host, (rms, weight, bias, f32::from_bits(eps))),
        Primitive::Sort {
            indices,
            descending,
            keep,
        } => sort::eval(&inputs[0], &host[0], (indices, descending, keep)),
        Primitive::Gather(axis) => Ok(gather::gather(
            (inputs[0].shape(), &host[0]),
            (inputs[1].shape(), inputs[1].dtype(), &host[1]),
            node.shape(),
            axis,
        )),
        Primitive::Scatter(ref scatter) => scatter::eval(scatter, inputs, host),
        Primitive::Patches(ref p) => {
            let x = row_major(&inputs[0], &host[0])?;
            Ok(patches::patches(p, inputs[0].shape(), &x, node.shape()))
        }
        _ => unreachable!("eval sends only the axis ops here"),
    }
}

/// `layerNorm` or `rmsNorm` of the node's first input, with the affine rows that follow it.
fn eval_norm(
    node: &Spec,
    inputs: &[Spec],
    host: &[HostInput],
    (rms, weight, bias, eps): (bool, bool, bool, f32),
) -> Result<Vec<u32>> {
    let words: Vec<Cow<[u32]>> = inputs
        .iter()
        .zip(host)
        .map(|(x, h)| row_major(x, h))
        .collect::<Result<_>>()?;
    let floats = |k: usize| -> &[f32] { bytemuck::cast_slice(&words[k]) };
    let norm = norm::Norm {
        rms,
        eps,
        weight: weight.then(|| floats(1)),
        bias: bias.then(|| floats(1 + usize::from(weight))),
    };
    let row_len = node.shape().last().copied().unwrap_or(1);
    Ok(bytemuck::cast_vec(norm::norm(&norm, floats(0), row_len)))
}

/// A fused elementwise program over the node's shape.
fn eval_fused(
    expr: &crate::graph::primitive::FusedExpr,
    node: &Spec,
    inputs: &[Spec],
    host: &[HostInput],
) -> Result<Vec<u32>> {
    let operands: Vec<Broadcast> = (0..inputs.len())
        .map(|k| operand(node, inputs, host, k))
        .collect();
    let operands: Vec<Operand> = operands.iter().map(Broadcast::as_operand).collect();
    fused::fused(expr, node.shape(), &operands)
}

/// An input's words row-major, as rows over its last `axes` axes: the words, the number of
/// rows and their length.
fn rows_of<'a>(
    input: &Spec,
    host: &HostInput<'a>,
    axes: usize,
) -> Result<(Cow<'a, [u32]>, usize, usize)> {
    let shape = input.shape();
    let split = input.ndim() - axes;
    let (rows, row_len) = (
        crate::graph::shape::numel(&shape[..split]),
        crate::graph::shape::numel(&shape[split..]),
    );
    Ok((row_major(input, host)?, rows, row_len))
}

/// Input `k` of an elementwise node: its words and layout, with strides over the node's shape.
pub(crate) struct Broadcast<'a> {
    pub(crate) words: &'a [u32],
    pub(crate) dtype: crate::dtype::DType,
    pub(crate) strides: Vec<isize>,
    pub(crate) offset: usize,
}

impl Broadcast<'_> {
    pub(crate) fn as_operand(&self) -> Operand<'_> {
        Operand {
            words: self.words,
            dtype: self.dtype,
            strides: &self.strides,
            offset: self.offset,
        }
    }
}

pub(crate) fn operand<'a>(
    node: &Spec,
    inputs: &[Spec],
    host: &[HostInput<'a>],
    k: usize,
) -> Broadcast<'a> {
    Broadcast {
        words: host[k].words,
        dtype: inputs[k].dtype(),
        strides: host[k].layout.broadcast(inputs[k].shape(), node.shape()),
        offset: host[k].layout.offset,
    }
}

/// An input's elements, row-major, in its own dtype.
pub fn contiguous(input: &Spec, host: &HostInput) -> Result<Vec<u32>> {
    let x = Operand {
        words: host.words,
        dtype: input.dtype(),
        strides: &host.layout.strides,
        offset: host.layout.offset,
    };
    unary::unary(UnaryOp::Cast, input.dtype(), input.shape(), x)
}

/// An input's elements, row-major, in its own dtype: its storage itself when that is already
/// row-major, else a copy.
pub fn row_major<'a>(input: &Spec, host: &HostInput<'a>) -> Result<Cow<'a, [u32]>> {
    let n = input.size();
    if n == 0 {
        return Ok(Cow::Borrowed(&[]));
    }
    if host.layout.is_contiguous(input.shape()) {
        let dtype = input.dtype();
        let offset = host.layout.offset;
        // A packed view is its own whole words only from an element that starts a word to
        // one that ends one.
        if offset.is_multiple_of(dtype.per_word()) && n.is_multiple_of(dtype.per_word()) {
            let first = offset / dtype.per_word();
            return Ok(Cow::Borrowed(&host.words[first..first + dtype.words(n)]));
        }
    }
    contiguous(input, host).map(Cow::Owned)
}

/// The inputs, converted to the node's dtype, laid side by side along `axis`.
fn concatenate(node: &Spec, axis: usize, inputs: &[Spec], host: &[HostInput]) -> Result<Vec<u32>> {
    let shape = node.shape();
    let inner = crate::graph::shape::numel(&shape[axis + 1..]);
    let outer = crate::graph::shape::numel(&shape[..axis]);
    let row = shape[axis] * inner;
    let mut out = vec![0u32; node.size()];
    let mut start = 0;
    for (x, h) in inputs.iter().zip(host) {
        let words =
            crate::dtype::convert::cast(&row_major(x, h)?, x.size(), x.dtype(), node.dtype())
                .into_owned();
        let chunk = x.shape()[axis] * inner;
        for o in 0..outer {
            out[o * row + start..o * row + start + chunk]
                .copy_from_slice(&words[o * chunk..(o + 1) * chunk]);
        }
        start += chunk;
    }
    Ok(out)
}
