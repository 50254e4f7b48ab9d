//! The op functions of the JS API (a folder of its own name, not a second `ops/`), one file
//! per family as in `src/ops/`: parse arguments, call the core op builder. Each op is also an
//! `NDArray` method (see `methods.rs`) with the same arguments after the array. The helpers
//! every family shares are here.

use wasm_bindgen::prelude::*;

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::primitive::{BinaryOp, UnaryOp};
use crate::js::data::numbers_to_words;
use crate::js::error::{JsResult, js};
use crate::js::ndarray::NdArray;
use crate::js::options::{Options, STREAM, describe};
use crate::js::stream::stream_in;
use crate::ops;
use crate::stream::Stream;

/// The stream of an op whose only option is `stream`.
pub(crate) fn stream_option(op: &'static str, opts: &JsValue) -> Result<Stream> {
    stream_in(&Options::parse(op, opts, STREAM)?)
}

pub(crate) fn unary_op(op: UnaryOp, x: &NdArray, opts: &JsValue) -> JsResult<NdArray> {
    let device = js(stream_option(op.name(), opts))?;
    js(ops::unary(op, &x.array()?, device)).map(NdArray::new)
}

/// An operand as it arrives: the array of a method's `this`, or a JS value.
pub(crate) enum Arg<'a> {
    Array(&'a Array),
    Js(&'a JsValue),
}

impl Arg<'_> {
    fn resolve(&self, op: &str) -> Result<Array> {
        match self {
            Arg::Array(a) => Ok((*a).clone()),
            Arg::Js(v) => NdArray::from_js(op, v),
        }
    }
}

pub(crate) fn binary_op(op: BinaryOp, a: Arg, b: Arg, opts: &JsValue) -> JsResult<NdArray> {
    let device = js(stream_option(op.name(), opts))?;
    let (a, b) = js(operands(op.name(), &a, &b))?;
    js(ops::binary(op, &a, &b, device)).map(NdArray::new)
}

/// Two operands, either of which may be a JS number or boolean instead of an NDArray.
fn operands(op: &str, a: &Arg, b: &Arg) -> Result<(Array, Array)> {
    let scalar = |arg: &Arg, dtype| match arg {
        Arg::Js(v) => scalar_for(op, v, dtype),
        Arg::Array(a) => Ok((*a).clone()),
    };
    match (a.resolve(op), b.resolve(op)) {
        (Ok(a), Ok(b)) => Ok((a, b)),
        (Ok(x), Err(_)) => Ok((x.clone(), scalar(b, x.dtype())?)),
        (Err(_), Ok(y)) => Ok((scalar(a, y.dtype())?, y)),
        (Err(e), Err(_)) => Err(e),
    }
}

/// A JS scalar next to an array of `dtype`, typed weakly as MLX types Python scalars: it
/// takes the array's dtype unless that would lose it (a fraction next to integers, or a
/// number next to bools).
fn scalar_for(op: &str, value: &JsValue, dtype: DType) -> Result<Array> {
    if let Some(flag) = value.as_bool() {
        return Array::from_words(vec![u32::from(flag)], &[], DType::Bool);
    }
    let x = value.as_f64().ok_or_else(|| {
        Error::Value(format!(
            "{op}: operands must be NDArrays, numbers or booleans, got {}",
            describe(value)
        ))
    })?;
    let dtype = match dtype {
        float if float.is_float() => float,
        _ if x.fract() != 0.0 || !x.is_finite() => DType::Float32,
        DType::Bool => DType::Int32,
        integer => integer,
    };
    Array::from_words(numbers_to_words(&[x], dtype), &[], dtype)
}

/// Declares the JS functions of elementwise ops: `name(x, opts?)` or `name(a, b, opts?)`.
macro_rules! elementwise_functions {
    (unary: $($uf:ident $ujs:literal $uop:ident),* ; binary: $($bf:ident $bjs:literal $bop:ident),*) => {
        $(
            #[doc = concat!("`", $ujs, "(x, opts?)`, elementwise (exported by `exported`).")]
            pub fn $uf(x: &NdArray, opts: JsValue) -> JsResult<NdArray> {
                unary_op(UnaryOp::$uop, x, &opts)
            }
        )*
        $(
            #[doc = concat!("`", $bjs, "(a, b, opts?)`, elementwise with broadcasting; either")]
            #[doc = "operand may be a number or boolean."]
            #[wasm_bindgen(js_name = $bjs)]
            pub fn $bf(
                #[wasm_bindgen(unchecked_param_type = "NDArray | number | boolean")] a: JsValue,
                #[wasm_bindgen(unchecked_param_type = "NDArray | number | boolean")] b: JsValue,
                opts: JsValue,
            ) -> JsResult<NdArray> {
                binary_op(BinaryOp::$bop, Arg::Js(&a), Arg::Js(&b), &opts)
            }
        )*
    };
}

/// Calls `$then!` with the elementwise ops of the JS API: Rust name, JS name, and op.
macro_rules! with_elementwise_ops {
    ($then:ident) => {
        $then! {
            unary:
                abs "abs" Abs, neg "neg" Neg, sign "sign" Sign, square "square" Square,
                sqrt "sqrt" Sqrt, rsqrt "rsqrt" Rsqrt, exp "exp" Exp, expm1 "expm1" Expm1,
                log "log" Log, log1p "log1p" Log1p, sin "sin" Sin, cos "cos" Cos, tan "tan" Tan,
                tanh "tanh" Tanh, sigmoid "sigmoid" Sigmoid, relu "relu" Relu, gelu "gelu" Gelu,
                erf "erf" Erf, floor "floor" Floor, ceil "ceil" Ceil, round "round" Round,
                reciprocal "reciprocal" Reciprocal, logical_not "logicalNot" LogicalNot,
                isnan "isnan" IsNan, isinf "isinf" IsInf, isfinite "isfinite" IsFinite,
                log2 "log2" Log2, log10 "log10" Log10, sinh "sinh" Sinh, cosh "cosh" Cosh,
                arcsin "arcsin" Arcsin, arccos "arccos" Arccos, arctan "arctan" Arctan,
                arcsinh "arcsinh" Arcsinh, arccosh "arccosh" Arccosh, arctanh "arctanh" Arctanh,
                erfinv "erfinv" Erfinv;
            binary:
                add "add" Add, subtract "subtract" Subtract, multiply "multiply" Multiply,
                divide "divide" Divide, power "power" Power, maximum "maximum" Maximum,
                minimum "minimum" Minimum, equal "equal" Equal, not_equal "notEqual" NotEqual,
                less "less" Less, less_equal "lessEqual" LessEqual, greater "greater" Greater,
                greater_equal "greaterEqual" GreaterEqual, logical_and "logicalAnd" LogicalAnd,
                logical_or "logicalOr" LogicalOr, logaddexp "logaddexp" LogAddExp,
                floor_divide "floorDivide" FloorDivide, remainder "remainder" Remainder,
                arctan2 "arctan2" Arctan2
        }
    };
}
pub(crate) use with_elementwise_ops;

/// Calls `$then!` with the reductions of the JS API that map to one `ReduceOp`.
macro_rules! with_reductions {
    ($then:ident) => {
        $then! {
            sum "sum" Sum, prod "prod" Prod, max "max" Max, min "min" Min,
            argmax "argmax" ArgMax, argmin "argmin" ArgMin
        }
    };
}
pub(crate) use with_reductions;

macro_rules! reduction_functions {
    ($($f:ident $js:literal $op:ident),*) => {
        $(
            #[doc = concat!("`", $js, "(x, {axis?, keepdims?, stream?})` (exported by `exported`).")]
            pub fn $f(x: &NdArray, opts: JsValue) -> JsResult<NdArray> {
                reduce_op(ReduceOp::$op, x, &opts)
            }
        )*
    };
}

/// Calls `$then!` with the running reductions of the JS API.
macro_rules! with_scans {
    ($then:ident) => {
        $then! {
            cumsum "cumsum" Sum, cumprod "cumprod" Prod, cummax "cummax" Max,
            cummin "cummin" Min, logcumsumexp "logcumsumexp" LogAddExp
        }
    };
}
pub(crate) use with_scans;

mod construction;
mod contract;
mod conv;
mod creation;
mod elementwise;
pub mod exported;
mod fast;
mod indexing;
mod matmul;
mod reduce;
mod scan;
mod shape;
mod sort;

pub use construction::*;
pub use contract::*;
pub use conv::*;
pub use creation::*;
pub use elementwise::*;
pub use fast::*;
pub use indexing::*;
pub use matmul::*;
pub use reduce::*;
pub use scan::*;
pub use shape::*;
pub use sort::*;
