//! `matmul` with MLX's rules: 1-D operands are promoted to matrices and the added axis removed
//! from the result, and batch axes broadcast.

use crate::array::Array;
use crate::dtype::{DType, promote};
use crate::error::{Error, Result};
use crate::graph::primitive::Primitive;
use crate::graph::shape::{broadcast_shapes, checked_size, fmt_shape};
use crate::ops::{broadcast_to, reshape};
use crate::stream::Stream;

/// The matrix product `a @ b`, batched over leading axes; float32 only, as in MLX.
///
/// ```
/// use tandem::{Array, Device, ops::matmul};
/// let a = Array::from_f32(&[0.0; 24], &[2, 3, 4]).unwrap();
/// let b = Array::from_f32(&[0.0; 20], &[4, 5]).unwrap();
/// assert_eq!(matmul(&a, &b, Device::Cpu).unwrap().shape(), &[2, 3, 5]);
/// ```
pub fn matmul(a: &Array, b: &Array, stream: impl Into<Stream>) -> Result<Array> {
    let stream: Stream = stream.into();
    if a.ndim() == 0 || b.ndim() == 0 {
        return Err(Error::Value(
            "matmul: scalars are not matrices; use multiply".into(),
        ));
    }
    let dtype = promote(a.dtype(), b.dtype());
    if !dtype.is_float() {
        return Err(Error::DType(format!(
            "matmul: only float types (float32, float16, bfloat16) are supported, got {} and {}",
            a.dtype().name(),
            b.dtype().name()
        )));
    }
    let a2 = if a.ndim() == 1 {
        reshape(a, &[1, a.size() as isize], stream)?
    } else {
        a.clone()
    };
    let b2 = if b.ndim() == 1 {
        reshape(b, &[b.size() as isize, 1], stream)?
    } else {
        b.clone()
    };
    let (ra, rb) = (a2.ndim(), b2.ndim());
    let (m, k, k2, n) = (
        a2.shape()[ra - 2],
        a2.shape()[ra - 1],
        b2.shape()[rb - 2],
        b2.shape()[rb - 1],
    );
    if k != k2 {
        return Err(Error::Shape(format!(
            "matmul: shapes {} and {} do not fit: the inner dimensions are {k} and {k2}",
            fmt_shape(a.shape()),
            fmt_shape(b.shape())
        )));
    }
    let batch = broadcast_shapes("matmul", &a2.shape()[..ra - 2], &b2.shape()[..rb - 2])?;
    let with = |tail: [usize; 2]| [batch.clone(), tail.to_vec()].concat();
    checked_size("matmul", &with([m, n]))?;
    let a3 = cast_and_broadcast(&a2, &with([m, k]), stream)?;
    let b3 = cast_and_broadcast(&b2, &with([k, n]), stream)?;
    let out = Array::from_primitive(Primitive::Matmul, vec![a3, b3], with([m, n]), dtype, stream);
    let mut shape: Vec<isize> = out.shape().iter().map(|&d| d as isize).collect();
    if b.ndim() == 1 {
        shape.pop();
    }
    if a.ndim() == 1 {
        shape.remove(shape.len() - usize::from(b.ndim() != 1) - 1);
    }
    if a.ndim() == 1 || b.ndim() == 1 {
        reshape(&out, &shape, stream)
    } else {
        Ok(out)
    }
}

fn cast_and_broadcast(x: &Array, shape: &[usize], stream: impl Into<Stream>) -> Result<Array> {
    let stream: Stream = stream.into();
    let x = if x.dtype().is_float() {
        x.clone()
    } else {
        crate::ops::astype(x, DType::Float32, stream)
    };
    if x.shape() == shape {
        Ok(x)
    } else {
        broadcast_to(&x, shape, stream)
    }
}

/// The outer product of `a` and `b` flattened: `[a.size, b.size]`, in their promoted dtype.
pub fn outer(a: &Array, b: &Array, stream: impl Into<Stream>) -> Result<Array> {
    let stream: Stream = stream.into();
    let column = reshape(a, &[-1, 1], stream)?;
    let row = reshape(b, &[1, -1], stream)?;
    crate::ops::binary(
        crate::graph::primitive::BinaryOp::Multiply,
        &column,
        &row,
        stream,
    )
}

/// MLX's `addmm`: `alpha * (a @ b) + beta * c`, `c` broadcast to the product's shape; float32.
pub fn addmm(
    c: &Array,
    a: &Array,
    b: &Array,
    alpha: f32,
    beta: f32,
    stream: impl Into<Stream>,
) -> Result<Array> {
    use crate::graph::primitive::BinaryOp::{Add, Multiply};
    let stream: Stream = stream.into();
    if !promote(promote(a.dtype(), b.dtype()), c.dtype()).is_float() {
        return Err(Error::DType(format!(
            "addmm: only float types (float32, float16, bfloat16) are supported, got {}, {} and {}",
            c.dtype().name(),
            a.dtype().name(),
            b.dtype().name()
        )));
    }
    let product = matmul(a, b, stream)?;
    let scale = |x: &Array, by: f32| -> Result<Array> {
        if by == 1.0 {
            return Ok(x.clone());
        }
        let by = crate::ops::creation::scalar(by as f64, x.dtype())?;
        crate::ops::binary(Multiply, x, &by, stream)
    };
    let sum = crate::ops::binary(Add, &scale(&product, alpha)?, &scale(c, beta)?, stream)?;
    if sum.shape() != product.shape() {
        return Err(Error::Shape(format!(
            "addmm: c of shape {} does not broadcast to the product's shape {}",
            fmt_shape(c.shape()),
            fmt_shape(product.shape())
        )));
    }
    Ok(sum)
}
