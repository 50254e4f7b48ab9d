//! CPU kernels in Rust: the reference implementation of every primitive, and the engine of the
//! `cpu` stream. Built with `+simd128` for wasm, so the contiguous loops vectorise.

pub mod binary;
pub mod cast;
pub mod elementwise;
pub mod matmul;
pub mod reduce;
pub mod select;
pub mod unary;

use crate::array::Array;
use crate::dtype::promote;
use crate::error::Result;
use crate::primitive::{Primitive, UnaryOp};
use crate::shape::Layout;
use cast::Operand;

/// An input's host words and layout.
pub struct HostInput<'a> {
    pub words: &'a [u32],
    pub layout: &'a Layout,
}

/// Computes `node` from its inputs' host data and returns its words, row-major.
pub fn eval(node: &Array, inputs: &[Array], host: &[HostInput]) -> Result<Vec<u32>> {
    // Unevaluated nodes always have a primitive: only arrays made from data lack one.
    let primitive = node
        .primitive()
        .expect("an unevaluated node has a primitive");
    match primitive {
        // A view that cannot share its input's storage: copy the input row-major.
        Primitive::View(_) => return contiguous(&inputs[0], &host[0]),
        Primitive::Reduce(op, axes) => {
            let input = &inputs[0];
            let words = contiguous(input, &host[0])?;
            let row_len = crate::shape::numel(&input.shape()[input.ndim() - axes..]);
            return Ok(reduce::reduce_rows(
                op,
                input.dtype(),
                &words,
                node.size(),
                row_len,
            ));
        }
        Primitive::Matmul => return Ok(eval_matmul(node, inputs, host)),
        Primitive::Concatenate(axis) => return concatenate(node, axis, inputs, host),
        _ => {}
    }
    let shape = node.shape();
    let strides: Vec<Vec<isize>> = inputs
        .iter()
        .zip(host)
        .map(|(x, h)| h.layout.broadcast(x.shape(), shape))
        .collect();
    let operand = |k: usize| Operand {
        words: host[k].words,
        dtype: inputs[k].dtype(),
        strides: &strides[k],
        offset: host[k].layout.offset,
    };
    match primitive {
        Primitive::Unary(op) => unary::unary(op, node.dtype(), shape, operand(0)),
        Primitive::Binary(op) => {
            let promoted = promote(inputs[0].dtype(), inputs[1].dtype());
            Ok(binary::binary(op, promoted, shape, operand(0), operand(1)))
        }
        Primitive::Where => Ok(select::select(
            node.dtype(),
            shape,
            operand(0),
            operand(1),
            operand(2),
        )),
        Primitive::View(_)
        | Primitive::Reduce(..)
        | Primitive::Matmul
        | Primitive::Concatenate(_) => {
            unreachable!("handled above")
        }
    }
}

/// An input's elements, row-major, in its own dtype.
pub fn contiguous(input: &Array, host: &HostInput) -> Result<Vec<u32>> {
    let x = Operand {
        words: host.words,
        dtype: input.dtype(),
        strides: &host.layout.strides,
        offset: host.layout.offset,
    };
    unary::unary(UnaryOp::Cast, input.dtype(), input.shape(), x)
}

/// Matmul of two float32 inputs broadcast to one batch shape: each is walked in place when its
/// matrices are dense (or one matrix is broadcast), and copied otherwise.
fn eval_matmul(node: &Array, inputs: &[Array], host: &[HostInput]) -> Vec<u32> {
    let operand = |k: usize| -> (std::borrow::Cow<[u32]>, usize, usize) {
        let (x, h) = (&inputs[k], &host[k]);
        match crate::shape::matrix_batch_stride(x.shape(), h.layout) {
            Some(stride) => (std::borrow::Cow::Borrowed(h.words), h.layout.offset, stride),
            None => {
                let words = contiguous(x, h).expect("a float32 copy cannot fail");
                let n = x.ndim();
                (
                    std::borrow::Cow::Owned(words),
                    0,
                    x.shape()[n - 2] * x.shape()[n - 1],
                )
            }
        }
    };
    let (a, b) = (operand(0), operand(1));
    let shape = node.shape();
    let n = shape.len();
    let k = inputs[0].shape()[n - 1];
    let batch = crate::shape::numel(&shape[..n - 2]);
    let out = matmul::matmul(
        batch,
        shape[n - 2],
        shape[n - 1],
        k,
        (bytemuck::cast_slice(&a.0), a.1, a.2),
        (bytemuck::cast_slice(&b.0), b.1, b.2),
    );
    bytemuck::cast_vec(out)
}

/// The inputs, converted to the node's dtype, laid side by side along `axis`.
fn concatenate(
    node: &Array,
    axis: usize,
    inputs: &[Array],
    host: &[HostInput],
) -> Result<Vec<u32>> {
    let shape = node.shape();
    let inner = crate::shape::numel(&shape[axis + 1..]);
    let outer = crate::shape::numel(&shape[..axis]);
    let row = shape[axis] * inner;
    let mut out = vec![0u32; node.size()];
    let mut start = 0;
    for (x, h) in inputs.iter().zip(host) {
        let words = cast::cast(&contiguous(x, h)?, x.dtype(), node.dtype()).into_owned();
        let chunk = x.shape()[axis] * inner;
        for o in 0..outer {
            out[o * row + start..o * row + start + chunk]
                .copy_from_slice(&words[o * chunk..(o + 1) * chunk]);
        }
        start += chunk;
    }
    Ok(out)
}
