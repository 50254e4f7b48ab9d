//! `erf` and `gelu`. Below 1, erf(x) = x (1 + P(x^2)). Above, erfc(x) = e^-x^2 erfcx(x), where
//! the scaled complement erfcx varies slowly: a polynomial on [0.5, 1), [1, 2) and [2, 4), and
//! one in 1/x^2 beyond, which gelu needs for its far negative side.

use super::{Exp, LaneFn, horner, lane_constants, v, vs};
use crate::cpu::simd::{F32x4, I32x4};

/// erf(x) / x - 1 as a polynomial in x^2 on |x| <= 1, constant term first (the 1 is added
/// apart, so the rounding of 2/√π does not reach the result).
const ERF_SMALL: [f32; 7] = [
    0.12837917,
    -0.37612626,
    0.11283594,
    -0.026854211,
    0.0051890872,
    -0.00080168643,
    7.875875e-05,
];
/// erfcx(x) as a polynomial in x - 0.75 on [0.5, 1].
const ERFCX_0: [f32; 8] = [
    0.5069376,
    -0.3679727,
    0.23095828,
    -0.12983613,
    0.06677845,
    -0.031892613,
    0.014597662,
    -0.0061701825,
];
/// erfcx(x) as a polynomial in x - 1.5 on [1, 2].
const ERFCX_1: [f32; 9] = [
    0.32158542,
    -0.1636229,
    0.076151036,
    -0.032931466,
    0.0133775165,
    -0.0051379204,
    0.0018836128,
    -0.00070431264,
    0.00023661854,
];
/// erfcx(x) as a polynomial in x - 3 on [2, 4].
const ERFCX_2: [f32; 9] = [
    0.17900115,
    -0.05437221,
    0.01588436,
    -0.004480082,
    0.001223191,
    -0.0003218066,
    8.3012594e-05,
    -2.4003793e-05,
    5.8510736e-06,
];
/// x erfcx(x) as a polynomial in 1/x^2 on [4, 10.2]; past that, erfc underflows.
const ERFCX_TAIL: [f32; 6] = [
    0.56418955, -0.2820891, 0.42259657, -1.0316341, 3.0103045, -6.2906885,
];

lane_constants! {
    /// The error function; odd, so erf(-0) = -0; NaN propagates.
    pub struct Erf {
        exp: Exp = Exp::new(),
        small: [F32x4; 7] = vs(ERF_SMALL),
        cx0: [F32x4; 8] = vs(ERFCX_0),
        cx1: [F32x4; 9] = vs(ERFCX_1),
        cx2: [F32x4; 9] = vs(ERFCX_2),
        tail: [F32x4; 6] = vs(ERFCX_TAIL),
        centers: [F32x4; 3] = vs([0.75, 1.5, 3.0]),
        bounds: [F32x4; 4] = vs([0.5, 1.0, 2.0, 4.0]),
        one: F32x4 = v(1.0),
    }
}

impl Erf {
    /// erfcx(a) = e^(a^2) erfc(a), for a >= 0.5.
    #[inline(always)]
    fn erfcx(&self, a: F32x4) -> F32x4 {
        let [c0, c1, c2] = self.centers;
        let [_, one, two, four] = self.bounds;
        let nearest = horner(a - c0, &self.cx0);
        let near = horner(a - c1, &self.cx1);
        let mid = horner(a - c2, &self.cx2);
        let inv = self.one / a;
        let far = horner(inv * inv, &self.tail) * inv;
        let value = a.lt(four).select(mid, far);
        let value = a.lt(two).select(near, value);
        a.lt(one).select(nearest, value)
    }

    /// |erf(x)| from a = |x|, for finite or infinite a.
    #[inline(always)]
    fn erf_abs(&self, a: F32x4) -> F32x4 {
        let [_, one, _, four] = self.bounds;
        let small = a + a * horner(a * a, &self.small);
        // e^-a^2 with a^2 rounded: its error stays below a spacing of erf, near 1 here.
        let large = self.one - self.exp.apply(-(a * a)) * self.erfcx(a);
        let value = a.lt(four).select(large, self.one);
        a.lt(one).select(small, value)
    }
}

impl LaneFn for Erf {
    #[inline(always)]
    fn apply(&self, x: F32x4) -> F32x4 {
        let sign = x.to_bits().and(I32x4::splat(i32::MIN));
        let value = self.erf_abs(x.abs()).to_bits().or(sign).to_f32_bits();
        x.eq(x).select(value, x)
    }
}

lane_constants! {
    /// x Φ(x), with Φ the standard normal CDF: x (1 + erf(x / √2)) / 2. For negative x it
    /// is x erfc(|x| / √2) / 2, so the far negative side keeps its precision instead of
    /// cancelling.
    pub struct Gelu {
        erf: Erf = Erf::new(),
        half: F32x4 = v(0.5),
        minus_half: F32x4 = v(-0.5),
        sqrt_half: F32x4 = v(std::f32::consts::FRAC_1_SQRT_2),
        clamp: F32x4 = v(30.0),
        zero: F32x4 = v(0.0),
    }
}

impl Gelu {
    /// e^(-x^2 / 2) with x^2 kept as an exact sum hi + lo, so that the rounding of x^2
    /// (relative 2^-24, but times x^2 up to 200 in the exponent) costs nothing.
    #[inline(always)]
    fn exp_neg_half_square(&self, x: F32x4) -> F32x4 {
        // x's top 12 significant bits: their square is exact in float32.
        let head = x.to_bits().and(I32x4::splat(!0xfff)).to_f32_bits();
        let rest = x - head;
        let (hi, lo) = (head * head, rest * (head + x));
        let exp = &self.erf.exp;
        exp.apply(hi * self.minus_half) * exp.apply(lo * self.minus_half)
    }
}

impl LaneFn for Gelu {
    #[inline(always)]
    fn apply(&self, x: F32x4) -> F32x4 {
        let one = self.erf.one;
        let a = x.abs() * self.sqrt_half;
        let e = self.erf.erf_abs(a);
        // Past |x| = 30, e^(-x^2/2) is 0 anyway; the clamp keeps x^2 finite.
        let bounded = x.max(-self.clamp).min(self.clamp);
        let upper = self.half * x * (one + e);
        // Below 0.5, 1 - erf loses at most a bit; above, erfcx loses nothing.
        let erfc = a.lt(self.erf.bounds[0]).select(
            one - e,
            self.exp_neg_half_square(bounded) * self.erf.erfcx(a),
        );
        let lower = self.half * x * erfc;
        x.lt(self.zero).select(lower, upper)
    }
}
