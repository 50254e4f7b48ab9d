//! The CPU stream's lane functions as the browser runs them: wasm `simd128` instructions, where
//! the native tests run the portable lanes. The same ULP bounds over a stride of all float32
//! bit patterns and the edge cases.

use wasm_bindgen_test::*;

use tandem::cpu::math::accuracy::{edges, erf64, exp_non_positive_mismatch, gelu64, worst_error};
use tandem::cpu::math::{self, LaneFn};

/// Checks one function over every 1021st bit pattern, reporting its worst case.
fn bound(name: &str, f: impl LaneFn, reference: fn(f64) -> f64, max_ulps: f64) {
    let worst = worst_error(f, reference, 1021, &edges());
    assert!(worst.ulps <= max_ulps, "{name}: {worst:?}");
}

#[wasm_bindgen_test]
fn exp_family_within_bounds() {
    bound("exp", math::Exp::new(), f64::exp, 1.5);
    bound("expm1", math::Expm1::new(), f64::exp_m1, 2.0);
    bound(
        "sigmoid",
        math::Sigmoid::new(),
        |x| 1.0 / (1.0 + (-x).exp()),
        3.0,
    );
    bound("tanh", math::Tanh::new(), f64::tanh, 2.0);
    // softmax's e^(x - max): Exp's bits with fewer instructions.
    assert_eq!(exp_non_positive_mismatch(1021), None);
}

#[wasm_bindgen_test]
fn log_family_within_bounds() {
    bound("log", math::Log::new(), f64::ln, 1.0);
    bound("log1p", math::Log1p::new(), f64::ln_1p, 2.0);
}

#[wasm_bindgen_test]
fn erf_family_within_bounds() {
    bound("erf", math::Erf::new(), erf64, 2.0);
    bound("gelu", math::Gelu::new(), gelu64, 7.0);
}
