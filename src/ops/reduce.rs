//! Reductions (`sum prod max min argmax argmin mean logsumexp`) and `softmax`. The reduced axes
//! are moved last with a transpose view, so kernels only ever fold contiguous trailing axes;
//! `keepdims` is a reshape view of the result.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::primitive::{BinaryOp, Primitive, ReduceOp, RowNorm, UnaryOp};
use crate::graph::shape::{fmt_shape, normalize_axes, numel};
use crate::ops::creation::scalar;
use crate::ops::{binary, reshape, transpose, unary, where_};
use crate::stream::Stream;

/// The normalized axes of a reduction: all of them when `axes` is `None`.
pub(crate) fn reduced_axes(op: &str, x: &Array, axes: Option<&[isize]>) -> Result<Vec<usize>> {
    match axes {
        Some(axes) => normalize_axes(op, axes, x.ndim()),
        None => Ok((0..x.ndim()).collect()),
    }
}

/// `op` over `axes` (all when `None`). Arg reductions take at most one axis.
pub fn reduce(
    op: ReduceOp,
    x: &Array,
    axes: Option<&[isize]>,
    keepdims: bool,
    stream: impl Into<Stream>,
) -> Result<Array> {
    let stream: Stream = stream.into();
    let reduced = reduced_axes(op.name(), x, axes)?;
    if op.is_arg() && axes.is_some_and(|a| a.len() != 1) {
        return Err(Error::Value(format!(
            "{}: takes one axis, or none to reduce the flattened array",
            op.name()
        )));
    }
    let kept: Vec<usize> = (0..x.ndim()).filter(|a| !reduced.contains(a)).collect();
    let reduced_size = numel(&reduced.iter().map(|&a| x.shape()[a]).collect::<Vec<_>>());
    let has_identity = matches!(op, ReduceOp::Sum | ReduceOp::Prod);
    let out_size = numel(&kept.iter().map(|&a| x.shape()[a]).collect::<Vec<_>>());
    if reduced_size == 0 && !has_identity && out_size > 0 {
        return Err(Error::Value(format!(
            "{}: cannot reduce an empty array of shape {}; the reduction has no identity",
            op.name(),
            fmt_shape(x.shape())
        )));
    }
    let order: Vec<isize> = kept.iter().chain(&reduced).map(|&a| a as isize).collect();
    let moved = if order.iter().enumerate().all(|(i, &a)| i as isize == a) {
        x.clone()
    } else {
        transpose(x, Some(&order), stream)?
    };
    let shape: Vec<usize> = kept.iter().map(|&a| x.shape()[a]).collect();
    let node = Array::from_primitive(
        Primitive::Reduce(op, reduced.len()),
        vec![moved],
        shape,
        op.out_dtype(x.dtype()),
        stream,
    );
    if keepdims {
        keep_dims(&node, x, &reduced, stream)
    } else {
        Ok(node)
    }
}

/// `result` reshaped to `x`'s rank with the reduced axes as 1.
fn keep_dims(
    result: &Array,
    x: &Array,
    reduced: &[usize],
    stream: impl Into<Stream>,
) -> Result<Array> {
    let stream: Stream = stream.into();
    let shape: Vec<isize> = (0..x.ndim())
        .map(|a| {
            if reduced.contains(&a) {
                1
            } else {
                x.shape()[a] as isize
            }
        })
        .collect();
    reshape(result, &shape, stream)
}

/// `x` as a float type: its own where it has one, else float32 (float-valued reductions of
/// integers compute in float32, as MLX's do).
pub(crate) fn as_float(x: &Array, stream: impl Into<Stream>) -> Array {
    let stream: Stream = stream.into();
    if x.dtype().is_float() {
        x.clone()
    } else {
        crate::ops::astype(x, DType::Float32, stream)
    }
}

/// The arithmetic mean over `axes`; `float32` for every input dtype. An empty mean is NaN.
pub fn mean(
    x: &Array,
    axes: Option<&[isize]>,
    keepdims: bool,
    stream: impl Into<Stream>,
) -> Result<Array> {
    let stream: Stream = stream.into();
    let reduced = reduced_axes("mean", x, axes)?;
    let count = numel(&reduced.iter().map(|&a| x.shape()[a]).collect::<Vec<_>>());
    let total = reduce(ReduceOp::Sum, &as_float(x, stream), axes, keepdims, stream)?;
    let count = scalar(count as f64, total.dtype())?;
    binary(BinaryOp::Divide, &total, &count, stream)
}

/// The maximum over `axes` with keepdims, made 0 where it is not finite, so that subtracting it
/// keeps `exp` in range without turning infinite rows into NaN.
fn stable_shift(x: &Array, axes: Option<&[isize]>, stream: impl Into<Stream>) -> Result<Array> {
    let stream: Stream = stream.into();
    let m = reduce(ReduceOp::Max, x, axes, true, stream)?;
    let inf = scalar(f64::INFINITY, m.dtype())?;
    let finite = binary(
        BinaryOp::Less,
        &unary(UnaryOp::Abs, &m, stream)?,
        &inf,
        stream,
    )?;
    let zero = scalar(0.0, m.dtype())?;
    where_(&finite, &m, &zero, stream)
}

/// `exp(x - shift)` and its sum over `axes` (kept), for `x` as float32.
fn exp_and_total(
    x: &Array,
    shift: &Array,
    axes: Option<&[isize]>,
    stream: impl Into<Stream>,
) -> Result<(Array, Array)> {
    let stream: Stream = stream.into();
    let e = unary(
        UnaryOp::Exp,
        &binary(BinaryOp::Subtract, x, shift, stream)?,
        stream,
    )?;
    let total = reduce(ReduceOp::Sum, &e, axes, true, stream)?;
    Ok((e, total))
}

/// `log(sum(exp(x)))` over `axes`, computed stably; `float32`. Over trailing axes it is one
/// fused node; otherwise a chain of reductions and elementwise ops.
pub fn logsumexp(
    x: &Array,
    axes: Option<&[isize]>,
    keepdims: bool,
    stream: impl Into<Stream>,
) -> Result<Array> {
    let stream: Stream = stream.into();
    let x = as_float(x, stream);
    let reduced = reduced_axes("logsumexp", &x, axes)?;
    let out = match trailing(&reduced, x.ndim()) {
        Some(n) => {
            let shape = x.shape()[..x.ndim() - n].to_vec();
            let primitive = Primitive::RowNorm(RowNorm::LogSumExp, n);
            let node = Array::from_primitive(primitive, vec![x.clone()], shape, x.dtype(), stream);
            if keepdims {
                return keep_dims(&node, &x, &reduced, stream);
            }
            return Ok(node);
        }
        None => {
            let shift = stable_shift(&x, axes, stream)?;
            let (_, total) = exp_and_total(&x, &shift, axes, stream)?;
            binary(
                BinaryOp::Add,
                &unary(UnaryOp::Log, &total, stream)?,
                &shift,
                stream,
            )?
        }
    };
    if keepdims {
        return Ok(out);
    }
    let shape: Vec<isize> = (0..x.ndim())
        .filter(|a| !reduced.contains(a))
        .map(|a| x.shape()[a] as isize)
        .collect();
    reshape(&out, &shape, stream)
}

/// How many axes `reduced` covers if they are the last ones of `ndim`, in any order.
fn trailing(reduced: &[usize], ndim: usize) -> Option<usize> {
    let n = reduced.len();
    let mut sorted = reduced.to_vec();
    sorted.sort_unstable();
    sorted
        .iter()
        .enumerate()
        .all(|(i, &a)| a == ndim - n + i)
        .then_some(n)
}

/// `exp(x) / sum(exp(x))` over `axes`, computed stably; `float32`. As in MLX, a row that is
/// all -inf or holds +inf gives NaN.
pub fn softmax(x: &Array, axes: Option<&[isize]>, stream: impl Into<Stream>) -> Result<Array> {
    let stream: Stream = stream.into();
    let x = as_float(x, stream);
    let reduced = reduced_axes("softmax", &x, axes)?;
    if let Some(n) = trailing(&reduced, x.ndim()) {
        let primitive = Primitive::RowNorm(RowNorm::Softmax, n);
        let shape = x.shape().to_vec();
        let dtype = x.dtype();
        let node = Array::from_primitive(primitive, vec![x], shape, dtype, stream);
        return Ok(node);
    }
    let shift = reduce(ReduceOp::Max, &x, axes, true, stream)?;
    let (e, total) = exp_and_total(&x, &shift, axes, stream)?;
    binary(BinaryOp::Divide, &e, &total, stream)
}
