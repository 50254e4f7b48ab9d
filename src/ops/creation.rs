//! Arrays made from a description rather than data: `zeros ones full arange linspace eye`.
//! They are built on the host; the runtime uploads them when a GPU op first reads them.

use crate::array::Array;
use crate::cpu::cast::from_number;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::numel;

/// An array of `shape` filled with `value`.
pub fn full(shape: &[usize], value: f64, dtype: DType) -> Result<Array> {
    Array::from_words(vec![from_number(value, dtype); numel(shape)], shape, dtype)
}

pub fn zeros(shape: &[usize], dtype: DType) -> Result<Array> {
    full(shape, 0.0, dtype)
}

pub fn ones(shape: &[usize], dtype: DType) -> Result<Array> {
    full(shape, 1.0, dtype)
}

/// `start, start + step, …` up to but excluding `stop`.
///
/// ```
/// use tandem::{DType, ops::arange};
/// assert_eq!(arange(0.0, 5.0, 2.0, DType::Int32).unwrap().shape(), &[3]);
/// ```
pub fn arange(start: f64, stop: f64, step: f64, dtype: DType) -> Result<Array> {
    if step == 0.0 || !step.is_finite() || !start.is_finite() || !stop.is_finite() {
        return Err(Error::Value(format!(
            "arange: start {start}, stop {stop} and step {step} must be finite, and step non-zero"
        )));
    }
    let count = ((stop - start) / step).ceil().max(0.0) as usize;
    let words = (0..count)
        .map(|i| from_number(start + i as f64 * step, dtype))
        .collect();
    Array::from_words(words, &[count], dtype)
}

/// `num` evenly spaced values from `start` to `stop`, both included.
pub fn linspace(start: f64, stop: f64, num: usize, dtype: DType) -> Result<Array> {
    let step = if num > 1 {
        (stop - start) / (num - 1) as f64
    } else {
        0.0
    };
    let value = |i: usize| {
        if i + 1 == num && num > 1 {
            stop
        } else {
            start + i as f64 * step
        }
    };
    let words = (0..num).map(|i| from_number(value(i), dtype)).collect();
    Array::from_words(words, &[num], dtype)
}

/// The `n`×`n` identity matrix.
pub fn eye(n: usize, dtype: DType) -> Result<Array> {
    let words = (0..n * n)
        .map(|i| from_number(f64::from(u8::from(i % (n + 1) == 0)), dtype))
        .collect();
    Array::from_words(words, &[n, n], dtype)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floats(a: &Array) -> Vec<f32> {
        let data = a.data().unwrap();
        let words = host_words(&data);
        words.iter().map(|&w| f32::from_bits(w)).collect()
    }

    fn host_words(data: &crate::array::Data) -> Vec<u32> {
        // Host-built arrays have their host copy already; no runtime is needed to read it.
        let host = data
            .storage
            .host_words()
            .expect("creation ops build on the host");
        host.to_vec()
    }

    #[test]
    fn arange_counts_like_numpy() {
        assert_eq!(
            floats(&arange(0.0, 1.0, 0.25, DType::Float32).unwrap()),
            vec![0.0, 0.25, 0.5, 0.75]
        );
        assert_eq!(arange(5.0, 0.0, 1.0, DType::Float32).unwrap().size(), 0);
        assert_eq!(arange(5.0, 0.0, -2.0, DType::Float32).unwrap().size(), 3);
        assert_eq!(
            arange(0.0, 1.0, 0.0, DType::Float32).unwrap_err().kind(),
            "ValueError"
        );
    }

    #[test]
    fn linspace_ends_exactly_at_stop() {
        assert_eq!(
            floats(&linspace(0.0, 1.0, 5, DType::Float32).unwrap()),
            vec![0.0, 0.25, 0.5, 0.75, 1.0]
        );
        assert_eq!(
            floats(&linspace(3.0, 9.0, 1, DType::Float32).unwrap()),
            vec![3.0]
        );
    }

    #[test]
    fn eye_has_ones_on_the_diagonal() {
        assert_eq!(
            floats(&eye(3, DType::Float32).unwrap()),
            vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
        );
    }
}
