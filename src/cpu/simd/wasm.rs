//! The four-lane types on wasm32 `simd128`: each operation is one instruction.

use core::arch::wasm32::*;
use std::ops::{Add, Div, Mul, Neg, Sub};

#[derive(Clone, Copy, Debug)]
pub struct F32x4(v128);

#[derive(Clone, Copy, Debug)]
pub struct I32x4(v128);

/// A lane mask: all bits set where a comparison held.
#[derive(Clone, Copy, Debug)]
pub struct Mask(v128);

impl F32x4 {
    #[inline(always)]
    pub fn splat(v: f32) -> F32x4 {
        F32x4(f32x4_splat(v))
    }
    /// The first four elements of `from` (which must hold four).
    #[inline(always)]
    pub fn load(from: &[f32]) -> F32x4 {
        let four = &from[..4];
        // SAFETY: `four` holds 16 readable bytes; v128_load needs no alignment.
        F32x4(unsafe { v128_load(four.as_ptr().cast()) })
    }
    /// Writes the lanes to the first four elements of `to`.
    #[inline(always)]
    pub fn store(self, to: &mut [f32]) {
        let four = &mut to[..4];
        // SAFETY: `four` holds 16 writable bytes; v128_store needs no alignment.
        unsafe { v128_store(four.as_mut_ptr().cast(), self.0) }
    }
    /// Writes the lanes to the first four elements of `to`, which may be uninitialized.
    #[inline(always)]
    pub fn store_uninit(self, to: &mut [std::mem::MaybeUninit<f32>]) {
        let four = &mut to[..4];
        // SAFETY: `four` holds 16 writable bytes; a store initializes them.
        unsafe { v128_store(four.as_mut_ptr().cast(), self.0) }
    }
    #[inline(always)]
    pub fn min(self, o: F32x4) -> F32x4 {
        F32x4(f32x4_min(self.0, o.0))
    }
    #[inline(always)]
    pub fn max(self, o: F32x4) -> F32x4 {
        F32x4(f32x4_max(self.0, o.0))
    }
    /// `o < self ? o : self`: one instruction, where `min` takes several for NaN and -0.
    /// With relaxed SIMD, LLVM emits it as `f32x4.relaxed_min`, whose lane for a NaN or a pair
    /// of zeros may be either operand: see [`F32x4::keep_nan`].
    #[inline(always)]
    pub fn pmin(self, o: F32x4) -> F32x4 {
        F32x4(f32x4_pmin(self.0, o.0))
    }
    /// `self < o ? o : self`; `f32x4.relaxed_max` with relaxed SIMD, as for `pmin`.
    #[inline(always)]
    pub fn pmax(self, o: F32x4) -> F32x4 {
        F32x4(f32x4_pmax(self.0, o.0))
    }
    /// `self` with `x`'s NaN lanes, for a result computed from `x` through `pmin`/`pmax`: with
    /// relaxed SIMD those may turn a NaN into the other operand; without it they keep a NaN
    /// `self`, and this is nothing.
    #[inline(always)]
    pub fn keep_nan(self, x: F32x4) -> F32x4 {
        #[cfg(target_feature = "relaxed-simd")]
        return x.eq(x).select(self, x);
        #[cfg(not(target_feature = "relaxed-simd"))]
        return {
            let _ = x;
            self
        };
    }
    #[inline(always)]
    pub fn abs(self) -> F32x4 {
        F32x4(f32x4_abs(self.0))
    }
    #[inline(always)]
    pub fn sqrt(self) -> F32x4 {
        F32x4(f32x4_sqrt(self.0))
    }
    /// Rounds to the nearest integer, ties to even.
    #[inline(always)]
    pub fn round(self) -> F32x4 {
        F32x4(f32x4_nearest(self.0))
    }
    #[inline(always)]
    pub fn floor(self) -> F32x4 {
        F32x4(f32x4_floor(self.0))
    }
    #[inline(always)]
    pub fn ceil(self) -> F32x4 {
        F32x4(f32x4_ceil(self.0))
    }
    #[inline(always)]
    pub fn lt(self, o: F32x4) -> Mask {
        Mask(f32x4_lt(self.0, o.0))
    }
    #[inline(always)]
    pub fn le(self, o: F32x4) -> Mask {
        Mask(f32x4_le(self.0, o.0))
    }
    #[inline(always)]
    pub fn gt(self, o: F32x4) -> Mask {
        Mask(f32x4_gt(self.0, o.0))
    }
    #[inline(always)]
    pub fn ge(self, o: F32x4) -> Mask {
        Mask(f32x4_ge(self.0, o.0))
    }
    #[inline(always)]
    pub fn eq(self, o: F32x4) -> Mask {
        Mask(f32x4_eq(self.0, o.0))
    }
    /// The lanes' bits as integers.
    #[inline(always)]
    pub fn to_bits(self) -> I32x4 {
        I32x4(self.0)
    }
    /// `self * b + c`: one fused instruction with relaxed SIMD, else a multiply and an add.
    #[inline(always)]
    pub fn mul_add(self, b: F32x4, c: F32x4) -> F32x4 {
        #[cfg(target_feature = "relaxed-simd")]
        return F32x4(f32x4_relaxed_madd(self.0, b.0, c.0));
        #[cfg(not(target_feature = "relaxed-simd"))]
        return self * b + c;
    }
}

impl I32x4 {
    #[inline(always)]
    pub fn splat(v: i32) -> I32x4 {
        I32x4(i32x4_splat(v))
    }
    /// Truncates toward zero, saturating; NaN gives 0.
    #[inline(always)]
    pub fn from_f32_trunc(x: F32x4) -> I32x4 {
        I32x4(i32x4_trunc_sat_f32x4(x.0))
    }
    #[inline(always)]
    pub fn to_f32(self) -> F32x4 {
        F32x4(f32x4_convert_i32x4(self.0))
    }
    /// The lanes' bits as floats.
    #[inline(always)]
    pub fn to_f32_bits(self) -> F32x4 {
        F32x4(self.0)
    }
    #[inline(always)]
    pub fn shl<const N: u32>(self) -> I32x4 {
        I32x4(i32x4_shl(self.0, N))
    }
    /// Arithmetic (sign-extending) shift right.
    #[inline(always)]
    pub fn shr<const N: u32>(self) -> I32x4 {
        I32x4(i32x4_shr(self.0, N))
    }
    #[inline(always)]
    pub fn and(self, o: I32x4) -> I32x4 {
        I32x4(v128_and(self.0, o.0))
    }
    #[inline(always)]
    pub fn or(self, o: I32x4) -> I32x4 {
        I32x4(v128_or(self.0, o.0))
    }
    #[inline(always)]
    pub fn gt(self, o: I32x4) -> Mask {
        Mask(i32x4_gt(self.0, o.0))
    }
    #[inline(always)]
    pub fn to_array(self) -> [i32; 4] {
        [
            i32x4_extract_lane::<0>(self.0),
            i32x4_extract_lane::<1>(self.0),
            i32x4_extract_lane::<2>(self.0),
            i32x4_extract_lane::<3>(self.0),
        ]
    }
}

impl Mask {
    /// `yes`'s lanes where the mask holds, `no`'s elsewhere.
    #[inline(always)]
    pub fn select(self, yes: F32x4, no: F32x4) -> F32x4 {
        F32x4(v128_bitselect(yes.0, no.0, self.0))
    }
    /// `yes`'s lanes where the mask holds, `no`'s elsewhere.
    #[inline(always)]
    pub fn select_i32(self, yes: I32x4, no: I32x4) -> I32x4 {
        I32x4(v128_bitselect(yes.0, no.0, self.0))
    }
    #[inline(always)]
    pub fn and(self, o: Mask) -> Mask {
        Mask(v128_and(self.0, o.0))
    }
    #[inline(always)]
    pub fn or(self, o: Mask) -> Mask {
        Mask(v128_or(self.0, o.0))
    }
    /// Whether any lane holds.
    #[inline(always)]
    pub fn any(self) -> bool {
        v128_any_true(self.0)
    }
    /// Whether every lane holds.
    #[inline(always)]
    pub fn all(self) -> bool {
        i32x4_all_true(self.0)
    }
}

macro_rules! float_op {
    ($trait:ident, $method:ident, $intrinsic:ident) => {
        impl $trait for F32x4 {
            type Output = F32x4;
            #[inline(always)]
            fn $method(self, o: F32x4) -> F32x4 {
                F32x4($intrinsic(self.0, o.0))
            }
        }
    };
}
float_op!(Add, add, f32x4_add);
float_op!(Sub, sub, f32x4_sub);
float_op!(Mul, mul, f32x4_mul);
float_op!(Div, div, f32x4_div);

impl Neg for F32x4 {
    type Output = F32x4;
    #[inline(always)]
    fn neg(self) -> F32x4 {
        F32x4(f32x4_neg(self.0))
    }
}

impl Add for I32x4 {
    type Output = I32x4;
    #[inline(always)]
    fn add(self, o: I32x4) -> I32x4 {
        I32x4(i32x4_add(self.0, o.0))
    }
}

impl Sub for I32x4 {
    type Output = I32x4;
    #[inline(always)]
    fn sub(self, o: I32x4) -> I32x4 {
        I32x4(i32x4_sub(self.0, o.0))
    }
}
