//! The packed dtypes' storage: elements of 2 bytes (`float16`, `bfloat16`) or 1 byte (`int8`,
//! `uint8`) laid little-endian in words, element `i` in the bits from `bits * (i % per_word)`
//! of word `i / per_word`. These are the bytes of a safetensors file, so storage and files
//! share them. The unused high elements of a last word are zero.
//!
//! Kernels never compute in a packed dtype: an element is widened to its compute dtype's word
//! ([`widen`]: exact) and a result narrowed back ([`narrow`]: rounded to nearest even, or
//! wrapped like C for the integers), once.

use half::{bf16, f16};

use crate::dtype::DType;

/// The bits one element of `dtype` takes in its word.
fn element_bits(dtype: DType) -> u32 {
    (dtype.size() * 8) as u32
}

/// The storage words of element bits (one element's bits per item, in the low bits).
pub fn pack(bits: impl IntoIterator<Item = u32>, dtype: DType) -> Vec<u32> {
    if !dtype.is_packed() {
        return bits.into_iter().collect();
    }
    let (per_word, width) = (dtype.per_word(), element_bits(dtype));
    let mask = (1u32 << width) - 1;
    let mut words = Vec::new();
    for (i, b) in bits.into_iter().enumerate() {
        if i % per_word == 0 {
            words.push(0);
        }
        let last = words
            .last_mut()
            .expect("a word was pushed for this element");
        *last |= (b & mask) << (width * (i % per_word) as u32);
    }
    words
}

/// The bits of element `i` of packed or word storage.
pub fn bits(words: &[u32], dtype: DType, i: usize) -> u32 {
    if !dtype.is_packed() {
        return words[i];
    }
    let (per_word, width) = (dtype.per_word(), element_bits(dtype));
    (words[i / per_word] >> (width * (i % per_word) as u32)) & ((1u32 << width) - 1)
}

/// Element `i` of `words` as a word of `dtype.compute()`.
pub fn element(words: &[u32], dtype: DType, i: usize) -> u32 {
    widen(bits(words, dtype, i), dtype)
}

/// The first `len` elements of `words`, each a word of `dtype.compute()`.
pub fn unpack(words: &[u32], dtype: DType, len: usize) -> Vec<u32> {
    (0..len).map(|i| element(words, dtype, i)).collect()
}

/// Words of `dtype.compute()` narrowed and packed as `dtype`.
pub fn narrow_all(words: &[u32], dtype: DType) -> Vec<u32> {
    pack(words.iter().map(|&w| narrow(w, dtype)), dtype)
}

/// An element's bits as a word of its compute dtype: exact for every packed dtype.
pub fn widen(bits: u32, dtype: DType) -> u32 {
    match dtype {
        DType::Float16 => f32_bits_from_f16(bits),
        DType::BFloat16 => bits << 16,
        DType::Int8 => bits as u8 as i8 as i32 as u32,
        _ => bits,
    }
}

/// A word of `dtype.compute()` as an element's bits: floats round to nearest, ties to even
/// (overflow gives infinity, NaN stays NaN with its quiet bit set); integers keep their low
/// bits, as C's conversions wrap.
pub fn narrow(word: u32, dtype: DType) -> u32 {
    match dtype {
        DType::Float16 => f16_from_f32_bits(word),
        DType::BFloat16 => u32::from(bf16::from_f32(f32::from_bits(word)).to_bits()),
        DType::Int8 | DType::Uint8 => word & 0xff,
        _ => word,
    }
}

/// A float16's bits as a float32's: exact, NaN quieted as the `half` crate quiets it. On bits
/// and one multiplication by 2^112 (exact, subnormals included), so that loops over a weight
/// vectorize; `half`'s own conversion branches per element.
pub fn f32_bits_from_f16(h: u32) -> u32 {
    let sign = (h & 0x8000) << 16;
    let magnitude = h & 0x7fff;
    let scaled = f32::from_bits(magnitude << 13) * f32::from_bits(0x7780_0000);
    let bits = match magnitude {
        0x7c00 => 0x7f80_0000,
        m if m > 0x7c00 => 0x7fc0_0000 | (m & 0x3ff) << 13,
        _ => scaled.to_bits(),
    };
    bits | sign
}

/// A float32's bits rounded to float16's, to nearest with ties to even (`half`'s rules and
/// results: overflow to infinity, NaN keeping its sign and top mantissa bits, quieted). The
/// GPU's `wgsl/half.wgsl` is the same algorithm.
pub fn f16_from_f32_bits(b: u32) -> u32 {
    let sign = (b >> 16) & 0x8000;
    let exp = b & 0x7f80_0000;
    let man = b & 0x007f_ffff;
    if exp == 0x7f80_0000 {
        let nan = if man != 0 { 0x0200 } else { 0 };
        return sign | 0x7c00 | nan | (man >> 13);
    }
    let e = (exp >> 23) as i32 - 112;
    if e >= 31 {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = man | 0x0080_0000;
        let shift = (14 - e) as u32;
        let round = 1u32 << (shift - 1);
        let up = (m & round) != 0 && (m & (3 * round - 1)) != 0;
        return sign | ((m >> shift) + u32::from(up));
    }
    let up = (man & 0x1000) != 0 && (man & 0x2fff) != 0;
    sign | ((((e as u32) << 10) | (man >> 13)) + u32::from(up))
}

/// A number as one element's bits: floats rounded once from the f64 value, integers
/// truncated toward zero and wrapped (non-finite values give 0).
pub fn from_number(value: f64, dtype: DType) -> u32 {
    match dtype {
        DType::Float16 => u32::from(f16::from_f64(value).to_bits()),
        DType::BFloat16 => u32::from(bf16::from_f64(value).to_bits()),
        _ => {
            let whole = if value.is_finite() {
                value.trunc() as i64
            } else {
                0
            };
            whole as u32 & 0xff
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_little_endian_and_reads_back() {
        let words = pack([0x1234, 0xabcd, 0x7777], DType::Float16);
        assert_eq!(words, [0xabcd_1234, 0x7777]);
        assert_eq!(bits(&words, DType::Float16, 1), 0xabcd);
        let bytes = pack([1, 2, 3, 4, 5], DType::Uint8);
        assert_eq!(bytes, [0x0403_0201, 5]);
    }

    #[test]
    fn int8_widens_with_its_sign_and_wraps_on_narrowing() {
        assert_eq!(widen(0xff, DType::Int8) as i32, -1);
        assert_eq!(narrow(300, DType::Int8), 44);
        assert_eq!(narrow((-1i32) as u32, DType::Uint8), 255);
    }

    /// The bit-level conversions give the `half` crate's results for every float16 and for
    /// float32s of every exponent.
    #[test]
    fn the_fast_conversions_agree_with_the_half_crate() {
        for h in 0..=u16::MAX {
            let ours = f32::from_bits(f32_bits_from_f16(u32::from(h)));
            let theirs = f16::from_bits(h).to_f32();
            assert!(
                ours.to_bits() == theirs.to_bits() || (ours.is_nan() && theirs.is_nan()),
                "{h:#x}"
            );
        }
        let mut state = 7u32;
        for i in 0..2_000_000u32 {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let b = if i < 65536 {
                (i << 16) | (state & 0xffff)
            } else {
                state
            };
            let theirs = u32::from(f16::from_f32(f32::from_bits(b)).to_bits());
            assert_eq!(f16_from_f32_bits(b), theirs, "{b:#x}");
        }
    }

    #[test]
    fn halves_round_to_nearest_even() {
        // 1 + 2^-11 is halfway between 1 and the next float16: ties go to even (1).
        let tie = 1.0f32 + 2f32.powi(-11);
        assert_eq!(narrow(tie.to_bits(), DType::Float16), 0x3c00);
        assert_eq!(narrow(70000f32.to_bits(), DType::Float16), 0x7c00);
        // 1 + 2^-8 is halfway between 1 and the next bfloat16: to even (1).
        assert_eq!(narrow(0x3f80_8000, DType::BFloat16), 0x3f80);
        let nan = narrow(f32::NAN.to_bits(), DType::BFloat16);
        assert!(f32::from_bits(widen(nan, DType::BFloat16)).is_nan());
    }
}
