//! Elementwise binary ops with NumPy broadcasting and MLX's dtype promotion.

use crate::array::Array;
use crate::dtype::promote;
use crate::error::Result;
use crate::primitive::{BinaryOp, Primitive};
use crate::shape::broadcast_shapes;
use crate::stream::Device;

/// `a + b`, broadcast, on `device`.
///
/// ```
/// use tandem::{Array, Device, ops::add};
/// let a = Array::from_f32(&[1.0, 2.0], &[2, 1]).unwrap();
/// let b = Array::from_f32(&[10.0, 20.0, 30.0], &[3]).unwrap();
/// assert_eq!(add(&a, &b, Device::Cpu).unwrap().shape(), &[2, 3]);
/// ```
pub fn add(a: &Array, b: &Array, device: Device) -> Result<Array> {
    binary(BinaryOp::Add, a, b, device)
}

fn binary(op: BinaryOp, a: &Array, b: &Array, device: Device) -> Result<Array> {
    let shape = broadcast_shapes(op.name(), a.shape(), b.shape())?;
    let dtype = promote(a.dtype(), b.dtype());
    Ok(Array::from_primitive(
        Primitive::Binary(op),
        vec![a.clone(), b.clone()],
        shape,
        dtype,
        device,
    ))
}
