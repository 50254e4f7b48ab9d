//! Reductions: the ones of one `ReduceOp`, `mean`, `logsumexp`, `softmax`.

use wasm_bindgen::prelude::*;

use crate::error::Result;
use crate::graph::primitive::ReduceOp;
use crate::js::error::{JsResult, js};
use crate::js::ndarray::NdArray;
use crate::js::options::Options;
use crate::js::stream::stream_in;
use crate::ops;
use crate::stream::Stream;

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

/// The options of `var` and `std`.
const SPREAD: &[&str] = &["axis", "keepdims", "ddof", "stream"];

type Spread =
    fn(&crate::array::Array, Option<&[isize]>, bool, u32, Stream) -> Result<crate::array::Array>;

/// `var` and `std`: `opts.ddof` a whole number from 0 (MLX's default).
fn spread(op: &'static str, x: &NdArray, opts: &JsValue, build: Spread) -> JsResult<NdArray> {
    let array = x.array()?;
    js((|| {
        let parsed = Options::parse(op, opts, SPREAD)?;
        let ddof = match parsed.number("ddof")? {
            None => 0,
            Some(d) if d.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(&d) => d as u32,
            Some(d) => {
                return Err(crate::error::Error::Value(format!(
                    "{op}: opts.ddof must be a whole number from 0, got {d}"
                )));
            }
        };
        build(
            &array,
            parsed.axis()?.as_deref(),
            parsed.flag("keepdims")?,
            ddof,
            stream_in(&parsed)?,
        )
    })())
    .map(NdArray::new)
}

/// `var(x, {axis?, keepdims?, ddof?, stream?})`: float32 (exported as `var`, a reserved word).
pub fn variance(x: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    spread("var", x, &opts, ops::var)
}

/// `std(x, {axis?, keepdims?, ddof?, stream?})`: float32.
pub fn std(x: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    spread("std", x, &opts, ops::std)
}

/// `any(x, {axis?, keepdims?, stream?})`: bool.
pub fn any(x: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    let (axes, keepdims, device) = js(reduction_options("any", &opts, REDUCTION))?;
    js(ops::any(&x.array()?, axes.as_deref(), keepdims, device)).map(NdArray::new)
}

/// `all(x, {axis?, keepdims?, stream?})`: bool.
pub fn all(x: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    let (axes, keepdims, device) = js(reduction_options("all", &opts, REDUCTION))?;
    js(ops::all(&x.array()?, axes.as_deref(), keepdims, device)).map(NdArray::new)
}
