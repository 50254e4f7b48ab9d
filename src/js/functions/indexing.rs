//! `take`, `takeAlongAxis`, `putAlongAxis` and `sliceUpdate`. Indices are an NDArray of
//! int32/uint32, or JS integers (one, or a flat list): those are known on the host, so one out
//! of range is a `ValueError` there (MLX's rule); an array's out-of-range indices clamp on the
//! device. Values and updates are NDArrays, or a number or boolean (cast to the array's dtype).

use wasm_bindgen::prelude::*;

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::js::error::{JsResult, js};
use crate::js::handles::handle_of;
use crate::js::ndarray::NdArray;
use crate::js::options::{Options, integers_of, trailing_options};
use crate::js::stream::stream_in;
use crate::ops;

/// The options of `take` and `takeAlongAxis`.
const TAKE: &[&str] = &["axis", "stream"];

/// The indices argument as an int32 array: an NDArray as it is, JS integers checked against
/// the extent they index (the flattened size without an axis).
fn indices_of(op: &str, value: &JsValue, x: &Array, axis: Option<isize>) -> Result<Array> {
    if handle_of(value).is_some() {
        return NdArray::from_js(op, value);
    }
    let scalar = value.as_f64().is_some();
    let list = if scalar {
        js_sys::Array::of1(value).into()
    } else {
        value.clone()
    };
    let values = integers_of(op, "indices", &list)?;
    let extent = match axis {
        None => x.size(),
        Some(a) => x.shape()[crate::graph::shape::normalize_axis(op, a, x.ndim())?],
    } as isize;
    if let Some(bad) = values.iter().find(|&&i| i < -extent || i >= extent) {
        return Err(Error::Value(format!(
            "{op}: index {bad} is out of range for an axis of extent {extent}"
        )));
    }
    let words = values.iter().map(|&i| i as i32 as u32).collect();
    let shape = if scalar { vec![] } else { vec![values.len()] };
    Array::from_words(words, &shape, DType::Int32)
}

type Take = fn(&Array, &Array, Option<isize>, crate::stream::Stream) -> Result<Array>;

fn take_with(
    op: &'static str,
    build: Take,
    x: &NdArray,
    indices: &JsValue,
    opts: &JsValue,
) -> JsResult<NdArray> {
    let x = x.array()?;
    js((|| {
        let parsed = Options::parse(op, opts, TAKE)?;
        let axis = parsed.single_axis()?;
        let indices = indices_of(op, indices, &x, axis)?;
        build(&x, &indices, axis, stream_in(&parsed)?)
    })())
    .map(NdArray::new)
}

/// `take(x, indices, {axis?, stream?})`: without an axis, from the flattened array.
pub fn take(x: &NdArray, indices: JsValue, opts: JsValue) -> JsResult<NdArray> {
    take_with("take", ops::take, x, &indices, &opts)
}

/// `takeAlongAxis(x, indices, {axis?, stream?})`.
pub fn take_along_axis(x: &NdArray, indices: JsValue, opts: JsValue) -> JsResult<NdArray> {
    take_with("takeAlongAxis", ops::take_along_axis, x, &indices, &opts)
}

/// A value or update argument: an NDArray, or a JS number or boolean typed as MLX types a
/// Python scalar next to `x`.
fn values_of(op: &str, what: &str, value: &JsValue, x: &Array) -> Result<Array> {
    if handle_of(value).is_some() {
        return NdArray::from_js(op, value);
    }
    if value.as_f64().is_some() || value.as_bool().is_some() {
        return super::scalar_for(op, value, x.dtype());
    }
    Err(Error::Value(format!(
        "{op}: {what} must be an NDArray, a number or a boolean, got {}",
        crate::js::options::describe(value)
    )))
}

/// `putAlongAxis(x, indices, values, {axis?, stream?})`: without an axis, into the flattened
/// array (the result keeps `x`'s shape).
pub fn put_along_axis(
    x: &NdArray,
    indices: JsValue,
    values: JsValue,
    opts: JsValue,
) -> JsResult<NdArray> {
    const OP: &str = "putAlongAxis";
    let x = x.array()?;
    js((|| {
        let parsed = Options::parse(OP, &opts, TAKE)?;
        let axis = parsed.single_axis()?;
        let indices = indices_of(OP, &indices, &x, axis)?;
        let values = values_of(OP, "values", &values, &x)?;
        ops::put_along_axis(&x, &indices, &values, axis, stream_in(&parsed)?)
    })())
    .map(NdArray::new)
}

/// `sliceUpdate(x, update, start, stop, strides?, {stream?})`: `x` with the slice that
/// `slice(x, start, stop, strides)` reads replaced by `update`.
pub fn slice_update(
    x: &NdArray,
    update: JsValue,
    start: JsValue,
    stop: JsValue,
    strides: JsValue,
    opts: JsValue,
) -> JsResult<NdArray> {
    const OP: &str = "sliceUpdate";
    let x = x.array()?;
    js((|| {
        let ([strides], opts) = trailing_options(OP, [&strides], &opts)?;
        let start = integers_of(OP, "start", &start)?;
        let stop = integers_of(OP, "stop", &stop)?;
        let strides = strides.map(|s| integers_of(OP, "strides", s)).transpose()?;
        let stream = super::stream_option(OP, opts)?;
        let update = values_of(OP, "update", &update, &x)?;
        ops::slice_update(&x, &update, &start, &stop, strides.as_deref(), stream)
    })())
    .map(NdArray::new)
}
