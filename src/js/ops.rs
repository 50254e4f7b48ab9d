//! The op functions of the JS API: parse arguments, call the core op builder. Each op is also
//! an `NDArray` method (see `ndarray.rs`) with the same arguments after the array.

use wasm_bindgen::prelude::*;

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::js::data::{from_js, numbers_to_words, with_dtype};
use crate::js::error::{JsResult, js};
use crate::js::ndarray::NdArray;
use crate::js::options::{Options, axes_of, integers_of, shape_of};
use crate::js::stream::default_op_stream;
use crate::ops;
use crate::primitive::{BinaryOp, ReduceOp, UnaryOp};
use crate::stream::Stream;

/// Creates an array from a number, a boolean, nested arrays of them, or a typed array.
/// `opts.shape` reshapes the data (its size must match) and `opts.dtype` converts it.
#[wasm_bindgen]
pub fn array(data: JsValue, opts: JsValue) -> JsResult<NdArray> {
    js(make_array(&data, &opts)).map(NdArray::new)
}

fn make_array(data: &JsValue, opts: &JsValue) -> Result<Array> {
    let opts = Options::parse("array", opts)?;
    let mut host = from_js(data)?;
    if let Some(dtype) = opts.dtype()? {
        host = with_dtype(host, dtype);
    }
    let shape = opts.shape()?.unwrap_or(host.shape);
    Array::from_words(host.words, &shape, host.dtype)
}

/// `opts.stream`, or the default device.
pub(crate) fn device_option(op: &'static str, opts: &JsValue) -> Result<Stream> {
    Ok(Options::parse(op, opts)?
        .stream()?
        .unwrap_or_else(default_op_stream))
}

pub(crate) fn unary_op(op: UnaryOp, x: &NdArray, opts: &JsValue) -> JsResult<NdArray> {
    let device = js(device_option(op.name(), opts))?;
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
    let device = js(device_option(op.name(), opts))?;
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
            "{op}: operands must be NDArrays, numbers or booleans"
        ))
    })?;
    let dtype = match dtype {
        DType::Float32 => DType::Float32,
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
            #[doc = concat!("`", $ujs, "(x, opts?)`, elementwise.")]
            #[wasm_bindgen(js_name = $ujs)]
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
                reciprocal "reciprocal" Reciprocal, logical_not "logicalNot" LogicalNot;
            binary:
                add "add" Add, subtract "subtract" Subtract, multiply "multiply" Multiply,
                divide "divide" Divide, power "power" Power, maximum "maximum" Maximum,
                minimum "minimum" Minimum, equal "equal" Equal, not_equal "notEqual" NotEqual,
                less "less" Less, less_equal "lessEqual" LessEqual, greater "greater" Greater,
                greater_equal "greaterEqual" GreaterEqual, logical_and "logicalAnd" LogicalAnd,
                logical_or "logicalOr" LogicalOr
        }
    };
}
pub(crate) use with_elementwise_ops;

with_elementwise_ops!(elementwise_functions);

/// `where(cond, x, y, opts?)`: x where cond is true, else y, all broadcast together.
#[wasm_bindgen(js_name = "where")]
pub fn where_(cond: &NdArray, x: &NdArray, y: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    let device = js(device_option("where", &opts))?;
    js(ops::where_(
        &cond.array()?,
        &x.array()?,
        &y.array()?,
        device,
    ))
    .map(NdArray::new)
}

/// `clip(x, lo, hi, opts?)`: `lo` and `hi` are numbers or `null` (no bound), converted to
/// `x`'s dtype as MLX converts Python scalars.
#[wasm_bindgen]
pub fn clip(x: &NdArray, lo: JsValue, hi: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let device = js(device_option("clip", &opts))?;
    let bound = |v: &JsValue| js(scalar_like("clip", v, x.array()?.dtype()));
    let (lo, hi) = (bound(&lo)?, bound(&hi)?);
    js(ops::clip(&x.array()?, lo.as_ref(), hi.as_ref(), device)).map(NdArray::new)
}

fn scalar_like(op: &str, value: &JsValue, dtype: DType) -> Result<Option<Array>> {
    if value.is_null() || value.is_undefined() {
        return Ok(None);
    }
    let x = value
        .as_f64()
        .ok_or_else(|| Error::Value(format!("{op}: a bound must be a number or null")))?;
    Array::from_words(numbers_to_words(&[x], dtype), &[], dtype).map(Some)
}

/// `astype(x, dtype, opts?)`.
#[wasm_bindgen]
pub fn astype(x: &NdArray, dtype: &str, opts: JsValue) -> JsResult<NdArray> {
    let device = js(device_option("astype", &opts))?;
    let dtype =
        js(DType::parse(dtype).map_err(|e| Error::DType(format!("astype: {}", e.message()))))?;
    Ok(NdArray::new(ops::astype(&x.array()?, dtype, device)))
}

/// `reshape(x, shape, opts?)`; one size may be -1.
#[wasm_bindgen]
pub fn reshape(x: &NdArray, shape: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let device = js(device_option("reshape", &opts))?;
    let shape = js(integers_of("reshape", "the shape", &shape))?;
    js(ops::reshape(&x.array()?, &shape, device)).map(NdArray::new)
}

/// `transpose(x, axes?, opts?)`; without axes, reverses them.
#[wasm_bindgen]
pub fn transpose(x: &NdArray, axes: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let device = js(device_option("transpose", &opts))?;
    let axes = if axes.is_undefined() || axes.is_null() {
        None
    } else {
        Some(js(axes_of("transpose", &axes))?)
    };
    js(ops::transpose(&x.array()?, axes.as_deref(), device)).map(NdArray::new)
}

/// `expandDims(x, axis, opts?)`: `axis` is a number or a list.
#[wasm_bindgen(js_name = expandDims)]
pub fn expand_dims(x: &NdArray, axis: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let device = js(device_option("expandDims", &opts))?;
    let axes = js(axes_of("expandDims", &axis))?;
    js(ops::expand_dims(&x.array()?, &axes, device)).map(NdArray::new)
}

/// `squeeze(x, {axis?, stream?})`.
#[wasm_bindgen]
pub fn squeeze(x: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    let parsed = js(Options::parse("squeeze", &opts))?;
    let device = js(parsed.stream())?.unwrap_or_else(default_op_stream);
    let axes = js(parsed.axes())?;
    js(ops::squeeze(&x.array()?, axes.as_deref(), device)).map(NdArray::new)
}

/// `broadcastTo(x, shape, opts?)`.
#[wasm_bindgen(js_name = broadcastTo)]
pub fn broadcast_to(x: &NdArray, shape: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let device = js(device_option("broadcastTo", &opts))?;
    let shape = js(shape_of("broadcastTo", &shape))?;
    js(ops::broadcast_to(&x.array()?, &shape, device)).map(NdArray::new)
}

/// `slice(x, start, stop, strides?, opts?)` with MLX's semantics.
#[wasm_bindgen]
pub fn slice(
    x: &NdArray,
    start: JsValue,
    stop: JsValue,
    strides: JsValue,
    opts: JsValue,
) -> JsResult<NdArray> {
    let device = js(device_option("slice", &opts))?;
    let start = js(integers_of("slice", "start", &start))?;
    let stop = js(integers_of("slice", "stop", &stop))?;
    let strides = if strides.is_undefined() || strides.is_null() {
        None
    } else {
        Some(js(integers_of("slice", "strides", &strides))?)
    };
    js(ops::slice(
        &x.array()?,
        &start,
        &stop,
        strides.as_deref(),
        device,
    ))
    .map(NdArray::new)
}

/// `flatten(x, opts?)`.
#[wasm_bindgen]
pub fn flatten(x: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    let device = js(device_option("flatten", &opts))?;
    Ok(NdArray::new(ops::flatten(&x.array()?, device)))
}

/// `opts.axis` (a number or a list; all axes when absent), `opts.keepdims` and the device.
fn reduction_options(
    op: &'static str,
    opts: &JsValue,
) -> Result<(Option<Vec<isize>>, bool, Stream)> {
    let parsed = Options::parse(op, opts)?;
    let device = parsed.stream()?.unwrap_or_else(default_op_stream);
    Ok((parsed.axes()?, parsed.flag("keepdims")?, device))
}

pub(crate) fn reduce_op(op: ReduceOp, x: &NdArray, opts: &JsValue) -> JsResult<NdArray> {
    let (axes, keepdims, device) = js(reduction_options(op.name(), opts))?;
    js(ops::reduce(
        op,
        &x.array()?,
        axes.as_deref(),
        keepdims,
        device,
    ))
    .map(NdArray::new)
}

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
            #[doc = concat!("`", $js, "(x, {axis?, keepdims?, stream?})`.")]
            #[wasm_bindgen(js_name = $js)]
            pub fn $f(x: &NdArray, opts: JsValue) -> JsResult<NdArray> {
                reduce_op(ReduceOp::$op, x, &opts)
            }
        )*
    };
}

with_reductions!(reduction_functions);

/// `mean(x, {axis?, keepdims?, stream?})`: `float32` for every dtype.
#[wasm_bindgen]
pub fn mean(x: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    let (axes, keepdims, device) = js(reduction_options("mean", &opts))?;
    js(ops::mean(&x.array()?, axes.as_deref(), keepdims, device)).map(NdArray::new)
}

/// `logsumexp(x, {axis?, keepdims?, stream?})`, computed stably.
#[wasm_bindgen]
pub fn logsumexp(x: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    let (axes, keepdims, device) = js(reduction_options("logsumexp", &opts))?;
    js(ops::logsumexp(
        &x.array()?,
        axes.as_deref(),
        keepdims,
        device,
    ))
    .map(NdArray::new)
}

/// `softmax(x, {axis?, stream?})`, computed stably; all axes when `axis` is absent.
#[wasm_bindgen]
pub fn softmax(x: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    let (axes, _, device) = js(reduction_options("softmax", &opts))?;
    js(ops::softmax(&x.array()?, axes.as_deref(), device)).map(NdArray::new)
}

/// `matmul(a, b, opts?)`: batched, with broadcasting of batch axes; float32.
#[wasm_bindgen]
pub fn matmul(a: &NdArray, b: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    let device = js(device_option("matmul", &opts))?;
    js(ops::matmul(&a.array()?, &b.array()?, device)).map(NdArray::new)
}

/// A creation op's `opts.dtype` (or `default`) and `opts.stream` (or the default stream).
fn creation_options(op: &'static str, opts: &JsValue, default: DType) -> Result<(DType, Stream)> {
    let parsed = Options::parse(op, opts)?;
    let dtype = parsed.dtype()?.unwrap_or(default);
    Ok((dtype, parsed.stream()?.unwrap_or_else(default_op_stream)))
}

fn number(op: &str, what: &str, value: &JsValue) -> Result<f64> {
    value
        .as_f64()
        .ok_or_else(|| Error::Value(format!("{op}: {what} must be a number")))
}

/// `zeros(shape, {dtype?, stream?})`.
#[wasm_bindgen]
pub fn zeros(shape: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let shape = js(shape_of("zeros", &shape))?;
    let (dtype, stream) = js(creation_options("zeros", &opts, DType::Float32))?;
    js(ops::zeros(&shape, dtype, stream)).map(NdArray::new)
}

/// `ones(shape, {dtype?, stream?})`.
#[wasm_bindgen]
pub fn ones(shape: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let shape = js(shape_of("ones", &shape))?;
    let (dtype, stream) = js(creation_options("ones", &opts, DType::Float32))?;
    js(ops::ones(&shape, dtype, stream)).map(NdArray::new)
}

/// `full(shape, value, {dtype?, stream?})`: `float32` for a number and `bool` for a boolean by default.
#[wasm_bindgen]
pub fn full(shape: JsValue, value: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let shape = js(shape_of("full", &shape))?;
    let (x, default) = match value.as_bool() {
        Some(b) => (f64::from(u8::from(b)), DType::Bool),
        None => (js(number("full", "the value", &value))?, DType::Float32),
    };
    let (dtype, stream) = js(creation_options("full", &opts, default))?;
    js(ops::full(&shape, x, dtype, stream)).map(NdArray::new)
}

/// `arange(stop)`, `arange(start, stop, step?, {dtype?, stream?})`: like NumPy; `float32` by default.
/// An options object may stand in place of any omitted trailing argument.
#[wasm_bindgen]
pub fn arange(start: JsValue, stop: JsValue, step: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let is_number = |v: &JsValue| v.as_f64().is_some();
    let args: Vec<&JsValue> = [&start, &stop, &step]
        .into_iter()
        .take_while(|v| is_number(v))
        .collect();
    let opts = [&start, &stop, &step, &opts]
        .into_iter()
        .find(|v| !is_number(v) && !v.is_undefined())
        .cloned()
        .unwrap_or(JsValue::UNDEFINED);
    let n = |v: &JsValue| v.as_f64().unwrap_or_default();
    let (a, b, s) = match args.as_slice() {
        [stop] => (0.0, n(stop), 1.0),
        [start, stop] => (n(start), n(stop), 1.0),
        [start, stop, step] => (n(start), n(stop), n(step)),
        _ => {
            return Err(crate::js::error::to_js(Error::Value(
                "arange: needs a stop, or a start and a stop".into(),
            )));
        }
    };
    let (dtype, stream) = js(creation_options("arange", &opts, DType::Float32))?;
    js(ops::arange(a, b, s, dtype, stream)).map(NdArray::new)
}

/// `linspace(start, stop, num, {dtype?, stream?})`: `num` values from start to stop, both included.
#[wasm_bindgen]
pub fn linspace(start: f64, stop: f64, num: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let count = js(shape_of("linspace", &js_sys::Array::of1(&num).into()))?[0];
    let (dtype, stream) = js(creation_options("linspace", &opts, DType::Float32))?;
    js(ops::linspace(start, stop, count, dtype, stream)).map(NdArray::new)
}

/// `eye(n, {dtype?, stream?})`: the identity matrix.
#[wasm_bindgen]
pub fn eye(n: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let n = js(shape_of("eye", &js_sys::Array::of1(&n).into()))?[0];
    let (dtype, stream) = js(creation_options("eye", &opts, DType::Float32))?;
    js(ops::eye(n, dtype, stream)).map(NdArray::new)
}

/// The NDArrays of a JS array.
fn arrays_of(op: &str, list: &JsValue) -> Result<Vec<Array>> {
    if !js_sys::Array::is_array(list) {
        return Err(Error::Value(format!("{op}: expected an array of NDArrays")));
    }
    js_sys::Array::from(list)
        .iter()
        .map(|v| NdArray::from_js(op, &v))
        .collect()
}

/// `opts.axis` as one axis (default 0) and the device.
fn axis_option(op: &'static str, opts: &JsValue) -> Result<(isize, Stream)> {
    let parsed = Options::parse(op, opts)?;
    let device = parsed.stream()?.unwrap_or_else(default_op_stream);
    let axis = match parsed.axes()?.as_deref() {
        None => 0,
        Some([axis]) => *axis,
        Some(_) => return Err(Error::Value(format!("{op}: opts.axis must be one axis"))),
    };
    Ok((axis, device))
}

/// `concatenate(arrays, {axis?, stream?})`: joined along `axis` (default 0).
#[wasm_bindgen]
pub fn concatenate(arrays: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let arrays = js(arrays_of("concatenate", &arrays))?;
    let (axis, device) = js(axis_option("concatenate", &opts))?;
    js(ops::concatenate(&arrays, axis, device)).map(NdArray::new)
}

/// `stack(arrays, {axis?, stream?})`: along a new axis (default 0).
#[wasm_bindgen]
pub fn stack(arrays: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let arrays = js(arrays_of("stack", &arrays))?;
    let (axis, device) = js(axis_option("stack", &opts))?;
    js(ops::stack(&arrays, axis, device)).map(NdArray::new)
}

/// `split(x, indicesOrSections, {axis?, stream?})`: a number of equal sections, or the
/// indices to cut at; returns an array of NDArray views.
#[wasm_bindgen(unchecked_return_type = "NDArray[]")]
pub fn split(x: &NdArray, indices_or_sections: JsValue, opts: JsValue) -> JsResult<js_sys::Array> {
    let (axis, device) = js(axis_option("split", &opts))?;
    let indices;
    let how = match indices_or_sections.as_f64() {
        Some(n) if n >= 1.0 && n.fract() == 0.0 => ops::SplitAt::Sections(n as usize),
        Some(_) => {
            let err = Error::Value("split: sections must be a positive integer".into());
            return Err(crate::js::error::to_js(err));
        }
        None => {
            indices = js(integers_of(
                "split",
                "indicesOrSections",
                &indices_or_sections,
            ))?;
            ops::SplitAt::Indices(&indices)
        }
    };
    let parts = js(ops::split(&x.array()?, how, axis, device))?;
    Ok(parts
        .into_iter()
        .map(|p| JsValue::from(NdArray::new(p)))
        .collect())
}
