//! Creation: `array` from data, and `zeros`, `ones`, `full`, `arange`, `linspace`, `eye`.

use wasm_bindgen::prelude::*;

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::js::data::from_js;
use crate::js::error::{JsResult, js};
use crate::js::ndarray::NdArray;
use crate::js::options::{Options, count_of, describe, shape_of, trailing_options};
use crate::js::stream::stream_in;
use crate::ops;
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
