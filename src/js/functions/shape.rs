//! Shape ops: views (`reshape`, `transpose`, `expandDims`, `squeeze`, `broadcastTo`,
//! `slice`, `flatten`) and joins (`concatenate`, `stack`, `split`).

use wasm_bindgen::prelude::*;

use crate::array::Array;
use crate::error::{Error, Result};
use crate::js::error::{JsResult, js};
use crate::js::ndarray::NdArray;
use crate::js::options::{Options, axes_of, integers_of, shape_of, trailing_options};
use crate::js::stream::stream_in;
use crate::ops;
use crate::stream::Stream;

use super::stream_option;

/// `reshape(x, shape, opts?)`; one size may be -1.
pub fn reshape(x: &NdArray, shape: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let device = js(stream_option("reshape", &opts))?;
    let shape = js(integers_of("reshape", "the shape", &shape))?;
    js(ops::reshape(&x.array()?, &shape, device)).map(NdArray::new)
}

/// `stopGradient(x, opts?)`: MLX's `stop_gradient`.
pub fn stop_gradient(x: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    let device = js(stream_option("stopGradient", &opts))?;
    Ok(NdArray::new(ops::stop_gradient(&x.array()?, device)))
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
    Ok((parsed.single_axis()?.unwrap_or(0), device))
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

/// `tril(x, k?, opts?)`: the lower triangle of the last two axes, from the `k`th diagonal.
pub fn tril(x: &NdArray, k: JsValue, opts: JsValue) -> JsResult<NdArray> {
    triangle("tril", ops::tril, x, &k, &opts)
}

/// `triu(x, k?, opts?)`: the upper triangle of the last two axes, from the `k`th diagonal.
pub fn triu(x: &NdArray, k: JsValue, opts: JsValue) -> JsResult<NdArray> {
    triangle("triu", ops::triu, x, &k, &opts)
}

type Triangle = fn(&Array, i64, Stream) -> Result<Array>;

fn triangle(
    op: &'static str,
    build: Triangle,
    x: &NdArray,
    k: &JsValue,
    opts: &JsValue,
) -> JsResult<NdArray> {
    let x = x.array()?;
    js((|| {
        let ([k], opts) = trailing_options(op, [k], opts)?;
        let k = match k {
            None => 0,
            Some(k) => integers_of(op, "k", &js_sys::Array::of1(k).into())?[0] as i64,
        };
        build(&x, k, stream_option(op, opts)?)
    })())
    .map(NdArray::new)
}
