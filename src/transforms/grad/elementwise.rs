//! The derivatives of the elementwise ops, as MLX defines them: `abs'(0) = 0` and
//! `relu'(0) = 0`; a tie of `maximum` or `minimum` gives the gradient to the second
//! operand (so `clip` at a bound passes none to its input); rounding and the floor division
//! have zero derivatives; comparisons, logic and tests carry none. Each rule returns its
//! operands' cotangents over the output's shape: `rules.rs` sums them back over broadcast
//! axes. Integer operands carry none.

use std::f64::consts::{FRAC_2_SQRT_PI, LN_2, LN_10, PI};

use crate::array::Array;
use crate::error::Result;
use crate::graph::primitive::{BinaryOp, UnaryOp};
use crate::ops;
use crate::stream::Stream;

/// The arithmetic the rules are written in, on one stream, with numbers as weak scalars of
/// the cotangent's dtype (so a float16 gradient stays float16).
struct Ops<'a> {
    stream: Stream,
    g: &'a Array,
}

impl Ops<'_> {
    fn un(&self, op: UnaryOp, x: &Array) -> Result<Array> {
        ops::unary(op, x, self.stream)
    }
    fn bin(&self, op: BinaryOp, a: &Array, b: &Array) -> Result<Array> {
        ops::binary(op, a, b, self.stream)
    }
    fn mul(&self, a: &Array, b: &Array) -> Result<Array> {
        self.bin(BinaryOp::Multiply, a, b)
    }
    fn div(&self, a: &Array, b: &Array) -> Result<Array> {
        self.bin(BinaryOp::Divide, a, b)
    }
    fn add(&self, a: &Array, b: &Array) -> Result<Array> {
        self.bin(BinaryOp::Add, a, b)
    }
    fn sub(&self, a: &Array, b: &Array) -> Result<Array> {
        self.bin(BinaryOp::Subtract, a, b)
    }
    fn num(&self, value: f64) -> Result<Array> {
        ops::creation::scalar(value, self.g.dtype())
    }
    /// `g * f`.
    fn times(&self, f: &Array) -> Result<Array> {
        self.mul(self.g, f)
    }
    /// `g / f`.
    fn over(&self, f: &Array) -> Result<Array> {
        self.div(self.g, f)
    }
    /// `-g`.
    fn negated(&self) -> Result<Array> {
        self.un(UnaryOp::Neg, self.g)
    }
    /// `where(c, g, 0)` and `where(c, 0, g)`.
    fn split(&self, c: &Array) -> Result<[Array; 2]> {
        let zero = self.num(0.0)?;
        Ok([
            ops::where_(c, self.g, &zero, self.stream)?,
            ops::where_(c, &zero, self.g, self.stream)?,
        ])
    }
    fn zeros(&self, like: &Array) -> Result<Array> {
        ops::zeros(like.shape(), like.dtype(), self.stream)
    }
}

/// The cotangent of `x` for `y = op(x)` with output cotangent `g`.
pub(super) fn unary(
    op: UnaryOp,
    x: &Array,
    y: &Array,
    g: &Array,
    stream: Stream,
) -> Result<Option<Array>> {
    use UnaryOp::*;
    if !x.dtype().is_float() {
        return Ok(None);
    }
    let o = Ops { stream, g };
    let square = |v: &Array| o.mul(v, v);
    // 1 - v^2 and 1 + v^2.
    let one_less = |v: &Array| o.sub(&o.num(1.0)?, &square(v)?);
    let one_more = |v: &Array| o.add(&o.num(1.0)?, &square(v)?);
    let gx = match op {
        Abs => o.times(&o.un(Sign, x)?)?,
        Neg => o.negated()?,
        Sign | Floor | Ceil | Round => o.zeros(x)?,
        Square => o.times(&o.mul(x, &o.num(2.0)?)?)?,
        Sqrt => o.over(&o.mul(y, &o.num(2.0)?)?)?,
        Rsqrt => o.times(&o.mul(&o.num(-0.5)?, &o.div(y, x)?)?)?,
        Exp => o.times(y)?,
        Expm1 => o.times(&o.add(y, &o.num(1.0)?)?)?,
        Log => o.over(x)?,
        Log1p => o.over(&o.add(x, &o.num(1.0)?)?)?,
        Log2 => o.over(&o.mul(x, &o.num(LN_2)?)?)?,
        Log10 => o.over(&o.mul(x, &o.num(LN_10)?)?)?,
        Sin => o.times(&o.un(Cos, x)?)?,
        Cos => o.times(&o.un(Neg, &o.un(Sin, x)?)?)?,
        Tan => o.times(&one_more(y)?)?,
        Tanh => o.times(&one_less(y)?)?,
        Sigmoid => o.times(&o.mul(y, &o.sub(&o.num(1.0)?, y)?)?)?,
        Relu => o.split(&o.bin(BinaryOp::Greater, x, &o.num(0.0)?)?)?[0].clone(),
        Gelu => o.times(&gelu_derivative(&o, x)?)?,
        Erf => {
            let bell = o.un(Exp, &o.un(Neg, &square(x)?)?)?;
            o.times(&o.mul(&bell, &o.num(FRAC_2_SQRT_PI)?)?)?
        }
        Erfinv => {
            let grow = o.un(Exp, &square(y)?)?;
            o.times(&o.mul(&grow, &o.num(PI.sqrt() / 2.0)?)?)?
        }
        Reciprocal => o.times(&o.un(Neg, &square(y)?)?)?,
        Sinh => o.times(&o.un(Cosh, x)?)?,
        Cosh => o.times(&o.un(Sinh, x)?)?,
        Arcsin => o.over(&o.un(Sqrt, &one_less(x)?)?)?,
        Arccos => o.div(&o.negated()?, &o.un(Sqrt, &one_less(x)?)?)?,
        Arctan => o.over(&one_more(x)?)?,
        Arcsinh => o.over(&o.un(Sqrt, &one_more(x)?)?)?,
        Arccosh => o.over(&o.un(Sqrt, &o.sub(&square(x)?, &o.num(1.0)?)?)?)?,
        Arctanh => o.over(&one_less(x)?)?,
        Cast => ops::astype(g, x.dtype(), stream),
        LogicalNot | IsNan | IsInf | IsFinite => return Ok(None),
    };
    Ok(Some(gx))
}

/// `gelu'(x) = Φ(x) + x φ(x)` for the exact (erf) GELU.
fn gelu_derivative(o: &Ops, x: &Array) -> Result<Array> {
    let half = o.num(0.5)?;
    let cdf = o.mul(
        &half,
        &o.add(
            &o.num(1.0)?,
            &o.un(
                UnaryOp::Erf,
                &o.mul(x, &o.num(std::f64::consts::FRAC_1_SQRT_2)?)?,
            )?,
        )?,
    )?;
    let bell = o.un(UnaryOp::Exp, &o.mul(&o.mul(x, x)?, &o.num(-0.5)?)?)?;
    let pdf = o.mul(&bell, &o.num(1.0 / (2.0 * PI).sqrt())?)?;
    o.add(&cdf, &o.mul(x, &pdf)?)
}

/// The cotangents of `a` and `b` for `y = op(a, b)`, over `y`'s shape.
pub(super) fn binary(
    op: BinaryOp,
    [a, b]: [&Array; 2],
    y: &Array,
    g: &Array,
    stream: Stream,
) -> Result<[Option<Array>; 2]> {
    use BinaryOp::*;
    let o = Ops { stream, g };
    // Integer operands of a float result are converted to it first, as the op converted them:
    // `a * a` of a uint32 would wrap.
    let float = |x: &Array| match y.dtype().is_float() {
        true => super::cotangent::in_dtype(x, y.dtype(), stream),
        false => x.clone(),
    };
    let (a_in, b_in) = (a, b);
    let (a, b) = (&float(a), &float(b));
    let (ga, gb) = match op {
        Add => (g.clone(), g.clone()),
        Subtract => (g.clone(), o.negated()?),
        Multiply => (o.times(b)?, o.times(a)?),
        Divide => (o.over(b)?, o.div(&o.mul(&o.negated()?, y)?, b)?),
        Power => {
            let lowered = o.bin(Power, a, &o.sub(b, &o.num(1.0)?)?)?;
            let ga = o.times(&o.mul(b, &lowered)?)?;
            // y log(a), but 0 where y is 0 (MLX: 0^b for b > 0 has no slope in b).
            let slope = o.mul(y, &o.un(UnaryOp::Log, a)?)?;
            let flat = o.bin(Equal, y, &o.num(0.0)?)?;
            let slope = ops::where_(&flat, &o.num(0.0)?, &slope, stream)?;
            (ga, o.times(&slope)?)
        }
        Maximum => {
            let [first, second] = o.split(&o.bin(Greater, a, b)?)?;
            (first, second)
        }
        Minimum => {
            let [first, second] = o.split(&o.bin(Less, a, b)?)?;
            (first, second)
        }
        LogAddExp => {
            let share = |v: &Array| o.times(&o.un(UnaryOp::Exp, &o.sub(v, y)?)?);
            (share(a)?, share(b)?)
        }
        Arctan2 => {
            let norm = o.add(&o.mul(a, a)?, &o.mul(b, b)?)?;
            (
                o.times(&o.div(b, &norm)?)?,
                o.div(&o.mul(&o.negated()?, a)?, &norm)?,
            )
        }
        Remainder => (g.clone(), o.mul(&o.negated()?, &o.bin(FloorDivide, a, b)?)?),
        FloorDivide => (o.zeros(y)?, o.zeros(y)?),
        Equal | NotEqual | Less | LessEqual | Greater | GreaterEqual | LogicalAnd | LogicalOr => {
            return Ok([None, None]);
        }
    };
    let carries = |x: &Array, gx: Array| x.dtype().is_float().then_some(gx);
    Ok([carries(a_in, ga), carries(b_in, gb)])
}
