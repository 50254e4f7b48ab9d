//! Elementwise binary ops with NumPy broadcasting and MLX's dtype promotion, and the ops built
//! on them: `where` and `clip`.

use crate::array::Array;
use crate::dtype::promote;
use crate::error::Result;
use crate::graph::primitive::{BinaryOp, Primitive};
use crate::graph::shape::broadcast_shapes;
use crate::stream::Stream;

/// `op(a, b)`, broadcast, on `stream`.
///
/// ```
/// use tandem::{Array, DType, Device, ops::binary, graph::primitive::BinaryOp};
/// let a = Array::from_f32(&[1.0, 2.0], &[2, 1]).unwrap();
/// let b = Array::from_f32(&[10.0, 20.0, 30.0], &[3]).unwrap();
/// let c = binary(BinaryOp::Less, &a, &b, Device::Cpu).unwrap();
/// assert_eq!((c.shape(), c.dtype()), (&[2, 3][..], DType::Bool));
/// ```
pub fn binary(op: BinaryOp, a: &Array, b: &Array, stream: impl Into<Stream>) -> Result<Array> {
    let stream: Stream = stream.into();
    let shape = broadcast_shapes(op.name(), a.shape(), b.shape())?;
    let dtype = op.out_dtype(promote(a.dtype(), b.dtype()));
    let inputs = vec![a.clone(), b.clone()];
    Ok(Array::from_primitive(
        Primitive::Binary(op),
        inputs,
        shape,
        dtype,
        stream,
    ))
}

/// `a + b`.
pub fn add(a: &Array, b: &Array, stream: impl Into<Stream>) -> Result<Array> {
    let stream: Stream = stream.into();
    binary(BinaryOp::Add, a, b, stream)
}

/// `cond ? x : y` elementwise, all three broadcast together; the result has `x` and `y`'s
/// promoted dtype.
pub fn where_(cond: &Array, x: &Array, y: &Array, stream: impl Into<Stream>) -> Result<Array> {
    let stream: Stream = stream.into();
    let xy = broadcast_shapes("where", x.shape(), y.shape())?;
    let shape = broadcast_shapes("where", cond.shape(), &xy)?;
    let dtype = promote(x.dtype(), y.dtype());
    let inputs = vec![cond.clone(), x.clone(), y.clone()];
    Ok(Array::from_primitive(
        Primitive::Where,
        inputs,
        shape,
        dtype,
        stream,
    ))
}

/// `minimum(maximum(x, lo), hi)`, as MLX defines `clip`; NaN propagates.
pub fn clip(
    x: &Array,
    lo: Option<&Array>,
    hi: Option<&Array>,
    stream: impl Into<Stream>,
) -> Result<Array> {
    let stream: Stream = stream.into();
    let low = match lo {
        Some(lo) => binary(BinaryOp::Maximum, x, lo, stream)?,
        None => x.clone(),
    };
    match hi {
        Some(hi) => binary(BinaryOp::Minimum, &low, hi, stream),
        None => Ok(low),
    }
}
