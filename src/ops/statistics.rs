//! Reductions composed of others: `var` and `std` (two passes: the mean, then the squared
//! deviations, which keeps the precision that E[x^2] - E[x]^2 loses), and `any` and `all`
//! (the largest and smallest of the array as bools).

use crate::array::Array;
use crate::dtype::DType;
use crate::error::Result;
use crate::graph::primitive::{BinaryOp, ReduceOp, UnaryOp};
use crate::graph::shape::numel;
use crate::ops::reduce::{as_float, reduced_axes};
use crate::ops::{astype, binary, mean, reduce, unary};
use crate::stream::Stream;

/// The variance over `axes` (all when `None`), divided by `N - ddof` (by 0, as MLX, when
/// `ddof >= N`: infinity, or NaN for an empty reduction); `float32` for every dtype.
pub fn var(
    x: &Array,
    axes: Option<&[isize]>,
    keepdims: bool,
    ddof: u32,
    stream: impl Into<Stream>,
) -> Result<Array> {
    let stream: Stream = stream.into();
    let reduced = reduced_axes("var", x, axes)?;
    let count = numel(&reduced.iter().map(|&a| x.shape()[a]).collect::<Vec<_>>());
    let x = as_float(x, stream);
    let centre = mean(&x, axes, true, stream)?;
    let deviation = binary(BinaryOp::Subtract, &x, &centre, stream)?;
    let squares = unary(UnaryOp::Square, &deviation, stream)?;
    let total = reduce(ReduceOp::Sum, &squares, axes, keepdims, stream)?;
    let divisor = count.saturating_sub(ddof as usize) as f32;
    binary(
        BinaryOp::Divide,
        &total,
        &crate::ops::creation::scalar(divisor as f64, total.dtype())?,
        stream,
    )
}

/// The standard deviation: the square root of [`var`].
pub fn std(
    x: &Array,
    axes: Option<&[isize]>,
    keepdims: bool,
    ddof: u32,
    stream: impl Into<Stream>,
) -> Result<Array> {
    let stream: Stream = stream.into();
    unary(
        UnaryOp::Sqrt,
        &var(x, axes, keepdims, ddof, stream)?,
        stream,
    )
}

/// Whether any element over `axes` is true (non-zero; NaN counts as true); `bool`. An empty
/// reduction is false.
pub fn any(
    x: &Array,
    axes: Option<&[isize]>,
    keepdims: bool,
    stream: impl Into<Stream>,
) -> Result<Array> {
    truth(
        "any",
        ReduceOp::Max,
        false,
        x,
        axes,
        keepdims,
        stream.into(),
    )
}

/// Whether every element over `axes` is true; `bool`. An empty reduction is true.
pub fn all(
    x: &Array,
    axes: Option<&[isize]>,
    keepdims: bool,
    stream: impl Into<Stream>,
) -> Result<Array> {
    truth("all", ReduceOp::Min, true, x, axes, keepdims, stream.into())
}

/// `any` or `all` as the max or min of `x` as bools. `max` and `min` have no identity for an
/// empty reduction, so an empty one appends the identity along the reduced axes first.
fn truth(
    op: &str,
    fold: ReduceOp,
    identity: bool,
    x: &Array,
    axes: Option<&[isize]>,
    keepdims: bool,
    stream: Stream,
) -> Result<Array> {
    let reduced = reduced_axes(op, x, axes)?;
    let truths = astype(x, DType::Bool, stream);
    let empty = reduced.iter().any(|&a| x.shape()[a] == 0);
    if !empty {
        return reduce(fold, &truths, axes, keepdims, stream);
    }
    // An empty reduction: the identity, over the kept axes' shape.
    let mut shape = x.shape().to_vec();
    for &a in &reduced {
        shape[a] = 1;
    }
    let filled = crate::ops::full(&shape, f64::from(u8::from(identity)), DType::Bool, stream)?;
    if keepdims {
        return Ok(filled);
    }
    let squeezed: Vec<isize> = reduced.iter().map(|&a| a as isize).collect();
    crate::ops::squeeze(&filled, Some(&squeezed), stream)
}
