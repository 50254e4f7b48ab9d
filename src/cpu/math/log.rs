//! `log` and `log1p`: x = m 2^e with m in [sqrt(1/2), sqrt(2)), and log(m) = log(1 + f) from a
//! polynomial in f.

use super::{LaneFn, horner, lane_constants, v, vs};
use crate::cpu::simd::{F32x4, I32x4};

const LN2_HI: f32 = 0.6933594;
const LN2_LO: f32 = -0.00021219444;
/// (log(1 + f) - f + f^2/2) / f^3 on f in [sqrt(1/2) - 1, sqrt(2) - 1], constant term first.
const G: [f32; 9] = [
    0.3333333,
    -0.24999997,
    0.20000716,
    -0.16667803,
    0.14249058,
    -0.12425687,
    0.1168542,
    -0.11479734,
    0.06971612,
];

lane_constants! {
    /// The natural logarithm: NaN below 0 (and for NaN), -inf at ±0, +inf at +inf.
    pub struct Log {
        min_normal: F32x4 = v(f32::MIN_POSITIVE),
        two_23: F32x4 = v(8_388_608.0),
        sqrt2: F32x4 = v(std::f32::consts::SQRT_2),
        half: F32x4 = v(0.5),
        one: F32x4 = v(1.0),
        zero: F32x4 = v(0.0),
        nan: F32x4 = v(f32::NAN),
        neg_inf: F32x4 = v(f32::NEG_INFINITY),
        inf: F32x4 = v(f32::INFINITY),
        ln2_hi: F32x4 = v(LN2_HI),
        ln2_lo: F32x4 = v(LN2_LO),
        g: [F32x4; 9] = vs(G),
    }
}

impl LaneFn for Log {
    #[inline(always)]
    fn apply(&self, x: F32x4) -> F32x4 {
        // Subnormals are scaled into the normal range first.
        let tiny = x.lt(self.min_normal);
        let scaled = tiny.select(x * self.two_23, x);
        let bits = scaled.to_bits();
        let bias = tiny.select_i32(I32x4::splat(127 + 23), I32x4::splat(127));
        let biased = bits.shr::<23>() - bias;
        let m = bits
            .and(I32x4::splat(0x007f_ffff))
            .or(I32x4::splat(0x3f80_0000))
            .to_f32_bits();
        let big = m.gt(self.sqrt2);
        let m = big.select(m * self.half, m);
        let e = big.select_i32(biased + I32x4::splat(1), biased).to_f32();
        let f = m - self.one;
        let f2 = f * f;
        let tail = f2 * f * horner(f, &self.g) - self.half * f2;
        let value = ((tail + e * self.ln2_lo) + f) + e * self.ln2_hi;
        let value = x.eq(x).select(value, x);
        let value = x.lt(self.zero).select(self.nan, value);
        let value = x.eq(self.zero).select(self.neg_inf, value);
        x.eq(self.inf).select(x, value)
    }
}

lane_constants! {
    /// log(1 + x), accurate near 0: with u = 1 + x rounded, log(1 + x) = log(u) + log(1 + c)
    /// where c = (x - (u - 1)) / u is the rounding of u, and log(1 + c) = c to float32
    /// precision.
    pub struct Log1p {
        log: Log = Log::new(),
    }
}

impl LaneFn for Log1p {
    #[inline(always)]
    fn apply(&self, x: F32x4) -> F32x4 {
        let l = &self.log;
        let u = l.one + x;
        let c = (x - (u - l.one)) / u;
        let value = l.apply(u) + c;
        // u = 1 leaves c = x, which log(u) = 0 would give too, but -0 and tiny x keep their
        // bits; u = +inf and u = 0 make c NaN.
        let value = u.eq(l.one).select(x, value);
        let value = x.eq(l.inf).select(x, value);
        u.eq(l.zero).select(l.neg_inf, value)
    }
}
