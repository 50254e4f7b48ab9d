//! Elementwise ops: the unary and binary ones, `where`, `clip` and `astype`.

use wasm_bindgen::prelude::*;

use super::{Arg, binary_op, operands, scalar_for, stream_option, unary_op};
use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::primitive::{BinaryOp, UnaryOp};
use crate::js::data::numbers_to_words;
use crate::js::error::{JsResult, js};
use crate::js::ndarray::NdArray;
use crate::js::options::describe;
use crate::ops;

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

/// The options of `nanToNum`.
const NAN_TO_NUM: &[&str] = &["nan", "posinf", "neginf", "stream"];

/// `nanToNum(x, {nan?, posinf?, neginf?, stream?})`, MLX's `nan_to_num`.
pub fn nan_to_num(x: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    let x = x.array()?;
    js(nan_to_num_array(&x, &opts)).map(NdArray::new)
}

fn nan_to_num_array(x: &Array, opts: &JsValue) -> Result<Array> {
    let parsed = crate::js::options::Options::parse("nanToNum", opts, NAN_TO_NUM)?;
    let value = |key| parsed.number(key).map(|v| v.map(|v| v as f32));
    let device = crate::js::stream::stream_in(&parsed)?;
    ops::nan_to_num(
        x,
        value("nan")?.unwrap_or(0.0),
        value("posinf")?,
        value("neginf")?,
        device,
    )
}
