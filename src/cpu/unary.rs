//! Elementwise unary ops. Float-only ops convert integer and bool inputs to `float32` first.
//! Float ops run four lanes at a time (`cpu::math` states the transcendentals' error bounds);
//! `sin`, `cos` and `tan` use Rust's `f32` functions lane by lane, for their range reduction
//! over the whole float32 range.

use std::mem::MaybeUninit;

use crate::cpu::binary::Integer;
use crate::cpu::cast::{Operand, cast_strided};
use crate::cpu::elementwise::{Strided, map1};
use crate::cpu::lanes;
use crate::cpu::math::{self, LaneFn};
use crate::cpu::simd::F32x4;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::primitive::UnaryOp;

/// `op(x)` over `shape`, as words of `out` (the node's dtype).
pub fn unary(op: UnaryOp, out: DType, shape: &[usize], x: Operand) -> Result<Vec<u32>> {
    if op == UnaryOp::Cast {
        return Ok(crate::cpu::cast::cast_elements(shape, &x, out));
    }
    let compute = op.compute_dtype(out);
    let converted = cast_strided(&x, compute);
    Ok(match compute {
        DType::Float32 if op.is_float_test() => float_test(op, shape, &converted.view()),
        DType::Float32 => {
            let x = lanes::dense(shape, &converted.view::<f32>());
            bytemuck::cast_vec(float(op, &x))
        }
        DType::Int32 => integer::<i32>(op, shape, &converted.view())?,
        DType::Uint32 => integer::<u32>(op, shape, &converted.view())?,
        DType::Bool => boolean(op, shape, &converted.view())?,
        packed => unreachable!("{packed:?} is widened before a kernel runs"),
    })
}

fn float(op: UnaryOp, x: &[f32]) -> Vec<f32> {
    lanes::split(x, |from, dst| float_into(op, from, dst))
}

/// `op` over `x` into `dst` (as long), for a float op (not a test, a cast or `logicalNot`):
/// the kernels of `unary` itself, one loop per op, which a fused program runs on its chunks.
pub fn float_into(op: UnaryOp, x: &[f32], dst: &mut [MaybeUninit<f32>]) {
    use UnaryOp::*;
    let zero = F32x4::splat(0.0);
    let one = F32x4::splat(1.0);
    match op {
        Abs => lanes::unary_into(x, dst, &F32x4::abs),
        Neg => lanes::unary_into(x, dst, &|v: F32x4| -v),
        // MLX: +0 for both zeros and for NaN.
        Sign => lanes::unary_into(x, dst, &|v: F32x4| {
            v.gt(zero).select(one, v.lt(zero).select(-one, zero))
        }),
        Square => lanes::unary_into(x, dst, &|v: F32x4| v * v),
        Sqrt => lanes::unary_into(x, dst, &F32x4::sqrt),
        Rsqrt => lanes::unary_into(x, dst, &|v: F32x4| one / v.sqrt()),
        Exp => lane_fn(x, dst, math::Exp::new()),
        Expm1 => lane_fn(x, dst, math::Expm1::new()),
        Log => lane_fn(x, dst, math::Log::new()),
        Log1p => lane_fn(x, dst, math::Log1p::new()),
        Sin => lanes::unary_into(x, dst, &|v| by_lane(v, f32::sin)),
        Cos => lanes::unary_into(x, dst, &|v| by_lane(v, f32::cos)),
        Tan => lanes::unary_into(x, dst, &|v| by_lane(v, f32::tan)),
        Tanh => lane_fn(x, dst, math::Tanh::new()),
        Sigmoid => lane_fn(x, dst, math::Sigmoid::new()),
        // NaN propagates (it compares false), and -0 gives +0 as in MLX.
        Relu => lanes::unary_into(x, dst, &|v: F32x4| v.le(zero).select(zero, v)),
        Gelu => lane_fn(x, dst, math::Gelu::new()),
        Erf => lane_fn(x, dst, math::Erf::new()),
        Floor => lanes::unary_into(x, dst, &F32x4::floor),
        Ceil => lanes::unary_into(x, dst, &F32x4::ceil),
        Round => lanes::unary_into(x, dst, &F32x4::round),
        Reciprocal => lanes::unary_into(x, dst, &|v: F32x4| one / v),
        Log2 => in_f64(x, dst, f64::log2),
        Log10 => in_f64(x, dst, f64::log10),
        Sinh => in_f64(x, dst, f64::sinh),
        Cosh => in_f64(x, dst, f64::cosh),
        Arcsin => in_f64(x, dst, f64::asin),
        Arccos => in_f64(x, dst, f64::acos),
        Arctan => in_f64(x, dst, f64::atan),
        Arcsinh => in_f64(x, dst, f64::asinh),
        Arccosh => in_f64(x, dst, f64::acosh),
        Arctanh => in_f64(x, dst, f64::atanh),
        Erfinv => {
            for (d, &v) in dst.iter_mut().zip(x) {
                d.write(math::erfinv(v));
            }
        }
        LogicalNot | Cast | IsNan | IsInf | IsFinite => unreachable!("handled before dispatch"),
    }
}

/// `f` in float64, rounded once: for the functions that have no lane version, whose float64
/// forms (Rust's, from its libm) are correctly rounded or nearly, so the result is within an
/// ULP of float32's exact answer.
fn in_f64(x: &[f32], dst: &mut [MaybeUninit<f32>], f: fn(f64) -> f64) {
    for (d, &v) in dst.iter_mut().zip(x) {
        d.write(f(f64::from(v)) as f32);
    }
}

/// `isnan`, `isinf` and `isfinite`, as bool words.
fn float_test(op: UnaryOp, shape: &[usize], x: &Strided<f32>) -> Vec<u32> {
    let test: fn(f32) -> bool = match op {
        UnaryOp::IsNan => f32::is_nan,
        UnaryOp::IsInf => f32::is_infinite,
        _ => f32::is_finite,
    };
    map1(shape, x, |v| u32::from(test(v)))
}

/// `f` over `x` into `dst`, its constants made once.
fn lane_fn(x: &[f32], dst: &mut [MaybeUninit<f32>], f: impl LaneFn) {
    lanes::unary_into(x, dst, &|v| f.apply(v))
}

/// `f` on each lane: for the functions without a lane version.
#[inline(always)]
fn by_lane(v: F32x4, f: fn(f32) -> f32) -> F32x4 {
    F32x4::load(&v.to_array().map(f))
}

fn integer<T: Integer + Signed>(op: UnaryOp, shape: &[usize], x: &Strided<T>) -> Result<Vec<u32>> {
    use UnaryOp::*;
    let f: fn(T) -> T = match op {
        Abs => T::wrapping_abs,
        Neg => T::wrapping_neg,
        Sign => T::signum,
        Square => |v| v.wrapping_mul(v),
        Relu => |v| v.max(T::default()),
        Floor | Ceil | Round => |v| v,
        _ => return Err(unsupported(op, T::DTYPE)),
    };
    Ok(bytemuck::cast_slice(&map1(shape, x, f)).to_vec())
}

fn boolean(op: UnaryOp, shape: &[usize], x: &Strided<u32>) -> Result<Vec<u32>> {
    use UnaryOp::*;
    match op {
        LogicalNot => Ok(map1(shape, x, |v| v ^ 1)),
        Abs | Sign | Square | Relu | Floor | Ceil | Round => Ok(map1(shape, x, |v| v)),
        _ => Err(unsupported(op, DType::Bool)),
    }
}

fn unsupported(op: UnaryOp, dtype: DType) -> Error {
    Error::DType(format!(
        "{}: not supported for {} arrays",
        op.name(),
        dtype.name()
    ))
}

/// The integer unary operations that differ between signed and unsigned types.
pub trait Signed: Integer {
    const DTYPE: DType;
    fn wrapping_abs(self) -> Self;
    fn wrapping_neg(self) -> Self;
    fn signum(self) -> Self;
}

impl Signed for i32 {
    const DTYPE: DType = DType::Int32;
    fn wrapping_abs(self) -> Self {
        i32::wrapping_abs(self)
    }
    fn wrapping_neg(self) -> Self {
        i32::wrapping_neg(self)
    }
    fn signum(self) -> Self {
        i32::signum(self)
    }
}

impl Signed for u32 {
    const DTYPE: DType = DType::Uint32;
    fn wrapping_abs(self) -> Self {
        self
    }
    fn wrapping_neg(self) -> Self {
        u32::wrapping_neg(self)
    }
    fn signum(self) -> Self {
        u32::from(self > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(op: UnaryOp, out: DType, words: &[u32], dtype: DType) -> Result<Vec<u32>> {
        let x = Operand {
            words,
            dtype,
            strides: &[1],
            offset: 0,
        };
        unary(op, out, &[words.len()], x)
    }

    #[test]
    fn int_exp_becomes_float() {
        let out = run(UnaryOp::Exp, DType::Float32, &[0, 1], DType::Int32).unwrap();
        assert_eq!(out, vec![1.0f32.to_bits(), std::f32::consts::E.to_bits()]);
    }

    #[test]
    fn round_is_half_to_even() {
        let xs: Vec<u32> = [0.5f32, 1.5, 2.5, -0.5]
            .iter()
            .map(|x| x.to_bits())
            .collect();
        let out = run(UnaryOp::Round, DType::Float32, &xs, DType::Float32).unwrap();
        let got: Vec<f32> = out.into_iter().map(f32::from_bits).collect();
        assert_eq!(got, vec![0.0, 2.0, 2.0, -0.0]);
    }

    #[test]
    fn negating_bool_is_a_dtype_error() {
        let err = run(UnaryOp::Neg, DType::Bool, &[1], DType::Bool).unwrap_err();
        assert_eq!(err.message(), "neg: not supported for bool arrays");
    }
}
