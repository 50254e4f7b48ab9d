//! The op functions of the JS API: parse arguments, call the core op builder. Each op is also
//! an `NDArray` method (see `ndarray.rs`) with the same arguments after the array.

use wasm_bindgen::prelude::*;

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::js::data::{from_js, numbers_to_words};
use crate::js::error::{JsResult, js};
use crate::js::ndarray::NdArray;
use crate::js::options::{
    Options, STREAM, axes_of, count_of, describe, integers_of, shape_of, trailing_options,
};
use crate::js::stream::stream_in;
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
    let opts = Options::parse("array", opts, &["shape", "dtype"]).map_err(|e| match e {
        Error::Value(m) if m.contains("\"stream\"") => Error::Value(format!(
            "{m} (an array's data has no fixed place: it moves to the device of each op that \
             reads it, so array() takes no stream)"
        )),
        other => other,
    })?;
    let host = from_js(data, opts.dtype()?)?;
    let shape = opts.shape()?.unwrap_or(host.shape);
    Array::from_words(host.words, &shape, host.dtype)
}

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

/// `where(cond, x, y, opts?)`: x where cond is true, else y, all broadcast together. Any of
/// the three may be a number or boolean instead of an NDArray, as in MLX.
#[wasm_bindgen(js_name = "where")]
pub fn where_(
    #[wasm_bindgen(unchecked_param_type = "NDArray | number | boolean")] cond: JsValue,
    #[wasm_bindgen(unchecked_param_type = "NDArray | number | boolean")] x: JsValue,
    #[wasm_bindgen(unchecked_param_type = "NDArray | number | boolean")] y: JsValue,
    opts: JsValue,
) -> JsResult<NdArray> {
    js(where_arrays(&cond, &x, &y, &opts)).map(NdArray::new)
}

fn where_arrays(cond: &JsValue, x: &JsValue, y: &JsValue, opts: &JsValue) -> Result<Array> {
    let device = stream_option("where", opts)?;
    let truth = cond.as_bool().or_else(|| cond.as_f64().map(|x| x != 0.0));
    let cond = match (NdArray::from_js("where", cond), truth) {
        (Ok(array), _) => array,
        (Err(_), Some(truth)) => Array::from_words(vec![u32::from(truth)], &[], DType::Bool)?,
        (Err(err), None) => return Err(err),
    };
    let (x, y) = match operands("where", &Arg::Js(x), &Arg::Js(y)) {
        Ok(pair) => pair,
        // Two scalars: each is typed on its own, as MLX types Python scalars.
        Err(_) if x.as_f64().is_some() || x.as_bool().is_some() => (
            scalar_for("where", x, DType::Float32)?,
            scalar_for("where", y, DType::Float32)?,
        ),
        Err(err) => return Err(err),
    };
    ops::where_(&cond, &x, &y, device)
}

/// `clip(x, lo, hi, opts?)`: each bound is an NDArray (broadcast against `x`, as MLX does), a
/// number (converted to `x`'s dtype as MLX converts Python scalars) or `null` for none; at
/// most one may be `null`.
pub fn clip(x: &NdArray, lo: JsValue, hi: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let x = x.array()?;
    js(clip_array(&x, &lo, &hi, &opts)).map(NdArray::new)
}

fn clip_array(x: &Array, lo: &JsValue, hi: &JsValue, opts: &JsValue) -> Result<Array> {
    let device = stream_option("clip", opts)?;
    let (lo, hi) = (clip_bound(lo, x.dtype())?, clip_bound(hi, x.dtype())?);
    if lo.is_none() && hi.is_none() {
        return Err(Error::Value(
            "clip: at most one of lo and hi may be null".into(),
        ));
    }
    ops::clip(x, lo.as_ref(), hi.as_ref(), device)
}

fn clip_bound(value: &JsValue, dtype: DType) -> Result<Option<Array>> {
    if value.is_null() || value.is_undefined() {
        return Ok(None);
    }
    if crate::js::handles::handle_of(value).is_some() {
        return NdArray::from_js("clip", value).map(Some);
    }
    let x = value.as_f64().ok_or_else(|| {
        Error::Value(format!(
            "clip: a bound must be an NDArray, a number or null, got {}",
            describe(value)
        ))
    })?;
    Array::from_words(numbers_to_words(&[x], dtype), &[], dtype).map(Some)
}

/// `astype(x, dtype, opts?)`.
pub fn astype(x: &NdArray, dtype: &str, opts: JsValue) -> JsResult<NdArray> {
    let device = js(stream_option("astype", &opts))?;
    let dtype =
        js(DType::parse(dtype).map_err(|e| Error::DType(format!("astype: {}", e.message()))))?;
    Ok(NdArray::new(ops::astype(&x.array()?, dtype, device)))
}

/// `reshape(x, shape, opts?)`; one size may be -1.
pub fn reshape(x: &NdArray, shape: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let device = js(stream_option("reshape", &opts))?;
    let shape = js(integers_of("reshape", "the shape", &shape))?;
    js(ops::reshape(&x.array()?, &shape, device)).map(NdArray::new)
}

/// `transpose(x, axes?, opts?)`; without axes, reverses them.
pub fn transpose(x: &NdArray, axes: JsValue, opts: JsValue) -> JsResult<NdArray> {
    js(transpose_args(&axes, &opts)).and_then(|(axes, device)| {
        js(ops::transpose(&x.array()?, axes.as_deref(), device)).map(NdArray::new)
    })
}

fn transpose_args(axes: &JsValue, opts: &JsValue) -> Result<(Option<Vec<isize>>, Stream)> {
    let ([axes], opts) = trailing_options("transpose", [axes], opts)?;
    let axes = axes.map(|a| axes_of("transpose", "axes", a)).transpose()?;
    Ok((axes, stream_option("transpose", opts)?))
}

/// `expandDims(x, axis, opts?)`: `axis` is a number or a list.
pub fn expand_dims(x: &NdArray, axis: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let device = js(stream_option("expandDims", &opts))?;
    let axes = js(axes_of("expandDims", "axis", &axis))?;
    js(ops::expand_dims(&x.array()?, &axes, device)).map(NdArray::new)
}

/// `squeeze(x, {axis?, stream?})`.
pub fn squeeze(x: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    let parsed = js(Options::parse("squeeze", &opts, &["axis", "stream"]))?;
    let device = js(stream_in(&parsed))?;
    let axes = js(parsed.axis())?;
    js(ops::squeeze(&x.array()?, axes.as_deref(), device)).map(NdArray::new)
}

/// `broadcastTo(x, shape, opts?)`.
pub fn broadcast_to(x: &NdArray, shape: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let device = js(stream_option("broadcastTo", &opts))?;
    let shape = js(shape_of("broadcastTo", "the shape", &shape))?;
    js(ops::broadcast_to(&x.array()?, &shape, device)).map(NdArray::new)
}

/// `slice(x, start, stop, strides?, opts?)` with MLX's semantics.
pub fn slice(
    x: &NdArray,
    start: JsValue,
    stop: JsValue,
    strides: JsValue,
    opts: JsValue,
) -> JsResult<NdArray> {
    let (start, stop, strides, device) = js(slice_args(&start, &stop, &strides, &opts))?;
    js(ops::slice(
        &x.array()?,
        &start,
        &stop,
        strides.as_deref(),
        device,
    ))
    .map(NdArray::new)
}

type SliceArgs = (Vec<isize>, Vec<isize>, Option<Vec<isize>>, Stream);

fn slice_args(
    start: &JsValue,
    stop: &JsValue,
    strides: &JsValue,
    opts: &JsValue,
) -> Result<SliceArgs> {
    let ([strides], opts) = trailing_options("slice", [strides], opts)?;
    Ok((
        integers_of("slice", "start", start)?,
        integers_of("slice", "stop", stop)?,
        strides
            .map(|s| integers_of("slice", "strides", s))
            .transpose()?,
        stream_option("slice", opts)?,
    ))
}

/// `flatten(x, opts?)`.
pub fn flatten(x: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    let device = js(stream_option("flatten", &opts))?;
    Ok(NdArray::new(ops::flatten(&x.array()?, device)))
}

/// The options of a reduction.
const REDUCTION: &[&str] = &["axis", "keepdims", "stream"];

/// `opts.axis` (a number or a list; all axes when absent), `opts.keepdims` and the stream.
fn reduction_options(
    op: &'static str,
    opts: &JsValue,
    keys: &[&str],
) -> Result<(Option<Vec<isize>>, bool, Stream)> {
    let parsed = Options::parse(op, opts, keys)?;
    Ok((
        parsed.axis()?,
        parsed.flag("keepdims")?,
        stream_in(&parsed)?,
    ))
}

pub(crate) fn reduce_op(op: ReduceOp, x: &NdArray, opts: &JsValue) -> JsResult<NdArray> {
    let (axes, keepdims, device) = js(reduction_options(op.name(), opts, REDUCTION))?;
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
            #[doc = concat!("`", $js, "(x, {axis?, keepdims?, stream?})` (exported by `exported`).")]
            pub fn $f(x: &NdArray, opts: JsValue) -> JsResult<NdArray> {
                reduce_op(ReduceOp::$op, x, &opts)
            }
        )*
    };
}

with_reductions!(reduction_functions);

/// `mean(x, {axis?, keepdims?, stream?})`: `float32` for every dtype.
pub fn mean(x: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    let (axes, keepdims, device) = js(reduction_options("mean", &opts, REDUCTION))?;
    js(ops::mean(&x.array()?, axes.as_deref(), keepdims, device)).map(NdArray::new)
}

/// `logsumexp(x, {axis?, keepdims?, stream?})`, computed stably.
pub fn logsumexp(x: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    let (axes, keepdims, device) = js(reduction_options("logsumexp", &opts, REDUCTION))?;
    js(ops::logsumexp(
        &x.array()?,
        axes.as_deref(),
        keepdims,
        device,
    ))
    .map(NdArray::new)
}

/// `softmax(x, {axis?, stream?})`, computed stably; all axes when `axis` is absent.
pub fn softmax(x: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    let (axes, _, device) = js(reduction_options("softmax", &opts, &["axis", "stream"]))?;
    js(ops::softmax(&x.array()?, axes.as_deref(), device)).map(NdArray::new)
}

/// `matmul(a, b, opts?)`: batched, with broadcasting of batch axes; float32.
pub fn matmul(a: &NdArray, b: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    let device = js(stream_option("matmul", &opts))?;
    js(ops::matmul(&a.array()?, &b.array()?, device)).map(NdArray::new)
}

/// A creation op's `opts.dtype` (or `default`) and `opts.stream` (or the default stream).
fn creation_options(op: &'static str, opts: &JsValue, default: DType) -> Result<(DType, Stream)> {
    let parsed = Options::parse(op, opts, &["dtype", "stream"])?;
    let dtype = parsed.dtype()?.unwrap_or(default);
    Ok((dtype, stream_in(&parsed)?))
}

fn number(op: &str, what: &str, value: &JsValue) -> Result<f64> {
    value.as_f64().ok_or_else(|| {
        Error::Value(format!(
            "{op}: {what} must be a number, got {}",
            describe(value)
        ))
    })
}

/// `zeros(shape, {dtype?, stream?})`.
#[wasm_bindgen]
pub fn zeros(shape: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let shape = js(shape_of("zeros", "the shape", &shape))?;
    let (dtype, stream) = js(creation_options("zeros", &opts, DType::Float32))?;
    js(ops::zeros(&shape, dtype, stream)).map(NdArray::new)
}

/// `ones(shape, {dtype?, stream?})`.
#[wasm_bindgen]
pub fn ones(shape: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let shape = js(shape_of("ones", "the shape", &shape))?;
    let (dtype, stream) = js(creation_options("ones", &opts, DType::Float32))?;
    js(ops::ones(&shape, dtype, stream)).map(NdArray::new)
}

/// `full(shape, value, {dtype?, stream?})`: `float32` for a number and `bool` for a boolean by default.
#[wasm_bindgen]
pub fn full(shape: JsValue, value: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let shape = js(shape_of("full", "the shape", &shape))?;
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
    js(arange_args(&start, &stop, &step, &opts))
        .and_then(|(a, b, s, dtype, stream)| js(ops::arange(a, b, s, dtype, stream)))
        .map(NdArray::new)
}

fn arange_args(
    start: &JsValue,
    stop: &JsValue,
    step: &JsValue,
    opts: &JsValue,
) -> Result<(f64, f64, f64, DType, Stream)> {
    let ([start, stop, step], opts) = trailing_options("arange", [start, stop, step], opts)?;
    let n = |what, v: Option<&JsValue>| v.map(|v| number("arange", what, v)).transpose();
    let (start, stop, step) = (n("start", start)?, n("stop", stop)?, n("step", step)?);
    let (a, b, s) = match (start, stop, step) {
        (Some(stop), None, None) => (0.0, stop, 1.0),
        (Some(start), Some(stop), step) => (start, stop, step.unwrap_or(1.0)),
        _ => {
            return Err(Error::Value(
                "arange: needs a stop, or a start and a stop".into(),
            ));
        }
    };
    let (dtype, stream) = creation_options("arange", opts, DType::Float32)?;
    Ok((a, b, s, dtype, stream))
}

/// `linspace(start, stop, num, {dtype?, stream?})`: `num` values from start to stop, both included.
#[wasm_bindgen]
pub fn linspace(start: JsValue, stop: JsValue, num: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let start = js(number("linspace", "start", &start))?;
    let stop = js(number("linspace", "stop", &stop))?;
    let count = js(count_of("linspace", "num", &num))?;
    let (dtype, stream) = js(creation_options("linspace", &opts, DType::Float32))?;
    js(ops::linspace(start, stop, count, dtype, stream)).map(NdArray::new)
}

/// `eye(n, {dtype?, stream?})`: the identity matrix.
#[wasm_bindgen]
pub fn eye(n: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let n = js(count_of("eye", "n", &n))?;
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
    let parsed = Options::parse(op, opts, &["axis", "stream"])?;
    let device = stream_in(&parsed)?;
    let axis = match parsed.axis()?.as_deref() {
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

/// The functions above that take NDArrays, as JS sees them. Their NDArray parameters arrive as
/// JS values, so that a number, an array or a disposed NDArray in their place is a typed error
/// that names the op and what it got (wasm-bindgen's own check throws a plain `Error`). Each
/// calls its namesake above with the NDArray borrowed.
pub mod exported {
    use wasm_bindgen::prelude::*;

    use crate::js::error::{JsResult, js};
    use crate::js::ndarray::NdArray;

    /// The NDArray a JS argument names, borrowed for one call.
    fn borrow(op: &str, value: &JsValue) -> JsResult<NdArray> {
        js(NdArray::from_js(op, value)).map(NdArray::borrowed)
    }

    /// Exports `super::$rust` as `$js`; `$arr` are its NDArray parameters, `$arg` the rest.
    macro_rules! export {
        ($($doc:expr, $js:literal $rust:ident($($arr:ident),+ $(; $($arg:ident: $ty:ty),*)?) -> $ret:ty;)*) => {
            $(
                #[doc = $doc]
                #[wasm_bindgen(js_name = $js)]
                #[allow(clippy::too_many_arguments)]
                pub fn $rust(
                    $(#[wasm_bindgen(unchecked_param_type = "NDArray")] $arr: JsValue,)+
                    $($($arg: $ty,)*)?
                ) -> JsResult<$ret> {
                    $(let $arr = borrow($js, &$arr)?;)+
                    super::$rust($(&$arr,)+ $($($arg),*)?)
                }
            )*
        };
    }

    macro_rules! export_elementwise {
        (unary: $($uf:ident $ujs:literal $uop:ident),* ; binary: $($bf:ident $bjs:literal $bop:ident),*) => {
            export! {
                $(concat!("`", $ujs, "(x, {stream?})`, elementwise."), $ujs $uf(x; opts: JsValue) -> NdArray;)*
            }
        };
    }
    super::with_elementwise_ops!(export_elementwise);

    macro_rules! export_reductions {
        ($($f:ident $js:literal $op:ident),*) => {
            export! {
                $(concat!("`", $js, "(x, {axis?, keepdims?, stream?})`."), $js $f(x; opts: JsValue) -> NdArray;)*
            }
        };
    }
    super::with_reductions!(export_reductions);

    export! {
        "`clip(x, lo, hi, {stream?})`: each bound an NDArray (broadcast), a number or null.",
            "clip" clip(x; lo: JsValue, hi: JsValue, opts: JsValue) -> NdArray;
        "`astype(x, dtype, {stream?})`.", "astype" astype(x; dtype: &str, opts: JsValue) -> NdArray;
        "`reshape(x, shape, {stream?})`; one size may be -1.",
            "reshape" reshape(x; shape: JsValue, opts: JsValue) -> NdArray;
        "`transpose(x, axes?, {stream?})`; without axes, reverses them.",
            "transpose" transpose(x; axes: JsValue, opts: JsValue) -> NdArray;
        "`expandDims(x, axis, {stream?})`: `axis` is a number or a list.",
            "expandDims" expand_dims(x; axis: JsValue, opts: JsValue) -> NdArray;
        "`squeeze(x, {axis?, stream?})`.", "squeeze" squeeze(x; opts: JsValue) -> NdArray;
        "`broadcastTo(x, shape, {stream?})`.",
            "broadcastTo" broadcast_to(x; shape: JsValue, opts: JsValue) -> NdArray;
        "`slice(x, start, stop, strides?, {stream?})` with MLX's semantics.",
            "slice" slice(x; start: JsValue, stop: JsValue, strides: JsValue, opts: JsValue) -> NdArray;
        "`flatten(x, {stream?})`.", "flatten" flatten(x; opts: JsValue) -> NdArray;
        "`mean(x, {axis?, keepdims?, stream?})`: float32 for every dtype.",
            "mean" mean(x; opts: JsValue) -> NdArray;
        "`logsumexp(x, {axis?, keepdims?, stream?})`, computed stably.",
            "logsumexp" logsumexp(x; opts: JsValue) -> NdArray;
        "`softmax(x, {axis?, stream?})`, computed stably; all axes when `axis` is absent.",
            "softmax" softmax(x; opts: JsValue) -> NdArray;
        "`matmul(a, b, {stream?})`: batched, with broadcasting of batch axes; float32.",
            "matmul" matmul(a, b; opts: JsValue) -> NdArray;
    }

    /// `split(x, indicesOrSections, {axis?, stream?})`: a number of equal sections, or the
    /// indices to cut at; returns an array of NDArray views.
    #[wasm_bindgen(js_name = "split", unchecked_return_type = "NDArray[]")]
    pub fn split(
        #[wasm_bindgen(unchecked_param_type = "NDArray")] x: JsValue,
        indices_or_sections: JsValue,
        opts: JsValue,
    ) -> JsResult<js_sys::Array> {
        super::split(&borrow("split", &x)?, indices_or_sections, opts)
    }
}
