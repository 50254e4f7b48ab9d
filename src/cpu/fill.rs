//! The values of creation ops (`zeros ones full arange linspace eye`), made where their stream
//! runs: here for the CPU, and for the GPU's `arange` and `linspace`, whose values are computed
//! in f64 and rounded once so that both devices agree exactly.

use crate::dtype::DType;
use crate::dtype::convert::from_number;
use crate::error::{Error, Result};
use crate::graph::primitive::Fill;

/// The words of an array of `shape` and `dtype` made by `fill`, row-major. A size that memory
/// cannot hold is an error, not an abort.
pub fn fill(fill: Fill, dtype: DType, shape: &[usize]) -> Result<Vec<u32>> {
    let len = crate::graph::shape::numel(shape);
    let mut words = Vec::new();
    words.try_reserve_exact(len).map_err(|_| {
        Error::MemoryLimit(format!(
            "{}: {len} elements do not fit in this device's memory",
            fill.name()
        ))
    })?;
    match fill {
        Fill::Constant(word) => words.resize(len, word),
        Fill::Eye(one) => {
            let n = shape.last().copied().unwrap_or(1);
            words.extend((0..len).map(|i| if i % (n + 1) == 0 { one } else { 0 }));
        }
        Fill::Arange { start, step } => {
            let (start, step) = (f64::from_bits(start), f64::from_bits(step));
            words.extend((0..len).map(|i| from_number(start + i as f64 * step, dtype)));
        }
        Fill::Linspace { start, stop } => {
            let (start, stop) = (f64::from_bits(start), f64::from_bits(stop));
            words.extend((0..len).map(|i| from_number(linspace_value(start, stop, len, i), dtype)));
        }
    }
    Ok(words)
}

/// Element `i` of `num` values from `start` to `stop`: the last is `stop` exactly.
fn linspace_value(start: f64, stop: f64, num: usize, i: usize) -> f64 {
    if num > 1 && i + 1 == num {
        return stop;
    }
    let step = if num > 1 {
        (stop - start) / (num - 1) as f64
    } else {
        0.0
    };
    start + i as f64 * step
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floats(fill_: Fill, len: usize) -> Vec<f32> {
        let shape = if matches!(fill_, Fill::Eye(_)) {
            vec![3, 3]
        } else {
            vec![len]
        };
        bytemuck::cast_vec(fill(fill_, DType::Float32, &shape).unwrap())
    }

    fn bits(start: f64, second: f64) -> (u64, u64) {
        (start.to_bits(), second.to_bits())
    }

    #[test]
    fn arange_steps_from_start() {
        let (start, step) = bits(0.0, 0.25);
        assert_eq!(
            floats(Fill::Arange { start, step }, 4),
            vec![0.0, 0.25, 0.5, 0.75]
        );
    }

    #[test]
    fn linspace_ends_exactly_at_stop() {
        let (start, stop) = bits(0.0, 1.0);
        assert_eq!(
            floats(Fill::Linspace { start, stop }, 5),
            vec![0.0, 0.25, 0.5, 0.75, 1.0]
        );
        let (start, stop) = bits(3.0, 9.0);
        assert_eq!(floats(Fill::Linspace { start, stop }, 1), vec![3.0]);
    }

    #[test]
    fn eye_has_ones_on_the_diagonal() {
        let one = 1f32.to_bits();
        assert_eq!(
            floats(Fill::Eye(one), 9),
            vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
        );
    }

    #[test]
    fn a_size_memory_cannot_hold_is_an_error() {
        let err = fill(Fill::Constant(0), DType::Float32, &[usize::MAX / 2]).unwrap_err();
        assert_eq!(err.kind(), "MemoryLimitError");
    }
}
