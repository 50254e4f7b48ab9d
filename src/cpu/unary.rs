//! Elementwise unary ops. Float-only ops convert integer and bool inputs to `float32` first.
//! Transcendentals use Rust's (correctly range-reduced) `f32` functions, and `erf`, which std
//! lacks, is evaluated in `f64`.

use crate::cpu::binary::Integer;
use crate::cpu::cast::{Operand, cast_strided};
use crate::cpu::elementwise::{Strided, map1};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::primitive::UnaryOp;

/// `op(x)` over `shape`, as words of `out` (the node's dtype).
pub fn unary(op: UnaryOp, out: DType, shape: &[usize], x: Operand) -> Result<Vec<u32>> {
    if op == UnaryOp::Cast {
        return Ok(map1(shape, &cast_strided(&x, out).view::<u32>(), |w| w));
    }
    let compute = if op == UnaryOp::LogicalNot {
        DType::Bool
    } else {
        out
    };
    let converted = cast_strided(&x, compute);
    Ok(match compute {
        DType::Float32 => map1(shape, &converted.view::<f32>(), float_fn(op))
            .into_iter()
            .map(f32::to_bits)
            .collect(),
        DType::Int32 => integer::<i32>(op, shape, &converted.view())?,
        DType::Uint32 => integer::<u32>(op, shape, &converted.view())?,
        DType::Bool => boolean(op, shape, &converted.view())?,
    })
}

fn float_fn(op: UnaryOp) -> fn(f32) -> f32 {
    use UnaryOp::*;
    match op {
        Abs => f32::abs,
        Neg => |x| -x,
        // MLX: +0 for both zeros and for NaN.
        Sign => |x| {
            if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                0.0
            }
        },
        Square => |x| x * x,
        Sqrt => f32::sqrt,
        Rsqrt => |x| 1.0 / x.sqrt(),
        Exp => f32::exp,
        Expm1 => f32::exp_m1,
        Log => f32::ln,
        Log1p => f32::ln_1p,
        Sin => f32::sin,
        Cos => f32::cos,
        Tan => f32::tan,
        Tanh => f32::tanh,
        Sigmoid => |x| 1.0 / (1.0 + (-x).exp()),
        // NaN propagates, and -0 gives +0 as in MLX (`f32::max` may return either zero).
        Relu => |x| if x.is_nan() || x > 0.0 { x } else { 0.0 },
        Gelu => |x| (0.5 * x as f64 * (1.0 + erf(x as f64 / std::f64::consts::SQRT_2))) as f32,
        Erf => |x| erf(x as f64) as f32,
        Floor => f32::floor,
        Ceil => f32::ceil,
        Round => f32::round_ties_even,
        Reciprocal => |x| 1.0 / x,
        LogicalNot | Cast => unreachable!("handled before dispatch"),
    }
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

/// The error function in `f64`: its Maclaurin series below 3 (converging, with cancellation
/// costing under two digits of f64's sixteen), and 1 − erfc from Abramowitz and Stegun 7.1.26
/// above (absolute error 1.5e-7 where erf is within 2.3e-5 of 1).
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    let value = if a < 3.0 {
        let (x2, mut term, mut sum) = (a * a, a, a);
        for n in 1..80 {
            term *= -x2 / n as f64;
            let add = term / (2 * n + 1) as f64;
            sum += add;
            if add.abs() < 1e-17 * sum.abs() {
                break;
            }
        }
        sum * std::f64::consts::FRAC_2_SQRT_PI
    } else {
        let t = 1.0 / (1.0 + 0.3275911 * a);
        let poly = t
            * (0.254829592
                + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
        1.0 - poly * (-a * a).exp()
    };
    value.copysign(x)
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
    fn erf_matches_known_values() {
        for (x, want) in [
            (0.5, 0.520_499_877_813_046_5),
            (1.0, 0.842_700_792_949_714_9),
            (2.5, 0.999_593_047_982_555),
            (-3.5, -0.999_999_256_901_627_7),
        ] {
            assert!(
                (erf(x) - want).abs() < 2e-7,
                "erf({x}) = {} not {want}",
                erf(x)
            );
        }
        assert_eq!(erf(0.0), 0.0);
        assert!((erf(1e-8) / (1e-8 * std::f64::consts::FRAC_2_SQRT_PI) - 1.0).abs() < 1e-12);
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
