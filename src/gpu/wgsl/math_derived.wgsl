// Float32 functions built on math.wgsl's exp and log, and the division family (floor
// division and remainder), with the same promise: about 1e-5 relative over the whole float32
// range. Tests use `|` and `&` (see math.wgsl).

const LOG10_2: f32 = 0.30102999566398120;
const LOG10_E: f32 = 0.43429448190325183;

// log2 x = e + log2 m: exact at powers of two, as the CPU's is.
fn log2_acc(x: f32) -> f32 {
    let edge = log_edge(x);
    if (edge.y != 0.0) { return edge.x; }
    let p = log_reduced(x);
    return p.x + p.y * LOG2E;
}

fn log10_acc(x: f32) -> f32 {
    let edge = log_edge(x);
    if (edge.y != 0.0) { return edge.x; }
    let p = log_reduced(x);
    return p.x * LOG10_2 + p.y * LOG10_E;
}

// Above 9, e^-|x| is below half an ULP of e^|x|, so sinh and cosh are e^|x| / 2, taken as
// (e^(|x|/2) / 2) e^(|x|/2) so that it stays finite where e^|x| alone would overflow.
fn exp_halved_square(a: f32) -> f32 {
    let h = exp_acc(0.5 * a);
    return (0.5 * h) * h;
}

fn sinh_acc(x: f32) -> f32 {
    if (is_nan(x)) { return x; }
    let a = abs(x);
    if (a >= 9.0) { return with_sign_of(exp_halved_square(a), x); }
    // (e^a - e^-a) / 2 with e = e^a - 1: both terms positive, no cancellation near 0.
    let e = expm1_acc(a);
    return with_sign_of(0.5 * (e + e / (e + 1.0)), x);
}

fn cosh_acc(x: f32) -> f32 {
    if (is_nan(x)) { return x; }
    let a = abs(x);
    if (a >= 9.0) { return exp_halved_square(a); }
    let e = exp_acc(a);
    return 0.5 * (e + 1.0 / e);
}

// log(e^a + e^b) = max + log1p(e^-|a - b|); equal operands (infinities included) give
// themselves plus log 2, and -inf when both are -inf.
fn logaddexp_acc(a: f32, b: f32) -> f32 {
    if (is_nan(a) | is_nan(b)) { return nan_f32(); }
    let m = max(a, b);
    if (is_inf(m) | (a == b)) { return select(m + 0.6931471805599453, m, is_inf(m)); }
    return m + log1p_acc(exp_acc(-abs(a - b)));
}

// fmod, exactly: the significands' long division, one bit a step (as C libraries do it), so
// that a remainder is right whatever the quotient's size. NaN for y = 0, x infinite, or NaN.
fn fmod_exact(x: f32, y: f32) -> f32 {
    var ux = bitcast<u32>(x);
    var uy = bitcast<u32>(y) & 0x7fffffffu;
    let sign = ux & 0x80000000u;
    ux = ux & 0x7fffffffu;
    if ((uy == 0u) | (uy > 0x7f800000u) | (ux >= 0x7f800000u)) { return nan_f32(); }
    if (ux < uy) { return x; }
    if (ux == uy) { return bitcast<f32>(sign); }
    var ex = i32(ux >> 23u);
    var ey = i32(uy >> 23u);
    var mx = significand(ux, &ex);
    let my = significand(uy, &ey);
    for (; ex > ey; ex--) {
        if (mx >= my) { mx -= my; }
        if (mx == 0u) { return bitcast<f32>(sign); }
        mx = mx << 1u;
    }
    if (mx >= my) { mx -= my; }
    if (mx == 0u) { return bitcast<f32>(sign); }
    while (mx < 0x800000u) {
        mx = mx << 1u;
        ex--;
    }
    if (ex > 0) { return bitcast<f32>(sign | (u32(ex) << 23u) | (mx & 0x7fffffu)); }
    // A subnormal remainder (only when y is tiny): shift back below the normal range.
    return bitcast<f32>(sign | (mx >> u32(1 - ex)));
}

// The significand of the positive float with bits `u`, with its leading bit at bit 23;
// subnormals are normalized, `e` lowered to match.
fn significand(u: u32, e: ptr<function, i32>) -> u32 {
    if (*e != 0) { return (u & 0x7fffffu) | 0x800000u; }
    var m = u;
    *e = 1;
    while (m < 0x800000u) {
        m = m << 1u;
        *e -= 1;
    }
    return m;
}

// MLX's remainder: fmod, moved to the divisor's sign.
fn remainder_f32(a: f32, b: f32) -> f32 {
    let r = fmod_exact(a, b);
    return select(r, r + b, (r != 0.0) & ((r < 0.0) != (b < 0.0)));
}

// Floor division rounds the quotient down; a zero divisor gives 0 (the remainder is then a),
// and MIN // -1 wraps, as the CPU kernels do.
fn floor_div_i32(a: i32, b: i32) -> i32 {
    if (b == 0) { return 0; }
    let q = a / b;
    return select(q, q - 1, ((a % b) != 0) & ((a < 0) != (b < 0)));
}

fn remainder_i32(a: i32, b: i32) -> i32 {
    if (b == 0) { return a; }
    let r = a % b;
    return select(r, r + b, (r != 0) & ((r < 0) != (b < 0)));
}

fn floor_div_u32(a: u32, b: u32) -> u32 {
    return select(a / b, 0u, b == 0u);
}

fn remainder_u32(a: u32, b: u32) -> u32 {
    return select(a % b, a, b == 0u);
}
