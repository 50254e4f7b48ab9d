//! `conv1d`, `conv2d` and their transposes, channels last: `stride`, `padding`, `dilation`
//! (and a transpose's `outputPadding`) are a number or one per spatial axis, as MLX takes them.

use wasm_bindgen::prelude::*;

use crate::error::{Error, Result};
use crate::js::error::{JsResult, js};
use crate::js::ndarray::NdArray;
use crate::js::options::{Options, count_of, describe};
use crate::js::stream::stream_in;
use crate::ops::conv::{ConvParams, conv, conv_transpose};

/// The options of a convolution.
const CONV: &[&str] = &["stride", "padding", "dilation", "groups", "stream"];
/// The options of a transposed convolution.
const CONV_TRANSPOSE: &[&str] = &[
    "stride",
    "padding",
    "dilation",
    "outputPadding",
    "groups",
    "stream",
];

/// `opts[key]` as one count per spatial axis: a number for all, or a list of `spatial`.
fn per_axis(
    op: &str,
    parsed: &Options,
    key: &'static str,
    spatial: usize,
    default: usize,
) -> Result<Vec<usize>> {
    let Some(value) = parsed.get(key) else {
        return Ok(vec![default; spatial]);
    };
    if value.as_f64().is_some() {
        return Ok(vec![count_of(op, key, &value)?; spatial]);
    }
    let list: Vec<JsValue> = match value.dyn_ref::<js_sys::Array>() {
        Some(list) if list.length() as usize == spatial => list.iter().collect(),
        _ => {
            return Err(Error::Value(format!(
                "{op}: opts.{key} must be a number or a list of {spatial}, got {}",
                describe(&value)
            )));
        }
    };
    list.iter().map(|v| count_of(op, key, v)).collect()
}

fn convolve(
    op: &'static str,
    spatial: usize,
    x: &NdArray,
    w: &NdArray,
    opts: &JsValue,
) -> JsResult<NdArray> {
    let (x, w) = (x.array()?, w.array()?);
    js((|| {
        if x.ndim() != spatial + 2 {
            return Err(Error::Shape(format!(
                "{op}: the input must have {} axes (N, {}C), got shape {:?}",
                spatial + 2,
                if spatial == 1 { "L, " } else { "H, W, " },
                x.shape()
            )));
        }
        let transposed = op.starts_with("convTranspose");
        let keys = if transposed { CONV_TRANSPOSE } else { CONV };
        let parsed = Options::parse(op, opts, keys)?;
        let params = ConvParams {
            stride: per_axis(op, &parsed, "stride", spatial, 1)?,
            padding: per_axis(op, &parsed, "padding", spatial, 0)?,
            dilation: per_axis(op, &parsed, "dilation", spatial, 1)?,
            groups: match parsed.get("groups") {
                None => 1,
                Some(g) => count_of(op, "groups", &g)?,
            },
        };
        let stream = stream_in(&parsed)?;
        if transposed {
            let extra = per_axis(op, &parsed, "outputPadding", spatial, 0)?;
            return conv_transpose(op, &x, &w, &params, &extra, stream);
        }
        conv(op, &x, &w, &params, stream)
    })())
    .map(NdArray::new)
}

/// `conv1d(input [N, L, C], weight [O, K, C/groups], {stride?, padding?, dilation?, groups?, stream?})`.
pub fn conv1d(x: &NdArray, w: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    convolve("conv1d", 1, x, w, &opts)
}

/// `conv2d(input [N, H, W, C], weight [O, KH, KW, C/groups], {...})`.
pub fn conv2d(x: &NdArray, w: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    convolve("conv2d", 2, x, w, &opts)
}

/// `convTranspose1d(input [N, L, C], weight [O, K, C/groups], {stride?, padding?, dilation?,
/// outputPadding?, groups?, stream?})`.
pub fn conv_transpose1d(x: &NdArray, w: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    convolve("convTranspose1d", 1, x, w, &opts)
}

/// `convTranspose2d(input [N, H, W, C], weight [O, KH, KW, C/groups], {...})`.
pub fn conv_transpose2d(x: &NdArray, w: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    convolve("convTranspose2d", 2, x, w, &opts)
}
