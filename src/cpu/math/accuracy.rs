//! How far the lane functions are from float64 references, in ULP, over the whole float32
//! range: the check behind the bounds in the module comment. Public so that the browser tests
//! run it on wasm's SIMD instructions too.

use super::LaneFn;
use crate::cpu::simd::F32x4;

/// The largest error found, and the input that gave it.
#[derive(Debug, Clone, Copy)]
pub struct Worst {
    pub ulps: f64,
    pub input: f32,
    pub got: f32,
    pub want: f64,
}

/// `f`'s largest error against `reference` over every `stride`-th float32 bit pattern and the
/// `edges`. NaN must give NaN, infinities must be exact.
pub fn worst_error(f: impl LaneFn, reference: fn(f64) -> f64, stride: u32, edges: &[f32]) -> Worst {
    let mut worst = Worst {
        ulps: 0.0,
        input: 0.0,
        got: 0.0,
        want: 0.0,
    };
    let mut check = |xs: [f32; 4]| {
        let got = f.apply(F32x4::load(&xs)).to_array();
        for (x, y) in xs.into_iter().zip(got) {
            let want = reference(x as f64);
            let ulps = ulps(y, want);
            if ulps > worst.ulps {
                worst = Worst {
                    ulps,
                    input: x,
                    got: y,
                    want,
                };
            }
        }
    };
    let mut bits = 0u64;
    let mut lanes = [0f32; 4];
    let mut filled = 0;
    while bits <= u32::MAX as u64 {
        lanes[filled] = f32::from_bits(bits as u32);
        filled += 1;
        if filled == 4 {
            check(lanes);
            filled = 0;
        }
        bits += stride as u64;
    }
    for chunk in edges.chunks(4) {
        let mut xs = [chunk[0]; 4];
        xs[..chunk.len()].copy_from_slice(chunk);
        check(xs);
    }
    worst
}

/// The first input x <= 0 (every `stride`th bit pattern from -0 to -inf, and the edges)
/// where [`ExpNonPositive`](super::ExpNonPositive) differs from [`Exp`](super::Exp): x, its
/// result and Exp's.
pub fn exp_non_positive_mismatch(stride: usize) -> Option<(f32, f32, f32)> {
    let (exp, lean) = (super::Exp::new(), super::ExpNonPositive::new());
    let patterns = (0x8000_0000u32..=0xff80_0000).step_by(stride);
    let edges = edges().into_iter().filter(|x| *x <= 0.0);
    patterns.map(f32::from_bits).chain(edges).find_map(|x| {
        let v = F32x4::splat(x);
        let (want, got) = (exp.apply(v).to_array()[0], lean.apply(v).to_array()[0]);
        (got.to_bits() != want.to_bits()).then_some((x, got, want))
    })
}

/// |got - want| in units of the float32 spacing at `want` (subnormal spacing below the
/// normal range); infinite when NaN-ness or an infinity disagrees.
pub fn ulps(got: f32, want: f64) -> f64 {
    if want.is_nan() || got.is_nan() {
        return if want.is_nan() && got.is_nan() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    let rounded = want as f32;
    if rounded.is_infinite() || got.is_infinite() {
        return if got == rounded { 0.0 } else { f64::INFINITY };
    }
    let magnitude = rounded.abs().max(f32::MIN_POSITIVE);
    let spacing = f32::from_bits(magnitude.to_bits() & 0x7f80_0000) as f64 * f32::EPSILON as f64;
    (got as f64 - want).abs() / spacing
}

/// Inputs at the edges of the functions' ranges: zeros, infinities, NaN, subnormals, the
/// overflow and underflow thresholds of exp, and the switch points of the reductions.
pub fn edges() -> Vec<f32> {
    let mut edges = vec![
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::from_bits(0x007f_ffff),
        f32::MAX,
        f32::MIN,
        1.0,
        -1.0,
        88.72283,
        88.72284,
        -87.33655,
        -103.27893,
        -103.97208,
        0.625,
        -0.625,
        4.0,
        2.0,
        std::f32::consts::SQRT_2,
        std::f32::consts::FRAC_1_SQRT_2,
        1e-8,
        -1e-8,
    ];
    let negated: Vec<f32> = edges.iter().map(|x| -x).collect();
    edges.extend(negated);
    edges
}

/// erf in float64: its Maclaurin series below 2.5, 1 - erfc above.
pub fn erf64(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    let value = if a < 2.5 {
        let (x2, mut term, mut sum) = (a * a, a, a);
        for n in 1..200 {
            term *= -x2 / n as f64;
            let add = term / (2 * n + 1) as f64;
            sum += add;
            if add.abs() < 1e-18 * sum.abs() {
                break;
            }
        }
        sum * std::f64::consts::FRAC_2_SQRT_PI
    } else {
        1.0 - erfc64(a)
    };
    value.copysign(x)
}

/// erfc in float64 for x >= 2.5: e^-x^2 / √π times the continued fraction
/// 1 / (x + (1/2) / (x + 1 / (x + (3/2) / (x + …)))), evaluated from its 300th term up.
pub fn erfc64(x: f64) -> f64 {
    if x.is_infinite() {
        return 0.0;
    }
    let mut tail = x;
    for n in (1..300).rev() {
        tail = x + (n as f64 / 2.0) / tail;
    }
    (-x * x).exp() / (tail * std::f64::consts::PI.sqrt())
}

/// x Φ(x) in float64: x erfc(-x / √2) / 2, by the series or the continued fraction.
pub fn gelu64(x: f64) -> f64 {
    let w = x * std::f64::consts::FRAC_1_SQRT_2;
    let phi = if w >= 2.5 {
        1.0 - erfc64(w) / 2.0
    } else if w <= -2.5 {
        erfc64(-w) / 2.0
    } else {
        (1.0 + erf64(w)) / 2.0
    };
    x * phi
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::math;

    /// Checks one function, reporting its worst case.
    fn bound(name: &str, f: impl LaneFn, reference: fn(f64) -> f64, max_ulps: f64) {
        let worst = worst_error(f, reference, 257, &edges());
        assert!(worst.ulps <= max_ulps, "{name}: {worst:?}");
    }

    #[test]
    fn exp_of_non_positive_inputs_has_exps_bits() {
        assert_eq!(exp_non_positive_mismatch(253), None);
    }

    #[test]
    fn exp_within_1_5_ulp() {
        bound("exp", math::Exp::new(), f64::exp, 1.5);
    }

    #[test]
    fn expm1_within_2_ulp() {
        bound("expm1", math::Expm1::new(), f64::exp_m1, 2.0);
    }

    #[test]
    fn log_within_1_ulp() {
        bound("log", math::Log::new(), f64::ln, 1.0);
    }

    #[test]
    fn log1p_within_2_ulp() {
        bound("log1p", math::Log1p::new(), f64::ln_1p, 2.0);
    }

    #[test]
    fn sigmoid_within_3_ulp() {
        bound(
            "sigmoid",
            math::Sigmoid::new(),
            |x| 1.0 / (1.0 + (-x).exp()),
            3.0,
        );
    }

    #[test]
    fn tanh_within_2_ulp() {
        bound("tanh", math::Tanh::new(), f64::tanh, 2.0);
    }

    #[test]
    fn erf_within_2_ulp() {
        bound("erf", math::Erf::new(), erf64, 2.0);
    }

    #[test]
    fn gelu_within_7_ulp() {
        bound("gelu", math::Gelu::new(), gelu64, 7.0);
    }

    #[test]
    fn gelu_within_3_ulp_at_and_above_0() {
        let gelu = math::Gelu::new();
        let mut worst = (0.0, 0.0);
        for bits in (0..0x7f80_0000u32).step_by(251) {
            let x = f32::from_bits(bits);
            let got = gelu.apply(F32x4::splat(x)).to_array()[0];
            let error = ulps(got, gelu64(x as f64));
            if error > worst.0 {
                worst = (error, x);
            }
        }
        assert!(worst.0 <= 3.0, "gelu: {} ULP at {}", worst.0, worst.1);
    }

    #[test]
    fn the_references_agree_with_known_values() {
        assert!((erf64(0.5) - 0.520_499_877_813_046_5).abs() < 1e-16);
        assert!((erfc64(3.0) - 2.209_049_699_858_544e-5).abs() < 1e-19);
        assert!((erfc64(10.0) / 2.088_487_583_762_545e-45 - 1.0).abs() < 1e-14);
        assert!((gelu64(-10.0) / -7.619_853_024_160_527e-23 - 1.0).abs() < 1e-13);
    }
}
