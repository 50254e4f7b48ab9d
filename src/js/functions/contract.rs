//! `tensordot` and `einsum`.

use wasm_bindgen::prelude::*;

use crate::array::Array;
use crate::error::{Error, Result};
use crate::js::error::{JsResult, js};
use crate::js::ndarray::NdArray;
use crate::js::options::{describe, integers_of, is_options_object};
use crate::ops;

use super::stream_option;

/// `axes`: a count (the last of `a` with the first of `b`) or `[aAxes, bAxes]`.
fn tensordot_axes(value: &JsValue, a: &Array) -> Result<(Vec<isize>, Vec<isize>)> {
    if value.as_f64().is_some() {
        let n = crate::js::options::count_of("tensordot", "axes", value)?;
        if n > a.ndim() {
            return Err(Error::Value(format!(
                "tensordot: {n} axes to contract, and the first array has {}",
                a.ndim()
            )));
        }
        let first: Vec<isize> = (a.ndim() - n..a.ndim()).map(|d| d as isize).collect();
        return Ok((first, (0..n as isize).collect()));
    }
    let pair = value
        .dyn_ref::<js_sys::Array>()
        .filter(|l| l.length() == 2)
        .ok_or_else(|| {
            Error::Value(format!(
                "tensordot: axes must be a count or [aAxes, bAxes], got {}",
                describe(value)
            ))
        })?;
    Ok((
        integers_of("tensordot", "axes", &pair.get(0))?,
        integers_of("tensordot", "axes", &pair.get(1))?,
    ))
}

/// `tensordot(a, b, axes?, {stream?})`: `axes` 2 when absent, as in NumPy and MLX.
pub fn tensordot(a: &NdArray, b: &NdArray, axes: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let (a, b) = (a.array()?, b.array()?);
    js((|| {
        let ([axes], opts) = crate::js::options::trailing_options("tensordot", [&axes], &opts)?;
        let (ka, kb) = match axes {
            None => tensordot_axes(&2.into(), &a)?,
            Some(v) => tensordot_axes(v, &a)?,
        };
        ops::tensordot(&a, &b, &ka, &kb, stream_option("tensordot", opts)?)
    })())
    .map(NdArray::new)
}

/// `einsum(subscripts, ...operands, {stream?}?)`: `index.js` passes the operands as a list.
#[wasm_bindgen(js_name = "einsum")]
pub fn einsum(subscripts: JsValue, operands: js_sys::Array) -> JsResult<NdArray> {
    js((|| {
        let subscripts = subscripts.as_string().ok_or_else(|| {
            Error::Value(format!(
                "einsum: the subscripts must be a string such as \"ij,jk->ik\", got {}",
                describe(&subscripts)
            ))
        })?;
        let mut items: Vec<JsValue> = operands.iter().collect();
        let opts = match items.last() {
            Some(last) if is_options_object(last) => items.pop().unwrap_or(JsValue::UNDEFINED),
            _ => JsValue::UNDEFINED,
        };
        let arrays: Vec<Array> = items
            .iter()
            .map(|v| NdArray::from_js("einsum", v))
            .collect::<Result<_>>()?;
        ops::einsum(&subscripts, &arrays, stream_option("einsum", &opts)?)
    })())
    .map(NdArray::new)
}
