//! The four-lane types computed lane by lane, with wasm `simd128`'s semantics: the build for
//! targets other than wasm32 (the native tests).

use std::ops::{Add, Div, Mul, Neg, Sub};

#[derive(Clone, Copy, Debug)]
pub struct F32x4([f32; 4]);

#[derive(Clone, Copy, Debug)]
pub struct I32x4([i32; 4]);

/// A lane mask: all bits set where a comparison held.
#[derive(Clone, Copy, Debug)]
pub struct Mask([bool; 4]);

fn lanes<T: Copy, U>(a: [T; 4], f: impl Fn(T) -> U) -> [U; 4] {
    a.map(f)
}

fn zip<T: Copy, U>(a: [T; 4], b: [T; 4], f: impl Fn(T, T) -> U) -> [U; 4] {
    [f(a[0], b[0]), f(a[1], b[1]), f(a[2], b[2]), f(a[3], b[3])]
}

impl F32x4 {
    #[inline(always)]
    pub fn splat(v: f32) -> F32x4 {
        F32x4([v; 4])
    }
    /// The first four elements of `from` (which must hold four).
    #[inline(always)]
    pub fn load(from: &[f32]) -> F32x4 {
        F32x4([from[0], from[1], from[2], from[3]])
    }
    /// Writes the lanes to the first four elements of `to`.
    #[inline(always)]
    pub fn store(self, to: &mut [f32]) {
        to[..4].copy_from_slice(&self.0);
    }
    /// Writes the lanes to the first four elements of `to`, which may be uninitialized.
    #[inline(always)]
    pub fn store_uninit(self, to: &mut [std::mem::MaybeUninit<f32>]) {
        for (d, v) in to[..4].iter_mut().zip(self.0) {
            d.write(v);
        }
    }
    #[inline(always)]
    pub fn min(self, o: F32x4) -> F32x4 {
        F32x4(zip(self.0, o.0, |a, b| {
            if a.is_nan() || b.is_nan() {
                f32::NAN
            } else if a == b {
                f32::from_bits(a.to_bits() | b.to_bits())
            } else {
                a.min(b)
            }
        }))
    }
    /// `o < self ? o : self`, wasm's `f32x4.pmin`.
    #[inline(always)]
    pub fn pmin(self, o: F32x4) -> F32x4 {
        F32x4(zip(self.0, o.0, |a, b| if b < a { b } else { a }))
    }
    /// `self < o ? o : self`, wasm's `f32x4.pmax`.
    #[inline(always)]
    pub fn pmax(self, o: F32x4) -> F32x4 {
        F32x4(zip(self.0, o.0, |a, b| if a < b { b } else { a }))
    }
    #[inline(always)]
    pub fn max(self, o: F32x4) -> F32x4 {
        F32x4(zip(self.0, o.0, |a, b| {
            if a.is_nan() || b.is_nan() {
                f32::NAN
            } else if a == b {
                f32::from_bits(a.to_bits() & b.to_bits())
            } else {
                a.max(b)
            }
        }))
    }
    #[inline(always)]
    pub fn abs(self) -> F32x4 {
        F32x4(lanes(self.0, f32::abs))
    }
    #[inline(always)]
    pub fn sqrt(self) -> F32x4 {
        F32x4(lanes(self.0, f32::sqrt))
    }
    /// Rounds to the nearest integer, ties to even.
    #[inline(always)]
    pub fn round(self) -> F32x4 {
        F32x4(lanes(self.0, f32::round_ties_even))
    }
    #[inline(always)]
    pub fn floor(self) -> F32x4 {
        F32x4(lanes(self.0, f32::floor))
    }
    #[inline(always)]
    pub fn ceil(self) -> F32x4 {
        F32x4(lanes(self.0, f32::ceil))
    }
    #[inline(always)]
    pub fn lt(self, o: F32x4) -> Mask {
        Mask(zip(self.0, o.0, |a, b| a < b))
    }
    #[inline(always)]
    pub fn le(self, o: F32x4) -> Mask {
        Mask(zip(self.0, o.0, |a, b| a <= b))
    }
    #[inline(always)]
    pub fn gt(self, o: F32x4) -> Mask {
        Mask(zip(self.0, o.0, |a, b| a > b))
    }
    #[inline(always)]
    pub fn ge(self, o: F32x4) -> Mask {
        Mask(zip(self.0, o.0, |a, b| a >= b))
    }
    #[inline(always)]
    pub fn eq(self, o: F32x4) -> Mask {
        Mask(zip(self.0, o.0, |a, b| a == b))
    }
    /// The lanes' bits as integers.
    #[inline(always)]
    pub fn to_bits(self) -> I32x4 {
        I32x4(lanes(self.0, |v| v.to_bits() as i32))
    }
    /// `self`: the portable `pmin`/`pmax` keep a NaN first operand, as wasm's do.
    #[inline(always)]
    pub fn keep_nan(self, _x: F32x4) -> F32x4 {
        self
    }
    /// `self * b + c`, rounded twice: what relaxed SIMD's `madd` may give, and what the
    /// build without it gives.
    #[inline(always)]
    pub fn mul_add(self, b: F32x4, c: F32x4) -> F32x4 {
        self * b + c
    }
}

impl I32x4 {
    #[inline(always)]
    pub fn splat(v: i32) -> I32x4 {
        I32x4([v; 4])
    }
    /// Truncates toward zero, saturating; NaN gives 0.
    #[inline(always)]
    pub fn from_f32_trunc(x: F32x4) -> I32x4 {
        I32x4(lanes(x.0, |v| v as i32))
    }
    #[inline(always)]
    pub fn to_f32(self) -> F32x4 {
        F32x4(lanes(self.0, |v| v as f32))
    }
    /// The lanes' bits as floats.
    #[inline(always)]
    pub fn to_f32_bits(self) -> F32x4 {
        F32x4(lanes(self.0, |v| f32::from_bits(v as u32)))
    }
    #[inline(always)]
    pub fn shl<const N: u32>(self) -> I32x4 {
        I32x4(lanes(self.0, |v| v << N))
    }
    /// Arithmetic (sign-extending) shift right.
    #[inline(always)]
    pub fn shr<const N: u32>(self) -> I32x4 {
        I32x4(lanes(self.0, |v| v >> N))
    }
    #[inline(always)]
    pub fn and(self, o: I32x4) -> I32x4 {
        I32x4(zip(self.0, o.0, |a, b| a & b))
    }
    #[inline(always)]
    pub fn or(self, o: I32x4) -> I32x4 {
        I32x4(zip(self.0, o.0, |a, b| a | b))
    }
    #[inline(always)]
    pub fn gt(self, o: I32x4) -> Mask {
        Mask(zip(self.0, o.0, |a, b| a > b))
    }
    #[inline(always)]
    pub fn to_array(self) -> [i32; 4] {
        self.0
    }
}

impl Mask {
    /// `yes`'s lanes where the mask holds, `no`'s elsewhere.
    #[inline(always)]
    pub fn select(self, yes: F32x4, no: F32x4) -> F32x4 {
        F32x4([0, 1, 2, 3].map(|i| if self.0[i] { yes.0[i] } else { no.0[i] }))
    }
    /// `yes`'s lanes where the mask holds, `no`'s elsewhere.
    #[inline(always)]
    pub fn select_i32(self, yes: I32x4, no: I32x4) -> I32x4 {
        I32x4([0, 1, 2, 3].map(|i| if self.0[i] { yes.0[i] } else { no.0[i] }))
    }
    #[inline(always)]
    pub fn and(self, o: Mask) -> Mask {
        Mask(zip(self.0, o.0, |a, b| a && b))
    }
    #[inline(always)]
    pub fn or(self, o: Mask) -> Mask {
        Mask(zip(self.0, o.0, |a, b| a || b))
    }
    /// Whether any lane holds.
    #[inline(always)]
    pub fn any(self) -> bool {
        self.0.iter().any(|&b| b)
    }
    /// Whether every lane holds.
    #[inline(always)]
    pub fn all(self) -> bool {
        self.0.iter().all(|&b| b)
    }
}

macro_rules! float_op {
    ($trait:ident, $method:ident, $op:tt) => {
        impl $trait for F32x4 {
            type Output = F32x4;
            #[inline(always)]
            fn $method(self, o: F32x4) -> F32x4 {
                F32x4(zip(self.0, o.0, |a, b| a $op b))
            }
        }
    };
}
float_op!(Add, add, +);
float_op!(Sub, sub, -);
float_op!(Mul, mul, *);
float_op!(Div, div, /);

impl Neg for F32x4 {
    type Output = F32x4;
    #[inline(always)]
    fn neg(self) -> F32x4 {
        F32x4(lanes(self.0, |v| -v))
    }
}

impl Add for I32x4 {
    type Output = I32x4;
    #[inline(always)]
    fn add(self, o: I32x4) -> I32x4 {
        I32x4(zip(self.0, o.0, i32::wrapping_add))
    }
}

impl Sub for I32x4 {
    type Output = I32x4;
    #[inline(always)]
    fn sub(self, o: I32x4) -> I32x4 {
        I32x4(zip(self.0, o.0, i32::wrapping_sub))
    }
}
