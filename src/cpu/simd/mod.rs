//! Four float32 lanes, the width of wasm's `simd128`: the vocabulary the CPU kernels are
//! written in. On wasm32 with `simd128` each operation is one instruction (`wasm.rs`);
//! elsewhere (native tests) the same operations run lane by lane (`portable.rs`) with the same
//! results, so a kernel's native tests check the arithmetic the browser runs.
//!
//! Semantics follow wasm's: `min`/`max` propagate NaN and order -0 below +0 (`pmin`/`pmax`
//! are the one-instruction comparisons that do neither); `round` is
//! ties-to-even; `I32x4::from_f32_trunc` saturates and maps NaN to 0.

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod wasm;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub use wasm::{F32x4, I32x4, Mask};

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
mod portable;
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub use portable::{F32x4, I32x4, Mask};

/// Lanes per vector.
pub const LANES: usize = 4;

impl F32x4 {
    /// The first four elements of `from`, or `from` padded with `pad` when it is shorter.
    #[inline(always)]
    pub fn load_partial(from: &[f32], pad: f32) -> F32x4 {
        if from.len() >= LANES {
            return F32x4::load(from);
        }
        let mut lanes = [pad; LANES];
        lanes[..from.len()].copy_from_slice(from);
        F32x4::load(&lanes)
    }

    /// Stores the first `to.len()` lanes (at most four).
    #[inline(always)]
    pub fn store_partial(self, to: &mut [f32]) {
        if to.len() >= LANES {
            return self.store(to);
        }
        let mut lanes = [0.0; LANES];
        self.store(&mut lanes);
        let n = to.len();
        to.copy_from_slice(&lanes[..n]);
    }

    /// The lanes as an array.
    #[inline(always)]
    pub fn to_array(self) -> [f32; LANES] {
        let mut lanes = [0.0; LANES];
        self.store(&mut lanes);
        lanes
    }

    /// The sum of the four lanes, ((l0 + l2) + (l1 + l3)).
    #[inline(always)]
    pub fn sum(self) -> f32 {
        let [a, b, c, d] = self.to_array();
        (a + c) + (b + d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_and_max_propagate_nan_and_order_zeros() {
        let a = F32x4::load(&[1.0, f32::NAN, -0.0, 0.0]);
        let b = F32x4::load(&[2.0, 0.0, 0.0, -0.0]);
        let lo = a.min(b).to_array();
        let hi = a.max(b).to_array();
        assert_eq!(lo[0], 1.0);
        assert!(lo[1].is_nan() && hi[1].is_nan());
        assert!(lo[2].is_sign_negative() && lo[3].is_sign_negative());
        assert!(hi[2].is_sign_positive() && hi[3].is_sign_positive());
    }

    #[test]
    fn rounding_truncation_and_bits() {
        let x = F32x4::load(&[0.5, 1.5, -2.5, 2.6]);
        assert_eq!(x.round().to_array(), [0.0, 2.0, -2.0, 3.0]);
        assert_eq!(x.floor().to_array(), [0.0, 1.0, -3.0, 2.0]);
        let big = F32x4::load(&[3e9, -3e9, f32::NAN, -7.9]);
        let n = I32x4::from_f32_trunc(big).to_array();
        assert_eq!(n, [i32::MAX, i32::MIN, 0, -7]);
        let one = I32x4::splat(127).shl::<23>().to_f32_bits();
        assert_eq!(one.to_array(), [1.0; 4]);
        assert_eq!(F32x4::splat(-2.0).to_bits().shr::<31>().to_array(), [-1; 4]);
    }

    #[test]
    fn masks_select_lanes() {
        let a = F32x4::load(&[1.0, 2.0, 3.0, f32::NAN]);
        let b = F32x4::splat(2.0);
        let picked = a.lt(b).select(F32x4::splat(-1.0), a).to_array();
        assert_eq!(&picked[..3], &[-1.0, 2.0, 3.0]);
        assert!(picked[3].is_nan(), "NaN compares false");
        let both = a.ge(b).and(a.le(F32x4::splat(2.5)));
        assert_eq!(
            both.select(b, F32x4::splat(0.0)).to_array(),
            [0.0, 2.0, 0.0, 0.0]
        );
        assert!(a.lt(b).any() && !a.gt(F32x4::splat(9.0)).any());
    }

    #[test]
    fn partial_loads_pad_and_partial_stores_stop() {
        let x = F32x4::load_partial(&[1.0, 2.0], 7.0);
        assert_eq!(x.to_array(), [1.0, 2.0, 7.0, 7.0]);
        let mut out = [0.0; 3];
        (x + F32x4::splat(1.0)).store_partial(&mut out);
        assert_eq!(out, [2.0, 3.0, 8.0]);
        assert_eq!(F32x4::load(&[1.0, 2.0, 3.0, 4.0]).sum(), 10.0);
    }
}
