//! Float32 math on four lanes (`F32x4`), for the CPU stream's elementwise kernels. Each
//! function is a range reduction and a polynomial whose coefficients were fitted (Chebyshev,
//! in 40-digit arithmetic) for this reduction, and rounded to float32.
//!
//! Bounds, measured by the tests below against float64 references over every 257th float32
//! bit pattern and the edges of each function's range (ULP: the float32 spacing at the exact
//! result; subnormal results are measured in the subnormal spacing):
//!
//! | function | max error |
//! |---|---|
//! | `exp` | 1.5 ULP (1.05 found scanning every third pattern) |
//! | `expm1` | 2 ULP |
//! | `log` | 1 ULP |
//! | `log1p` | 2 ULP |
//! | `sigmoid` | 3 ULP |
//! | `tanh` | 2 ULP |
//! | `erf` | 2 ULP |
//! | `gelu` | 3 ULP for x >= 0, 7 below |
//!
//! For x < 0, gelu is x e^(-x^2/2) erfcx(|x|/√2) / 2, a product of four rounded factors, so
//! that its far tail keeps its relative precision instead of cancelling to 0.
//!
//! The tests assert these bounds on the build they run in: natively the lanes are computed one
//! by one, in the browser by wasm's SIMD instructions, with the same IEEE operations.

pub mod accuracy;
mod erf;
mod erfinv;
mod exp;
mod log;

pub use erf::{Erf, Gelu};
pub use erfinv::erfinv;
pub use exp::{Exp, ExpNonPositive, Expm1, Sigmoid, Tanh};
pub use log::{Log, Log1p};

use crate::cpu::simd::F32x4;

/// A lane function, its constants held as vectors: `Type::new()` once per kernel, `apply` per
/// vector.
pub trait LaneFn: Copy {
    fn apply(&self, x: F32x4) -> F32x4;
}

/// Declares a lane function's constants: a struct of vectors whose `new()` splats them and
/// hides them from the compiler (`black_box`). Otherwise LLVM folds each into a `v128.const`
/// inside the loop, which V8 rebuilds from immediates on every iteration: hoisting them made
/// `exp` twice as fast in Chromium.
macro_rules! lane_constants {
    ($(#[$doc:meta])* pub struct $name:ident { $($field:ident: $ty:ty = $value:expr,)* }) => {
        $(#[$doc])*
        #[derive(Clone, Copy)]
        pub struct $name {
            $($field: $ty,)*
        }

        impl $name {
            #[inline(never)]
            pub fn new() -> $name {
                std::hint::black_box($name { $($field: $value,)* })
            }
        }

        impl Default for $name {
            fn default() -> $name {
                $name::new()
            }
        }
    };
}
pub(crate) use lane_constants;

/// `v` in every lane.
fn v(v: f32) -> F32x4 {
    F32x4::splat(v)
}

/// Each of `values` in every lane of its vector.
fn vs<const N: usize>(values: [f32; N]) -> [F32x4; N] {
    values.map(F32x4::splat)
}

/// `c[0] + x * (c[1] + x * (…))`: Horner's scheme, coefficients from the constant term up.
#[inline(always)]
fn horner(x: F32x4, c: &[F32x4]) -> F32x4 {
    let mut acc = c[c.len() - 1];
    for &k in c[..c.len() - 1].iter().rev() {
        acc = acc * x + k;
    }
    acc
}
