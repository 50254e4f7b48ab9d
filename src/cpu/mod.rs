//! CPU kernels in Rust: the reference implementation of every primitive, and the engine of the
//! `cpu` stream. Built with `+simd128` for wasm, so the contiguous loops vectorise.

pub mod binary;
pub mod cast;

use crate::array::Array;
use crate::primitive::Primitive;
use crate::shape::contiguous_broadcast_strides;

/// Computes `node` from its inputs' host words and returns its words.
pub fn eval(node: &Array, inputs: &[Array], words: &[std::rc::Rc<Vec<u32>>]) -> Vec<u32> {
    // Unevaluated nodes always have a primitive: only arrays made from data lack one.
    let primitive = node
        .primitive()
        .expect("an unevaluated node has a primitive");
    match primitive {
        Primitive::Binary(op) => {
            let strides: Vec<Vec<isize>> = inputs
                .iter()
                .map(|x| contiguous_broadcast_strides(x.shape(), node.shape()))
                .collect();
            let operand = |k: usize| binary::Operand {
                words: &words[k],
                dtype: inputs[k].dtype(),
                strides: &strides[k],
            };
            binary::binary(op, node.dtype(), node.shape(), operand(0), operand(1))
        }
    }
}
