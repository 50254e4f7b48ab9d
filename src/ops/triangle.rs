//! `tril` and `triu`: the lower or upper triangle of the last two axes, the rest zero. A mask
//! made of two `arange`s compared (fused with the `where` into one kernel).

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::primitive::BinaryOp;
use crate::ops::{arange, binary, expand_dims, where_, zeros};
use crate::stream::Stream;

/// Elements on and below the `k`th diagonal (`k > 0` above the main one); the rest zero.
pub fn tril(x: &Array, k: i64, stream: impl Into<Stream>) -> Result<Array> {
    triangle("tril", x, k, BinaryOp::LessEqual, stream.into())
}

/// Elements on and above the `k`th diagonal; the rest zero.
pub fn triu(x: &Array, k: i64, stream: impl Into<Stream>) -> Result<Array> {
    triangle("triu", x, k, BinaryOp::GreaterEqual, stream.into())
}

/// `x` where `column - row` compares with `k` by `keep`, else 0 of `x`'s dtype.
fn triangle(op: &str, x: &Array, k: i64, keep: BinaryOp, stream: Stream) -> Result<Array> {
    let n = x.ndim();
    if n < 2 {
        return Err(Error::Value(format!(
            "{op}: the array must have at least 2 axes, got shape {:?}",
            x.shape()
        )));
    }
    let (rows, columns) = (x.shape()[n - 2], x.shape()[n - 1]);
    // int32 holds every offset of an addressable matrix; k is clamped to what can matter.
    let k = k.clamp(-(rows as i64) - 1, columns as i64 + 1) as f64;
    let row = expand_dims(
        &arange(0.0, rows as f64, 1.0, DType::Int32, stream)?,
        &[1],
        stream,
    )?;
    let column = arange(-k, columns as f64 - k, 1.0, DType::Int32, stream)?;
    // column - k against row: the mask of `column - row keep k`.
    let mask = binary(keep, &column, &row, stream)?;
    where_(&mask, x, &zeros(&[], x.dtype(), stream)?, stream)
}
