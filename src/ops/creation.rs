//! Arrays made from a description rather than data: `zeros ones full arange linspace eye`.
//! Each is a lazy node that runs where its stream says: a fill kernel on the GPU, words made
//! in wasm on the CPU (`cpu/fill.rs`), so nothing is built before it is needed.

use crate::array::Array;
use crate::dtype::DType;
use crate::dtype::convert::from_number;
use crate::error::{Error, Result};
use crate::graph::primitive::{Fill, Primitive};
use crate::graph::shape::{MAX_ELEMENTS, checked_size};
use crate::stream::Stream;

fn node(op: &str, fill: Fill, shape: &[usize], dtype: DType, stream: Stream) -> Result<Array> {
    checked_size(op, shape)?;
    let primitive = Primitive::Fill(fill);
    Ok(Array::from_primitive(
        primitive,
        Vec::new(),
        shape.to_vec(),
        dtype,
        stream,
    ))
}

/// The word a fill of `dtype` writes for `value`: `value` rounded (or wrapped) to `dtype` once,
/// as a word of its compute dtype, because a packed dtype's fill runs in its compute dtype and
/// an `astype` packs the result (`Array::from_primitive`). `float16` 1.0 is the float32 word
/// of 1.0, not the float16 bits 0x3c00.
fn fill_word(value: f64, dtype: DType) -> u32 {
    crate::dtype::packed::widen(from_number(value, dtype), dtype)
}

/// A one-element host array of `value` in `dtype`: the constant an op builder pairs with an
/// array of that dtype (MLX's weak scalar), so that `mean` of `float16` stays `float16`.
pub(crate) fn scalar(value: f64, dtype: DType) -> Result<Array> {
    Array::from_words(vec![from_number(value, dtype)], &[], dtype)
}

/// An array of `shape` filled with `value`.
pub fn full(shape: &[usize], value: f64, dtype: DType, stream: impl Into<Stream>) -> Result<Array> {
    constant("full", shape, value, dtype, stream.into())
}

pub fn zeros(shape: &[usize], dtype: DType, stream: impl Into<Stream>) -> Result<Array> {
    constant("zeros", shape, 0.0, dtype, stream.into())
}

pub fn ones(shape: &[usize], dtype: DType, stream: impl Into<Stream>) -> Result<Array> {
    constant("ones", shape, 1.0, dtype, stream.into())
}

fn constant(op: &str, shape: &[usize], value: f64, dtype: DType, stream: Stream) -> Result<Array> {
    let fill = Fill::Constant(fill_word(value, dtype));
    node(op, fill, shape, dtype, stream)
}

/// `start, start + step, …` up to but excluding `stop`.
///
/// ```
/// use tandem::{DType, Device, ops::arange};
/// assert_eq!(arange(0.0, 5.0, 2.0, DType::Int32, Device::Cpu).unwrap().shape(), &[3]);
/// ```
pub fn arange(
    start: f64,
    stop: f64,
    step: f64,
    dtype: DType,
    stream: impl Into<Stream>,
) -> Result<Array> {
    if step == 0.0 || !step.is_finite() || !start.is_finite() || !stop.is_finite() {
        return Err(Error::Value(format!(
            "arange: start {start}, stop {stop} and step {step} must be finite, and step non-zero"
        )));
    }
    let count = ((stop - start) / step).ceil().max(0.0);
    if count > MAX_ELEMENTS as f64 {
        return Err(Error::MemoryLimit(format!(
            "arange: {count} elements are more than this device can address"
        )));
    }
    let fill = Fill::Arange {
        start: start.to_bits(),
        step: step.to_bits(),
    };
    node("arange", fill, &[count as usize], dtype, stream.into())
}

/// `num` evenly spaced values from `start` to `stop`, both included.
pub fn linspace(
    start: f64,
    stop: f64,
    num: usize,
    dtype: DType,
    stream: impl Into<Stream>,
) -> Result<Array> {
    if !start.is_finite() || !stop.is_finite() {
        return Err(Error::Value(format!(
            "linspace: start {start} and stop {stop} must be finite"
        )));
    }
    let fill = Fill::Linspace {
        start: start.to_bits(),
        stop: stop.to_bits(),
    };
    node("linspace", fill, &[num], dtype, stream.into())
}

/// The `n`×`n` identity matrix.
pub fn eye(n: usize, dtype: DType, stream: impl Into<Stream>) -> Result<Array> {
    let fill = Fill::Eye(fill_word(1.0, dtype));
    node("eye", fill, &[n, n], dtype, stream.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::Device;

    #[test]
    fn arange_counts_like_numpy() {
        let count =
            |a: f64, b: f64, s: f64| arange(a, b, s, DType::Float32, Device::Cpu).map(|x| x.size());
        assert_eq!(count(0.0, 1.0, 0.25).unwrap(), 4);
        assert_eq!(count(5.0, 0.0, 1.0).unwrap(), 0);
        assert_eq!(count(5.0, 0.0, -2.0).unwrap(), 3);
        assert_eq!(count(0.0, 1.0, 0.0).unwrap_err().kind(), "ValueError");
        assert_eq!(
            count(0.0, 1e300, 1.0).unwrap_err().kind(),
            "MemoryLimitError"
        );
    }

    #[test]
    fn creation_is_lazy_and_sizes_past_the_address_space_are_refused() {
        let big = zeros(&[1 << 14, 1 << 12], DType::Float32, Device::Gpu).unwrap();
        assert!(
            !big.is_evaluated(),
            "256 MiB of zeros allocates nothing until evaluated"
        );
        let err = zeros(&[usize::MAX, 2], DType::Float32, Device::Cpu).unwrap_err();
        assert_eq!(err.kind(), "MemoryLimitError");
        let huge = usize::MAX / 2;
        let err = ones(&[huge, 4], DType::Int32, Device::Cpu).unwrap_err();
        assert!(
            err.message().contains(&format!("[{huge}, 4]")),
            "{}",
            err.message()
        );
    }
}
