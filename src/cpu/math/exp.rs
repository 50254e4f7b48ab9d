//! `exp`, `expm1`, `sigmoid` and `tanh`, all from one reduction: x = n ln2 + r with
//! |r| <= ln2/2, e^r from a degree-6 polynomial, and 2^n built from its exponent bits.

use super::{LaneFn, horner, lane_constants, v, vs};
use crate::cpu::simd::{F32x4, I32x4};

/// ln 2 split so that n * LN2_HI is exact for |n| < 512.
const LN2_HI: f32 = 0.6933594;
const LN2_LO: f32 = -0.00021219444;
/// (e^r - 1 - r) / r^2 on |r| <= ln2/2, constant term first.
const Q: [f32; 5] = [0.5, 0.16666578, 0.041666556, 0.008363173, 0.0013926176];
/// 1.5 * 2^23: floats near it are spaced 1 apart, so adding it rounds to an integer (ties to
/// even), and the sum's low bits hold that integer.
const SHIFTER: f32 = 12582912.0;

lane_constants! {
    /// e^x. Overflows to +inf above ln(f32::MAX); results below f32::MIN_POSITIVE are
    /// subnormal, rounded once; NaN propagates.
    pub struct Exp {
        low: F32x4 = v(-104.0),
        high: F32x4 = v(89.0),
        log2e: F32x4 = v(std::f32::consts::LOG2_E),
        shifter: F32x4 = v(SHIFTER),
        shifter_bits: I32x4 = I32x4::splat(SHIFTER.to_bits() as i32),
        shifter_bits_less_254: I32x4 = I32x4::splat(SHIFTER.to_bits() as i32 - 254),
        bias: I32x4 = I32x4::splat(127),
        neg_ln2_hi: F32x4 = v(-LN2_HI),
        neg_ln2_lo: F32x4 = v(-LN2_LO),
        q: [F32x4; 5] = vs(Q),
        one: F32x4 = v(1.0),
    }
}

impl Exp {
    /// `shifter` + n and r, with x = n ln2 + r, |r| <= ln2/2, n rounded to even on ties; for
    /// |x| < 2^21 and a `shifter` that is SHIFTER plus a small integer. One add and one
    /// subtract round n, instead of `round` and a float-to-int conversion, which V8 expands
    /// into several instructions to saturate. Each `mul_add` is fused with relaxed SIMD and
    /// rounds twice without, in the same order as the expression written out.
    #[inline(always)]
    fn reduce_shifted(&self, x: F32x4, shifter: F32x4) -> (F32x4, F32x4) {
        let t = x.mul_add(self.log2e, shifter);
        let n = t - shifter;
        (t, n.mul_add(self.neg_ln2_lo, n.mul_add(self.neg_ln2_hi, x)))
    }

    /// n (as a float and as an integer) and r with x = n ln2 + r, as above.
    #[inline(always)]
    fn reduce(&self, x: F32x4) -> (F32x4, I32x4, F32x4) {
        let (t, r) = self.reduce_shifted(x, self.shifter);
        (t - self.shifter, t.to_bits() - self.shifter_bits, r)
    }

    /// e^r - 1 for |r| <= ln2/2, the polynomial split in pairs (Estrin's scheme) so that its
    /// terms do not wait on each other.
    #[inline(always)]
    fn expm1_reduced(&self, r: F32x4) -> F32x4 {
        let (r2, q) = (r * r, &self.q);
        let low = q[1].mul_add(r, q[0]);
        let high = q[4].mul_add(r2, q[3].mul_add(r, q[2]));
        r2.mul_add(r2.mul_add(high, low), r)
    }

    /// 2^n as a float, for integer n in [-126, 127].
    #[inline(always)]
    fn pow2(&self, n: I32x4) -> F32x4 {
        (n + self.bias).shl::<23>().to_f32_bits()
    }
}

impl LaneFn for Exp {
    #[inline(always)]
    fn apply(&self, input: F32x4) -> F32x4 {
        // Past these bounds the result is +inf or 0 anyway; clamping keeps n in [-150, 129].
        // A NaN lane fails both comparisons, stays NaN and makes the product NaN (with relaxed
        // SIMD it may not: `keep_nan` below).
        let x = input.pmax(self.low).pmin(self.high);
        let (t, r) = self.reduce_shifted(x, self.shifter);
        let p = self.expm1_reduced(r) + self.one;
        // 2^n as 2^h 2^(n-h), h = floor(n/2), both normal, so that n = 128 and n < -126
        // scale exactly and the last product rounds once (both are exact for normal
        // results). From t's bits: a = n + 254, a >> 1 = h + 127 and a - (a >> 1) = n - h + 127
        // are the two exponent fields.
        let a = t.to_bits() - self.shifter_bits_less_254;
        let h = a.shr::<1>();
        (p * h.shl::<23>().to_f32_bits() * (a - h).shl::<23>().to_f32_bits()).keep_nan(input)
    }
}

/// 2^SCALE_LIFT keeps p 2^n normal for n >= -150 in [`ExpNonPositive`].
const SCALE_LIFT: i32 = 25;

lane_constants! {
    /// e^x for x <= 0 (and -inf), as in e^(x - max): the same bits as [`Exp`] with fewer
    /// instructions, since the result cannot overflow. A NaN lane gives an unspecified
    /// value, not NaN: callers find NaN themselves.
    pub struct ExpNonPositive {
        exp: Exp = Exp::new(),
        lifted_shifter: F32x4 = v(SHIFTER + SCALE_LIFT as f32),
        drop: F32x4 = v(1.0 / (1u32 << SCALE_LIFT) as f32),
    }
}

impl LaneFn for ExpNonPositive {
    #[inline(always)]
    fn apply(&self, x: F32x4) -> F32x4 {
        let e = &self.exp;
        // t = SHIFTER + 25 + n exactly: the same n and r as Exp's reduction.
        let (t, r) = e.reduce_shifted(x.pmax(e.low), self.lifted_shifter);
        let p = e.expm1_reduced(r) + e.one;
        // n + 25 >= -125, so p 2^(n+25) is normal and exact from its exponent bits; the
        // product with 2^-25 rounds once, as Exp's last product does.
        (p.to_bits() + t.to_bits().shl::<23>()).to_f32_bits() * self.drop
    }
}

lane_constants! {
    /// e^x - 1, accurate near 0 (where it is the reduced polynomial itself).
    pub struct Expm1 {
        exp: Exp = Exp::new(),
        low: F32x4 = v(-18.0),
        high: F32x4 = v(80.0),
        zero: F32x4 = v(0.0),
    }
}

impl LaneFn for Expm1 {
    #[inline(always)]
    fn apply(&self, x: F32x4) -> F32x4 {
        // Below -18, e^x is under half a float32 spacing of 1.
        let clamped = x.max(self.low).min(self.high);
        let (n, k, r) = self.exp.reduce(clamped);
        let pm1 = self.exp.expm1_reduced(r);
        let s = self.exp.pow2(k);
        // 2^n (e^r - 1) + (2^n - 1); 2^n - 1 is exact for the n that matter (|n| <= 24).
        let scaled = s * pm1 + (s - self.exp.one);
        let small = n.eq(self.zero).select(pm1, scaled);
        // Above 80 the -1 is far below a spacing: e^x itself, which reaches +inf.
        x.gt(self.high).select(self.exp.apply(x), small)
    }
}

lane_constants! {
    /// 1 / (1 + e^-x), from e^-|x| so that neither side loses precision: the negative side
    /// is e^x / (1 + e^x), which stays accurate down to subnormal results.
    pub struct Sigmoid {
        exp: Exp = Exp::new(),
        zero: F32x4 = v(0.0),
    }
}

impl LaneFn for Sigmoid {
    #[inline(always)]
    fn apply(&self, x: F32x4) -> F32x4 {
        let e = self.exp.apply(-x.abs());
        let d = self.exp.one + e;
        x.ge(self.zero).select(self.exp.one / d, e / d)
    }
}

/// (tanh(x) - x) / x^3 as a polynomial in x^2 on |x| < 0.625, constant term first.
const TANH_SMALL: [f32; 6] = [
    -0.33333334,
    0.13333304,
    -0.053959258,
    0.021768918,
    -0.008343945,
    0.0022927448,
];

lane_constants! {
    /// tanh(x): an odd polynomial below |x| = 0.625, 1 - 2 / (e^2|x| + 1) above, signed.
    pub struct Tanh {
        exp: Exp = Exp::new(),
        small: [F32x4; 6] = vs(TANH_SMALL),
        switch: F32x4 = v(0.625),
        two: F32x4 = v(2.0),
        zero: F32x4 = v(0.0),
    }
}

impl LaneFn for Tanh {
    #[inline(always)]
    fn apply(&self, x: F32x4) -> F32x4 {
        let (a, x2, one) = (x.abs(), x * x, self.exp.one);
        let small = x + x * x2 * horner(x2, &self.small);
        let large = one - self.two / (self.exp.apply(a + a) + one);
        let signed = x.lt(self.zero).select(-large, large);
        a.lt(self.switch).select(small, signed)
    }
}
