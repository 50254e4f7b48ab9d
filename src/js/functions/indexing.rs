//! `take` and `takeAlongAxis`. Indices are an NDArray of int32/uint32, or JS integers (one, or
//! a flat list): those are known on the host, so one out of range is a `ValueError` there
//! (MLX's rule); an array's out-of-range indices clamp on the device.

use wasm_bindgen::prelude::*;

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::js::error::{JsResult, js};
use crate::js::handles::handle_of;
use crate::js::ndarray::NdArray;
use crate::js::options::{Options, integers_of};
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
