//! The running reductions' rules (`Primitive::Scan`, along the last axis). Each is written for
//! an inclusive scan from the start; a reversed scan is that of the flipped row, and an
//! exclusive one the inclusive scan of the row shifted by one behind the op's identity
//! (`[id, x0, …, x(n-2)]`), whose output is the node's. All in O(n) memory a row:
//!
//! - sum: the transpose runs the other way (a reversed sum of `g`);
//! - prod: `sum_{j >= i} g_j y_j / x_i` before the row's first zero, the products that skip
//!   that zero at it (`sum_{j >= z} g_j y'_j`, `y'` the running product with the zero made
//!   one), and zero after it: MLX's values, zeros included;
//! - max and min: each output's `g` goes to the last position up to it that holds its value
//!   (MLX's convention for ties); those positions own contiguous runs of outputs, so each
//!   position sums a run by two reads of `cumsum(g)`;
//! - logaddexp: `exp(x_i - y_n) sum_{j >= i} g_j exp(y_n - y_j)`, `y_n` the row's total.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::Result;
use crate::graph::primitive::{BinaryOp, ScanOp, UnaryOp};
use crate::ops;
use crate::stream::Stream;

/// The cotangent of the scan's input `x` for its output `y` and cotangent `g`.
pub(super) fn input_cotangent(
    op: ScanOp,
    (reverse, inclusive): (bool, bool),
    x: &Array,
    y: &Array,
    g: &Array,
    s: Stream,
) -> Result<Option<Array>> {
    let n = x.shape().last().copied().unwrap_or(1);
    if !x.dtype().is_float() || n == 0 {
        return Ok(None);
    }
    let flip = |a: &Array| match reverse {
        true => flipped(a, s),
        false => Ok(a.clone()),
    };
    let (x, y, g) = (flip(x)?, flip(y)?, flip(g)?);
    let gx = match inclusive {
        true => forward(op, &x, &y, &g, s)?,
        false => {
            let shifted = shift_in(&x, identity(op), s)?;
            shift_out(&forward(op, &shifted, &y, &g, s)?, s)?
        }
    };
    flip(&gx).map(Some)
}

/// The rule of an inclusive scan from the start.
fn forward(op: ScanOp, x: &Array, y: &Array, g: &Array, s: Stream) -> Result<Array> {
    let bin = |op, a: &Array, b: &Array| ops::binary(op, a, b, s);
    let run = |op, a: &Array, reverse| ops::scan(op, a, Some(-1), reverse, true, s);
    match op {
        ScanOp::Sum => run(ScanOp::Sum, g, true),
        ScanOp::Prod => product(x, y, g, s),
        ScanOp::Max | ScanOp::Min => extreme(x, y, g, s),
        ScanOp::LogAddExp => {
            let n = x.shape().last().copied().unwrap_or(1) as isize;
            let total = last(y, n, s)?;
            let weights = ops::unary(UnaryOp::Exp, &bin(BinaryOp::Subtract, &total, y)?, s)?;
            let sums = run(ScanOp::Sum, &bin(BinaryOp::Multiply, g, &weights)?, true)?;
            let scale = ops::unary(UnaryOp::Exp, &bin(BinaryOp::Subtract, x, &total)?, s)?;
            bin(BinaryOp::Multiply, &scale, &sums)
        }
    }
}

/// A running product's slope, zeros included (see the module's comment).
fn product(x: &Array, y: &Array, g: &Array, s: Stream) -> Result<Array> {
    let bin = |op, a: &Array, b: &Array| ops::binary(op, a, b, s);
    let num = |v: f64, dtype| ops::creation::scalar(v, dtype);
    let zero = bin(BinaryOp::Equal, x, &num(0.0, x.dtype())?)?;
    let zeros_so_far = ops::scan(
        ScanOp::Sum,
        &ops::astype(&zero, DType::Int32, s),
        Some(-1),
        false,
        true,
        s,
    )?;
    let before = bin(BinaryOp::Equal, &zeros_so_far, &num(0.0, DType::Int32)?)?;
    let first = bin(
        BinaryOp::LogicalAnd,
        &zero,
        &bin(BinaryOp::Equal, &zeros_so_far, &num(1.0, DType::Int32)?)?,
    )?;
    let one = num(1.0, x.dtype())?;
    let reversed_sum = |v: &Array| ops::scan(ScanOp::Sum, v, Some(-1), true, true, s);
    let safe_x = ops::where_(&before, x, &one, s)?;
    let early = bin(
        BinaryOp::Divide,
        &reversed_sum(&bin(BinaryOp::Multiply, g, y)?)?,
        &safe_x,
    )?;
    let skipping = ops::scan(
        ScanOp::Prod,
        &ops::where_(&first, &one, x, s)?,
        Some(-1),
        false,
        true,
        s,
    )?;
    let at_zero = reversed_sum(&bin(BinaryOp::Multiply, g, &skipping)?)?;
    let later = ops::where_(&first, &at_zero, &num(0.0, x.dtype())?, s)?;
    ops::where_(&before, &early, &later, s)
}

/// A running maximum's (or minimum's) slope: the outputs whose value position `i` holds last
/// are `j` in `[i, next_i)`, `next_i` the next position that holds its own running value.
fn extreme(x: &Array, y: &Array, g: &Array, s: Stream) -> Result<Array> {
    let n = x.shape().last().copied().unwrap_or(1);
    let int = |v: f64| ops::creation::scalar(v, DType::Int32);
    let holds = ops::binary(BinaryOp::Equal, x, y, s)?;
    let positions = ops::arange(0.0, n as f64, 1.0, DType::Int32, s)?;
    let positions = ops::broadcast_to(&positions, x.shape(), s)?;
    let marked = ops::where_(&holds, &positions, &int(n as f64)?, s)?;
    // The next holding position after each (an exclusive scan from the end starts from the
    // integer maximum: n caps it).
    let next = ops::scan(ScanOp::Min, &marked, Some(-1), true, false, s)?;
    let next = ops::binary(BinaryOp::Minimum, &next, &int(n as f64)?, s)?;
    let end = ops::binary(BinaryOp::Subtract, &next, &int(1.0)?, s)?;
    let sums = ops::scan(ScanOp::Sum, g, Some(-1), false, true, s)?;
    let upto = ops::take_along_axis(&sums, &end, Some(-1), s)?;
    let before = ops::binary(BinaryOp::Subtract, &sums, g, s)?;
    let run = ops::binary(BinaryOp::Subtract, &upto, &before, s)?;
    ops::where_(&holds, &run, &ops::creation::scalar(0.0, g.dtype())?, s)
}

/// The op's identity, which an exclusive scan starts from.
fn identity(op: ScanOp) -> f64 {
    match op {
        ScanOp::Sum => 0.0,
        ScanOp::Prod => 1.0,
        ScanOp::Max | ScanOp::LogAddExp => f64::NEG_INFINITY,
        ScanOp::Min => f64::INFINITY,
    }
}

/// The row's last element, kept as an axis of one (it broadcasts along the row).
fn last(a: &Array, n: isize, s: Stream) -> Result<Array> {
    let (start, stop) = ends(a, n - 1, n);
    ops::slice(a, &start, &stop, None, s)
}

/// `a` flipped along its last axis.
fn flipped(a: &Array, s: Stream) -> Result<Array> {
    let n = a.shape().last().copied().unwrap_or(0) as isize;
    let (start, stop) = ends(a, -1, -n - 1);
    let mut steps = vec![1isize; a.ndim()];
    *steps.last_mut().expect("a scan's input has an axis") = -1;
    ops::slice(a, &start, &stop, Some(&steps), s)
}

/// `[value, a0, …, a(n-2)]` along the last axis.
fn shift_in(a: &Array, value: f64, s: Stream) -> Result<Array> {
    let n = a.shape().last().copied().unwrap_or(0) as isize;
    let mut shape = a.shape().to_vec();
    *shape.last_mut().expect("a scan's input has an axis") = 1;
    let head = ops::full(&shape, value, a.dtype(), s)?;
    let (start, stop) = ends(a, 0, n - 1);
    let body = ops::slice(a, &start, &stop, None, s)?;
    ops::concatenate(&[head, body], -1, s)
}

/// `[a1, …, a(n-1), 0]` along the last axis: the cotangent of the unshifted row.
fn shift_out(a: &Array, s: Stream) -> Result<Array> {
    let n = a.shape().last().copied().unwrap_or(0) as isize;
    let (start, stop) = ends(a, 1, n);
    let body = ops::slice(a, &start, &stop, None, s)?;
    let mut shape = a.shape().to_vec();
    *shape.last_mut().expect("a scan's input has an axis") = 1;
    let tail = ops::zeros(&shape, a.dtype(), s)?;
    ops::concatenate(&[body, tail], -1, s)
}

/// Slice bounds that take all of every axis but the last, and `[from, to)` of it.
fn ends(a: &Array, from: isize, to: isize) -> (Vec<isize>, Vec<isize>) {
    let mut start = vec![0isize; a.ndim()];
    let mut stop: Vec<isize> = a.shape().iter().map(|&d| d as isize).collect();
    if let (Some(b), Some(e)) = (start.last_mut(), stop.last_mut()) {
        (*b, *e) = (from, to);
    }
    (start, stop)
}
