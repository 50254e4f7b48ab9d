// Accurate float32 math for the elementwise kernels.
//
// WGSL's built-ins promise little: Vulkan allows sin and cos an absolute error of 2^-11 on
// [-pi, pi] only, and exp 3 + 2|x| ULP. These functions range-reduce and evaluate polynomials
// themselves, to about 1e-6 relative over the whole float32 range (subnormal results may be
// flushed to zero). NaN and infinity are tested on the bits, since compilers may assume that
// `x != x` is false.
//
// Tests combine with `|` and `&`, never `||` and `&&`: short-circuit operators become branches,
// and SwiftShader lost its device compiling a fused kernel (gpu/fused.rs) that inlined
// eight `max_or_nan`s written with `||`. The same holds for the op expressions in gpu/.

const LOG2E: f32 = 1.442695040888963;
// ln 2 split so that k * LN2_HI is exact for |k| < 2^9.
const LN2_HI: f32 = 0.693145751953125;
const LN2_LO: f32 = 1.4286068203094173e-06;
const HALF_PI: f32 = 1.5707963267948966;
const QUARTER_PI: f32 = 0.7853981633974483;
const TWO_OVER_SQRT_PI: f32 = 1.1283791670955126;
// exp overflows float32 above EXP_MAX and rounds to zero below EXP_MIN.
const EXP_MAX: f32 = 88.72284;
const EXP_MIN: f32 = -103.97208;

// 2/pi to 256 bits, most significant word first (for Payne-Hanek reduction).
var<private> TWO_OVER_PI: array<u32, 8> = array<u32, 8>(0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u, 0xDB629599u, 0x3C439041u, 0xFE5163ABu, 0xDEBBC561u);

fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn is_inf(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }
// Private, not const: WGSL rejects constant expressions that evaluate to NaN or infinity.
var<private> NAN_BITS: u32 = 0x7fc00000u;
var<private> INF_BITS: u32 = 0x7f800000u;
fn nan_f32() -> f32 { return bitcast<f32>(NAN_BITS); }
fn inf_f32() -> f32 { return bitcast<f32>(INF_BITS); }
// max and min that return NaN when either operand is NaN, as NumPy's maximum does.
fn max_or_nan(a: f32, b: f32) -> f32 { return select(max(a, b), nan_f32(), is_nan(a) | is_nan(b)); }
fn min_or_nan(a: f32, b: f32) -> f32 { return select(min(a, b), nan_f32(), is_nan(a) | is_nan(b)); }
fn with_sign_of(v: f32, s: f32) -> f32 {
    return bitcast<f32>((bitcast<u32>(v) & 0x7fffffffu) | (bitcast<u32>(s) & 0x80000000u));
}

// e^r - 1 for |r| <= ln2 / 2: Taylor to degree 8, relative error under 1e-9.
fn expm1_small(r: f32) -> f32 {
    let p = 1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0 + r * (1.0 / 40320.0)));
    return r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * p))));
}

// 2^n for n in [-126, 127], built from the exponent bits: much cheaper than ldexp on
// software adapters.
fn pow2(n: i32) -> f32 { return bitcast<f32>(u32(n + 127) << 23u); }

// e^r for |r| <= ln2 / 2: 1 + r + r^2 q(r), q fitted (Chebyshev) to (e^r - 1 - r) / r^2 and
// split in pairs so that its terms do not wait on each other (the CPU's exp uses the same).
fn exp_reduced(r: f32) -> f32 {
    let r2 = r * r;
    let low = 0.5 + 0.16666578 * r;
    let high = (0.041666556 + 0.008363173 * r) + 0.0013926176 * r2;
    return 1.0 + (r + r2 * (low + r2 * high));
}

// 1.5 * 2^23: an integer-valued float below 2^22 plus this is exact, and its bits are
// SHIFTER_BITS plus the integer.
const SHIFTER: f32 = 12582912.0;
const SHIFTER_BITS: i32 = 0x4B400000;

// e^x = 2^n e^r with x = n ln2 + r. No branches and no float-to-int conversion (WGSL's
// saturates, which costs a clamp): on SwiftShader, its cost over a plain copy of 2^22 floats
// came down from 23 ms (with both) to 11.
fn exp_acc(x: f32) -> f32 {
    // Past these bounds e^x is +inf or 0 anyway; clamping keeps n in [-150, 129].
    let c = clamp(x, -104.0, 89.0);
    let k = round(c * LOG2E);
    let r = (c - k * LN2_HI) - k * LN2_LO;
    // 2^n = 2^h 2^(n-h), h = floor(n/2), both normal, so that n = 128 and n < -126 scale
    // exactly and the last product rounds once if subnormal. a = n + 254, so a >> 1 = h + 127
    // and a - (a >> 1) = n - h + 127 are the two exponent fields.
    let a = bitcast<i32>(k + SHIFTER) - (SHIFTER_BITS - 254);
    let h = a >> 1u;
    let e = exp_reduced(r) * bitcast<f32>(h << 23u) * bitcast<f32>((a - h) << 23u);
    // clamp's result for NaN is unspecified.
    return select(e, x, is_nan(x));
}

// Whether this adapter's built-in exp passed the accuracy probe (startup/exp_probe.rs). The
// pipeline cache sets it per device; the compiler folds the branch in exp_best.
override BUILTIN_EXP: bool = false;

// exp for the kernels that compute exp itself (exp, softmax, logsumexp): the built-in where
// it was measured to keep the promise above, else exp_acc.
fn exp_best(x: f32) -> f32 {
    if (BUILTIN_EXP) { return exp_guarded(x); }
    return exp_acc(x);
}

// The built-in with exp_acc's NaN, overflow and underflow handling: Vulkan leaves the
// built-in's result outside the finite range unspecified.
fn exp_guarded(x: f32) -> f32 {
    if (is_nan(x)) { return x; }
    if (x > EXP_MAX) { return inf_f32(); }
    if (x < EXP_MIN) { return 0.0; }
    return exp(x);
}

fn expm1_acc(x: f32) -> f32 {
    if (abs(x) < 0.34657359) { return expm1_small(x); }
    if (x < -17.0) { return -1.0; }
    return exp_acc(x) - 1.0;
}

// log at the edges of its domain (NaN, negatives, zero, infinity), shared by log, log2 and
// log10; `log_edge(x).y` is 1 when x is one of them and `.x` is the answer.
fn log_edge(x: f32) -> vec2<f32> {
    if (is_nan(x) | (x < 0.0)) { return vec2<f32>(nan_f32(), 1.0); }
    if (x == 0.0) { return vec2<f32>(-inf_f32(), 1.0); }
    if (is_inf(x)) { return vec2<f32>(x, 1.0); }
    return vec2<f32>(0.0, 0.0);
}

// x = 2^e m with m in [sqrt(1/2), sqrt(2)), for finite x > 0: returns (e, log m).
fn log_reduced(x: f32) -> vec2<f32> {
    // frexp mishandles subnormals on some adapters: scale them into the normal range first.
    let subnormal = x < 1.17549435e-38;
    let parts = frexp(select(x, x * 16777216.0, subnormal));
    var m = parts.fract;
    var e = parts.exp - select(0, 24, subnormal);
    if (m < 0.70710678) {
        m = m * 2.0;
        e = e - 1;
    }
    return vec2<f32>(f32(e), log1p_series(m - 1.0));
}

// log(1 + f) for 1 + f in [sqrt(1/2), sqrt(2)]: 2 atanh(s) with s = f / (2 + f), |s| < 0.172.
fn log1p_series(f: f32) -> f32 {
    let s = f / (2.0 + f);
    let s2 = s * s;
    let tail = s2 * (2.0 / 3.0 + s2 * (2.0 / 5.0 + s2 * (2.0 / 7.0 + s2 * (2.0 / 9.0 + s2 * (2.0 / 11.0)))));
    return 2.0 * s + s * tail;
}

fn log_acc(x: f32) -> f32 {
    let edge = log_edge(x);
    if (edge.y != 0.0) { return edge.x; }
    let p = log_reduced(x);
    return p.x * LN2_HI + (p.x * LN2_LO + p.y);
}

fn log1p_acc(x: f32) -> f32 {
    if (is_nan(x) | (x < -1.0)) { return nan_f32(); }
    if (x == -1.0) { return -inf_f32(); }
    if (is_inf(x)) { return x; }
    // Near 0 the series takes x itself. Goldberg's correction, log(u) x / (u - 1) with
    // u = 1 + x, is no good on a GPU: Mesa folds (1 + x) - 1 to x, and log1p(6e-8) came out
    // twice too big. Past these bounds, rounding 1 + x costs under 2e-7 of the result.
    // Below 2^-24, log1p(x) is x to float32 precision (and the series' x / 2 would be
    // flushed to zero near the smallest normals).
    if (abs(x) < 5.9604645e-8) { return x; }
    if ((x > -0.29289322) & (x < 0.41421356)) { return log1p_series(x); }
    return log_acc(1.0 + x);
}

// 32 x 32 -> 64-bit product as (low, high) words.
fn mul_wide(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
    let lo = (p00 & 0xffffu) | (mid << 16u);
    let hi = a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
    return vec2<u32>(lo, hi);
}

// 32 bits of 2/pi starting `bit` bits after the binary point.
fn two_over_pi_bits(bit: u32) -> u32 {
    let w = bit / 32u;
    let s = bit % 32u;
    if (s == 0u) { return TWO_OVER_PI[w]; }
    return (TWO_OVER_PI[w] << s) | (TWO_OVER_PI[w + 1u] >> (32u - s));
}

// 32 bits of the 128-bit number p starting at bit `lo` (bits past the top read as zero).
fn bits_at(p: array<u32, 4>, lo: u32) -> u32 {
    let w = lo / 32u;
    let s = lo % 32u;
    var v = p[w] >> s;
    if ((s != 0u) & (w < 3u)) {
        v = v | (p[w + 1u] << (32u - s));
    }
    return v;
}

struct Reduced {
    r: f32,   // |x| - q * pi/2, in [-pi/4, pi/4]
    q: u32,   // the quadrant, mod 4
}

// Payne-Hanek reduction of a finite a = |x| >= pi/4: multiplies the 24-bit significand by a
// 96-bit window of 2/pi chosen by the exponent, so the result is exact to ~2^-60 whatever the
// size of a.
fn reduce_half_pi(a: f32) -> Reduced {
    let bits = bitcast<u32>(a);
    let m = (bits & 0x7fffffu) | 0x800000u;
    let e = i32(bits >> 23u) - 150;
    // Bits of 2/pi worth 4 or more units of a * 2/pi only add multiples of 4: skip them.
    let skip = u32(max(e - 2, 0));
    let shift = u32(select(96 - e, 94, e >= 2));
    let w0 = two_over_pi_bits(skip);
    let w1 = two_over_pi_bits(skip + 32u);
    let w2 = two_over_pi_bits(skip + 64u);
    // p = m * (w0:w1:w2), a 120-bit integer; a * 2/pi = p / 2^shift (mod 4).
    let t2 = mul_wide(m, w2);
    let t1 = mul_wide(m, w1);
    let t0 = mul_wide(m, w0);
    let s1 = t1.x + t2.y;
    let c1 = select(0u, 1u, s1 < t2.y);
    let s0 = t0.x + t1.y + c1;
    let c0 = select(0u, 1u, s0 < t0.x);
    let p = array<u32, 4>(t2.x, s1, s0, t0.y + c0);
    var q = bits_at(p, shift) & 3u;
    var hi = bits_at(p, shift - 32u);
    var lo = bits_at(p, shift - 64u);
    var negative = false;
    if ((hi & 0x80000000u) != 0u) {
        // Fraction >= 1/2: round to the next quadrant and take 1 - fraction.
        q = (q + 1u) & 3u;
        hi = ~hi;
        lo = ~lo;
        negative = true;
    }
    // The fraction as hi:lo / 2^64, normalized so its float keeps 24 significant bits.
    let z = countLeadingZeros(hi);
    var top = hi;
    var below = 32u + z;
    if (z == 32u) {
        top = lo;
        below = 64u;
    } else if (z != 0u) {
        top = (hi << z) | (lo >> (32u - z));
    }
    let fraction = ldexp(f32(top), -i32(below));
    let r = fraction * HALF_PI;
    return Reduced(select(r, -r, negative), q);
}

// |x| reduced to [-pi/4, pi/4] and its quadrant; small arguments pass through.
fn reduce(a: f32) -> Reduced {
    if (a <= QUARTER_PI) { return Reduced(a, 0u); }
    return reduce_half_pi(a);
}

fn sin_poly(r: f32) -> f32 {
    let r2 = r * r;
    return r + r * r2 * (-1.0 / 6.0 + r2 * (1.0 / 120.0 + r2 * (-1.0 / 5040.0 + r2 * (1.0 / 362880.0))));
}

fn cos_poly(r: f32) -> f32 {
    let r2 = r * r;
    return 1.0 + r2 * (-0.5 + r2 * (1.0 / 24.0 + r2 * (-1.0 / 720.0 + r2 * (1.0 / 40320.0 + r2 * (-1.0 / 3628800.0)))));
}

fn sin_acc(x: f32) -> f32 {
    if (is_nan(x) | is_inf(x)) { return nan_f32(); }
    let t = reduce(abs(x));
    var v: f32;
    switch t.q {
        case 0u: { v = sin_poly(t.r); }
        case 1u: { v = cos_poly(t.r); }
        case 2u: { v = -sin_poly(t.r); }
        default: { v = -cos_poly(t.r); }
    }
    return select(v, -v, x < 0.0);
}

fn cos_acc(x: f32) -> f32 {
    if (is_nan(x) | is_inf(x)) { return nan_f32(); }
    let t = reduce(abs(x));
    switch t.q {
        case 0u: { return cos_poly(t.r); }
        case 1u: { return -sin_poly(t.r); }
        case 2u: { return -cos_poly(t.r); }
        default: { return sin_poly(t.r); }
    }
}

fn tan_acc(x: f32) -> f32 {
    if (is_nan(x) | is_inf(x)) { return nan_f32(); }
    let t = reduce(abs(x));
    var v = sin_poly(t.r) / cos_poly(t.r);
    if ((t.q & 1u) == 1u) {
        v = -cos_poly(t.r) / sin_poly(t.r);
    }
    return select(v, -v, x < 0.0);
}

fn tanh_acc(x: f32) -> f32 {
    if (is_nan(x)) { return x; }
    let a = abs(x);
    if (a > 9.1) { return with_sign_of(1.0, x); }
    let e = expm1_acc(2.0 * a);
    return with_sign_of(e / (e + 2.0), x);
}

fn sigmoid_acc(x: f32) -> f32 {
    return 1.0 / (1.0 + exp_acc(-x));
}

// erfc for z >= 0 (Numerical Recipes' erfcc): relative error under 1.2e-7 everywhere.
// z^2 = c x^2: past z = 2, the square is taken exactly from x, since rounding it (or z)
// costs up to 8e-6 of e^-z^2 (gelu(-11) was 1e-5 off): x = xh + xl with xh's low 12 bits
// cleared, so that xh^2 is exact and x^2 - xh^2 = xl (x + xh) is small.
// Returns scale * erfc(z), the scale applied before the smallest factor so that gelu's tail
// (where erfc alone is subnormal but x erfc is not) survives adapters that flush subnormals.
fn erfc_of(z: f32, x: f32, c: f32, scale: f32) -> f32 {
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806
        + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
    if (z < 2.0) { return scale * t * exp_acc(-z * z + poly); }
    // erfc(10.5) is below the smallest float32 (and x = inf would make xl NaN).
    // (A signed zero by bits: compilers may fold scale * 0.0 to 0.0.)
    if (z > 10.5) { return with_sign_of(0.0, scale); }
    let xh = bitcast<f32>(bitcast<u32>(x) & 0xfffff000u);
    let xl = x - xh;
    return (scale * t * exp_acc(poly - xl * (x + xh) * c)) * exp_acc(-(xh * xh) * c);
}

fn erfc_pos(z: f32) -> f32 {
    return erfc_of(z, z, 1.0, 1.0);
}

fn erf_acc(x: f32) -> f32 {
    if (is_nan(x)) { return x; }
    let a = abs(x);
    if (a < 0.5) {
        // Maclaurin series; the terms fall by more than 20x each.
        let x2 = x * x;
        return TWO_OVER_SQRT_PI * x * (1.0 + x2 * (-1.0 / 3.0 + x2 * (1.0 / 10.0 + x2 * (-1.0 / 42.0
            + x2 * (1.0 / 216.0 + x2 * (-1.0 / 1320.0 + x2 * (1.0 / 9360.0)))))));
    }
    return with_sign_of(1.0 - erfc_pos(a), x);
}

// x * Phi(x): for negative x, erfc avoids the cancellation in 1 + erf(x / sqrt 2).
fn gelu_acc(x: f32) -> f32 {
    if (is_nan(x)) { return x; }
    let z = x * 0.7071067811865476;
    if (x >= 0.0) { return 0.5 * x * (1.0 + erf_acc(z)); }
    // gelu(-inf) = -inf * 0: NaN, as on the CPU and in MLX.
    if (is_inf(x)) { return nan_f32(); }
    return erfc_of(-z, x, 0.5, 0.5 * x);
}

fn pow_acc(x: f32, y: f32) -> f32 {
    if ((y == 0.0) | (x == 1.0)) { return 1.0; }
    if (is_nan(x) | is_nan(y)) { return nan_f32(); }
    let y_is_int = floor(y) == y;
    let y_is_odd = y_is_int & (abs(y) < 16777216.0) & (fract(y * 0.5) != 0.0);
    if (x == 0.0) {
        let magnitude = select(0.0, inf_f32(), y < 0.0);
        return select(magnitude, with_sign_of(magnitude, x), y_is_odd);
    }
    if ((x < 0.0) & !y_is_int) { return nan_f32(); }
    let magnitude = exp_acc(y * log_acc(abs(x)));
    return select(magnitude, -magnitude, (x < 0.0) & y_is_odd);
}

// Integer powers by squaring, wrapping like the CPU kernels; 0 for a negative exponent, as
// in MLX.
fn ipow_i32(base: i32, exponent: i32) -> i32 {
    if (exponent < 0) {
        return 0;
    }
    var result = 1;
    var b = base;
    var e = exponent;
    while (e != 0) {
        if ((e & 1) == 1) { result = result * b; }
        b = b * b;
        e = e >> 1u;
    }
    return result;
}

fn ipow_u32(base: u32, exponent: u32) -> u32 {
    var result = 1u;
    var b = base;
    var e = exponent;
    while (e != 0u) {
        if ((e & 1u) == 1u) { result = result * b; }
        b = b * b;
        e = e >> 1u;
    }
    return result;
}
