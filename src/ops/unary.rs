//! Elementwise unary ops and `astype`.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::primitive::{Primitive, UnaryOp};
use crate::stream::Stream;

/// `op(x)` on `stream`. Float-only ops (`exp`, `sin`, …) give `float32` for integer and bool
/// inputs; `logicalNot` gives `bool`.
///
/// ```
/// use tandem::{Array, DType, Device, ops::unary, graph::primitive::UnaryOp};
/// let x = Array::from_slice(&[1i32, 2], &[2]).unwrap();
/// assert_eq!(unary(UnaryOp::Exp, &x, Device::Cpu).unwrap().dtype(), DType::Float32);
/// ```
pub fn unary(op: UnaryOp, x: &Array, stream: impl Into<Stream>) -> Result<Array> {
    let stream: Stream = stream.into();
    if op == UnaryOp::Neg && x.dtype() == DType::Bool {
        return Err(Error::DType(
            "neg: not supported for bool arrays; use logicalNot".into(),
        ));
    }
    let dtype = op.out_dtype(x.dtype());
    Ok(node(op, x, dtype, stream))
}

/// `x` converted to `dtype`, with C's rules (see `cpu/cast.rs`).
pub fn astype(x: &Array, dtype: DType, stream: impl Into<Stream>) -> Array {
    let stream: Stream = stream.into();
    node(UnaryOp::Cast, x, dtype, stream)
}

fn node(op: UnaryOp, x: &Array, dtype: DType, stream: impl Into<Stream>) -> Array {
    let stream: Stream = stream.into();
    Array::from_primitive(
        Primitive::Unary(op),
        vec![x.clone()],
        x.shape().to_vec(),
        dtype,
        stream,
    )
}

/// The largest finite value of a float dtype.
fn largest_finite(dtype: DType) -> f32 {
    match dtype {
        DType::Float16 => 65504.0,
        DType::BFloat16 => f32::from_bits(0x7f7f_0000),
        _ => f32::MAX,
    }
}

/// MLX's `nan_to_num`: NaN becomes `nan`, +inf `posinf` and -inf `neginf` (MLX's defaults: 0
/// and the largest finite float32 of each sign). Integer and bool arrays come back as they
/// are. Built from `isnan`, `isinf` and `where`, which fusion makes one kernel.
pub fn nan_to_num(
    x: &Array,
    nan: f32,
    posinf: Option<f32>,
    neginf: Option<f32>,
    stream: impl Into<Stream>,
) -> Result<Array> {
    let stream: Stream = stream.into();
    let dtype = x.dtype();
    if !dtype.is_float() {
        return Ok(astype(x, dtype, stream));
    }
    let scalar = |v: f32| crate::ops::creation::scalar(v as f64, dtype);
    let largest = largest_finite(dtype);
    let (posinf, neginf) = (posinf.unwrap_or(largest), neginf.unwrap_or(-largest));
    let positive = crate::ops::binary(
        crate::graph::primitive::BinaryOp::Greater,
        x,
        &scalar(0.0)?,
        stream,
    )?;
    let infinity = crate::ops::where_(&positive, &scalar(posinf)?, &scalar(neginf)?, stream)?;
    let finite_or_nan =
        crate::ops::where_(&unary(UnaryOp::IsInf, x, stream)?, &infinity, x, stream)?;
    crate::ops::where_(
        &unary(UnaryOp::IsNan, x, stream)?,
        &scalar(nan)?,
        &finite_or_nan,
        stream,
    )
}
