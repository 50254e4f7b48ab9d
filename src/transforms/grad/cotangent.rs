//! Bringing a cotangent back to what its input is: its dtype, and its shape where the op
//! broadcast the input. Every rule file uses these; they use none of the rules.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::Result;
use crate::graph::primitive::ReduceOp;
use crate::ops;
use crate::stream::Stream;

/// `x` in `dtype`: itself when it has it already, else converted (a conversion is a kernel).
pub(super) fn in_dtype(x: &Array, dtype: DType, s: Stream) -> Array {
    match x.dtype() == dtype {
        true => x.clone(),
        false => ops::astype(x, dtype, s),
    }
}

/// `g` summed over the axes a broadcast from `shape` added or repeated.
pub(super) fn unbroadcast(g: &Array, shape: &[usize], s: Stream) -> Result<Array> {
    if g.shape() == shape {
        return Ok(g.clone());
    }
    let extra = g.ndim() - shape.len();
    let repeated = shape
        .iter()
        .enumerate()
        .filter(|&(i, &d)| d == 1 && g.shape()[extra + i] != 1)
        .map(|(i, _)| extra + i);
    let axes: Vec<isize> = (0..extra).chain(repeated).map(|a| a as isize).collect();
    let summed = ops::reduce(ReduceOp::Sum, g, Some(&axes), false, s)?;
    let dims: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
    ops::reshape(&summed, &dims, s)
}
