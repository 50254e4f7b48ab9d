// Inverse trigonometric and hyperbolic functions and erfinv in float32, to about 1e-6
// relative over the whole range: WGSL's built-ins promise far less (Vulkan allows atan 4096
// ULP). Range reductions after Cephes; the polynomials are minimax fits for the reduced range.
// Tests use `|` and `&` (see math.wgsl).

const PI: f32 = 3.141592653589793;
// tan(3 pi / 8) and tan(pi / 8).
const TAN_3PI_8: f32 = 2.414213562373095;
const TAN_PI_8: f32 = 0.41421356237309503;

// atan of |z| <= tan(pi / 8).
fn atan_small(z: f32) -> f32 {
    let z2 = z * z;
    return z + z * z2 * (-3.33329491539e-1 + z2 * (1.99777106478e-1 + z2 * (-1.38776856032e-1 + z2 * 8.05374449538e-2)));
}

fn atan_acc(x: f32) -> f32 {
    if (is_nan(x)) { return x; }
    let a = abs(x);
    var v: f32;
    if (a > TAN_3PI_8) {
        v = HALF_PI - atan_small(1.0 / a);
    } else if (a > TAN_PI_8) {
        v = QUARTER_PI + atan_small((a - 1.0) / (a + 1.0));
    } else {
        v = atan_small(a);
    }
    return with_sign_of(v, x);
}

// The angle of (x, y). The ratio taken is the smaller magnitude over the larger, so that it
// neither overflows nor loses the angle's digits.
fn atan2_acc(y: f32, x: f32) -> f32 {
    if (is_nan(x) | is_nan(y)) { return nan_f32(); }
    let ax = abs(x);
    let ay = abs(y);
    var t: f32;
    if (is_inf(ax) & is_inf(ay)) {
        t = QUARTER_PI;
    } else if (ay > ax) {
        t = HALF_PI - atan_acc(ax / ay);
    } else if (ay == 0.0) {
        t = 0.0;
    } else {
        t = atan_acc(ay / ax);
    }
    // x < 0 or x = -0: the angle is measured from the negative axis.
    let negative_x = (bitcast<u32>(x) & 0x80000000u) != 0u;
    if (negative_x) { t = PI - t; }
    return with_sign_of(t, y);
}

// asin of 0 <= z <= 1/2.
fn asin_small(z: f32) -> f32 {
    let z2 = z * z;
    return z + z * z2 * (1.6666752422e-1 + z2 * (7.4953002686e-2 + z2 * (4.5470025998e-2 + z2 * (2.4181311049e-2 + z2 * 4.2163199048e-2))));
}

fn asin_acc(x: f32) -> f32 {
    if (is_nan(x)) { return x; }
    let a = abs(x);
    if (a > 1.0) { return nan_f32(); }
    // Above 1/2: asin a = pi/2 - 2 asin(sqrt((1 - a) / 2)), and 1 - a is exact.
    if (a > 0.5) { return with_sign_of(HALF_PI - 2.0 * asin_small(sqrt(0.5 * (1.0 - a))), x); }
    return with_sign_of(asin_small(a), x);
}

fn acos_acc(x: f32) -> f32 {
    if (is_nan(x)) { return x; }
    if (abs(x) > 1.0) { return nan_f32(); }
    if (x > 0.5) { return 2.0 * asin_small(sqrt(0.5 * (1.0 - x))); }
    if (x < -0.5) { return PI - 2.0 * asin_small(sqrt(0.5 * (1.0 + x))); }
    return HALF_PI - asin_small(x);
}

fn asinh_acc(x: f32) -> f32 {
    if (is_nan(x) | is_inf(x)) { return x; }
    let a = abs(x);
    // Past 2^12, sqrt(a^2 + 1) is a to float32 precision: log(2a).
    if (a > 4096.0) { return with_sign_of(log_acc(a) + 0.6931471805599453, x); }
    // log(a + sqrt(a^2 + 1)) = log1p(a + a^2 / (1 + sqrt(a^2 + 1))): no cancellation near 0.
    let a2 = a * a;
    return with_sign_of(log1p_acc(a + a2 / (1.0 + sqrt(a2 + 1.0))), x);
}

fn acosh_acc(x: f32) -> f32 {
    if (is_nan(x) | (x < 1.0)) { return nan_f32(); }
    if (is_inf(x)) { return x; }
    if (x > 4096.0) { return log_acc(x) + 0.6931471805599453; }
    // log(x + sqrt(x^2 - 1)) with t = x - 1 (exact below 2): log1p(t + sqrt(t (t + 2))).
    let t = x - 1.0;
    return log1p_acc(t + sqrt(t * (t + 2.0)));
}

fn atanh_acc(x: f32) -> f32 {
    if (is_nan(x)) { return x; }
    let a = abs(x);
    if (a > 1.0) { return nan_f32(); }
    if (a == 1.0) { return with_sign_of(inf_f32(), x); }
    // atanh a = log1p(2a / (1 - a)) / 2, and 1 - a is exact above 1/2.
    return with_sign_of(0.5 * log1p_acc(2.0 * a / (1.0 - a)), x);
}

// Giles' single-precision erfinv ("Approximating the erfinv function", 2010): a polynomial
// in w = -log(1 - x^2), one for the centre and one for the tails.
fn erfinv_acc(x: f32) -> f32 {
    if (is_nan(x)) { return x; }
    let a = abs(x);
    if (a > 1.0) { return nan_f32(); }
    if (a == 1.0) { return with_sign_of(inf_f32(), x); }
    // (1 - a)(1 + a): 1 - a is exact above 1/2, where the tails need it.
    var w = -log_acc((1.0 - a) * (1.0 + a));
    var p: f32;
    if (w < 5.0) {
        w = w - 2.5;
        p = 2.81022636e-08;
        p = 3.43273939e-07 + p * w;
        p = -3.5233877e-06 + p * w;
        p = -4.39150654e-06 + p * w;
        p = 0.00021858087 + p * w;
        p = -0.00125372503 + p * w;
        p = -0.00417768164 + p * w;
        p = 0.246640727 + p * w;
        p = 1.50140941 + p * w;
    } else {
        w = sqrt(w) - 3.0;
        p = -0.000200214257;
        p = 0.000100950558 + p * w;
        p = 0.00134934322 + p * w;
        p = -0.00367342844 + p * w;
        p = 0.00573950773 + p * w;
        p = -0.0076224613 + p * w;
        p = 0.00943887047 + p * w;
        p = 1.00167406 + p * w;
        p = 2.83297682 + p * w;
    }
    return p * x;
}
