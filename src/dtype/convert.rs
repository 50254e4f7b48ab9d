//! Conversion between dtypes, and from numbers, with C's rules: float to integer truncates toward
//! zero (saturating, NaN to 0), integers convert by two's-complement wrap-around, and anything to
//! `bool` tests for non-zero. These are the rules of the dtypes, shared by the CPU kernels, the
//! creation ops and the JS layer's data conversion. The packed dtypes convert through their
//! compute dtypes (`dtype::packed`): a float becomes `int8` or `uint8` through `int32` (so
//! 300.7 gives 44, as MLX and NumPy give it for every value in `int32`'s range).

use std::borrow::Cow;

use crate::dtype::{DType, packed};

/// The `len` elements in `words` of dtype `from` as storage of dtype `to`; borrowed when the
/// dtypes are the same.
pub fn cast(words: &[u32], len: usize, from: DType, to: DType) -> Cow<'_, [u32]> {
    if from == to {
        return Cow::Borrowed(words);
    }
    if !from.is_packed() && !to.is_packed() {
        return Cow::Owned(words.iter().map(|&w| cast_word(w, from, to)).collect());
    }
    let elements = (0..len).map(|i| cast_element(packed::element(words, from, i), from, to));
    Cow::Owned(packed::pack(elements, to))
}

/// A word of `from.compute()` as the bits of one element of `to`.
pub fn cast_element(word: u32, from: DType, to: DType) -> u32 {
    let w = cast_word(word, from.compute(), to.compute());
    if to == DType::Bool {
        // Nonzero-ness is decided in the compute dtype: 0.25 in float16 is true.
        return w;
    }
    packed::narrow(w, to)
}

/// A number (a JS number, a creation op's value) as the bits of one element of `dtype`:
/// rounded to the float type, or truncated and wrapped through i64 into the integer types
/// (non-finite values give 0).
pub fn from_number(value: f64, dtype: DType) -> u32 {
    match dtype {
        DType::Float16 | DType::BFloat16 | DType::Int8 | DType::Uint8 => {
            packed::from_number(value, dtype)
        }
        DType::Float32 => (value as f32).to_bits(),
        DType::Bool => u32::from(value != 0.0),
        DType::Int32 | DType::Uint32 => {
            (if value.is_finite() {
                value.trunc() as i64
            } else {
                0
            }) as u32
        }
    }
}

fn cast_word(w: u32, from: DType, to: DType) -> u32 {
    match (from, to) {
        _ if from == to => w,
        (_, DType::Bool) => u32::from(is_nonzero(w, from)),
        (DType::Float32, DType::Int32) => (f32::from_bits(w) as i32) as u32,
        (DType::Float32, DType::Uint32) => f32::from_bits(w) as u32,
        (DType::Int32, DType::Float32) => (w as i32 as f32).to_bits(),
        (DType::Uint32 | DType::Bool, DType::Float32) => (w as f32).to_bits(),
        // Bool, uint32 and int32 share their bit patterns for the values they have in common.
        (_, DType::Int32 | DType::Uint32) => w,
        _ => unreachable!("cast_word converts between word dtypes only"),
    }
}

fn is_nonzero(w: u32, dtype: DType) -> bool {
    match dtype {
        DType::Float32 => f32::from_bits(w) != 0.0,
        _ => w != 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_casts_go_through_the_compute_dtype() {
        let floats = [1.5f32.to_bits(), (-2.0f32).to_bits(), 300.7f32.to_bits()];
        let halves = cast(&floats, 3, DType::Float32, DType::Float16);
        assert_eq!(*halves, [0xc000_3e00, 0x5cb3]);
        let bytes = cast(&halves, 3, DType::Float16, DType::Int8);
        assert_eq!(*bytes, [0x002c_fe01]);
        let back = cast(&bytes, 3, DType::Int8, DType::Int32);
        assert_eq!(*back, [1, (-2i32) as u32, 44]);
    }

    #[test]
    fn float_to_int_truncates_toward_zero() {
        let words = [(-2.7f32).to_bits(), 2.7f32.to_bits()];
        let ints = cast(&words, 2, DType::Float32, DType::Int32);
        assert_eq!(*ints, [(-2i32) as u32, 2]);
    }

    #[test]
    fn negative_int_wraps_to_uint() {
        assert_eq!(
            *cast(&[(-1i32) as u32], 1, DType::Int32, DType::Uint32),
            [u32::MAX]
        );
    }

    #[test]
    fn nonzero_is_true() {
        let words = [0.0f32.to_bits(), (-0.5f32).to_bits()];
        assert_eq!(*cast(&words, 2, DType::Float32, DType::Bool), [0, 1]);
    }

    #[test]
    fn int_to_float_keeps_the_value() {
        let out = cast(&[(-3i32) as u32, 7], 2, DType::Int32, DType::Float32);
        assert_eq!(*out, [(-3.0f32).to_bits(), 7.0f32.to_bits()]);
    }
}
