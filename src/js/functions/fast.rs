//! `tn.fast.*` (MLX's `mx.fast`): the glue exports them as `fastLayerNorm` and friends, and
//! the package's `index.js` gathers them into the `fast` object.

use wasm_bindgen::prelude::*;

use crate::array::Array;
use crate::error::{Error, Result};
use crate::js::error::{JsResult, js};
use crate::js::ndarray::NdArray;
use crate::js::options::describe;
use crate::ops;

use super::stream_option;

/// An optional array argument: an NDArray, or `null`/`undefined` for none.
fn optional(op: &str, what: &str, value: &JsValue) -> Result<Option<Array>> {
    if value.is_null() || value.is_undefined() {
        return Ok(None);
    }
    NdArray::from_js(op, value).map(Some).map_err(|_| {
        Error::Value(format!(
            "{op}: the {what} must be an NDArray or null, got {}",
            describe(value)
        ))
    })
}

/// `eps`: a finite number from 0.
fn epsilon(op: &str, value: &JsValue) -> Result<f32> {
    match value.as_f64() {
        Some(eps) if eps.is_finite() && eps >= 0.0 => Ok(eps as f32),
        _ => Err(Error::Value(format!(
            "{op}: eps must be a finite number from 0, got {}",
            describe(value)
        ))),
    }
}

/// `fast.layerNorm(x, weight, bias, eps, {stream?})`.
#[wasm_bindgen(js_name = "fastLayerNorm")]
pub fn fast_layer_norm(
    #[wasm_bindgen(unchecked_param_type = "NDArray")] x: JsValue,
    #[wasm_bindgen(unchecked_param_type = "NDArray | null")] weight: JsValue,
    #[wasm_bindgen(unchecked_param_type = "NDArray | null")] bias: JsValue,
    eps: JsValue,
    opts: JsValue,
) -> JsResult<NdArray> {
    const OP: &str = "fast.layerNorm";
    js((|| {
        let x = NdArray::from_js(OP, &x)?;
        let (weight, bias) = (
            optional(OP, "weight", &weight)?,
            optional(OP, "bias", &bias)?,
        );
        let eps = epsilon(OP, &eps)?;
        ops::fast::layer_norm(
            &x,
            weight.as_ref(),
            bias.as_ref(),
            eps,
            stream_option(OP, &opts)?,
        )
    })())
    .map(NdArray::new)
}

/// `fast.rmsNorm(x, weight, eps, {stream?})`.
#[wasm_bindgen(js_name = "fastRmsNorm")]
pub fn fast_rms_norm(
    #[wasm_bindgen(unchecked_param_type = "NDArray")] x: JsValue,
    #[wasm_bindgen(unchecked_param_type = "NDArray | null")] weight: JsValue,
    eps: JsValue,
    opts: JsValue,
) -> JsResult<NdArray> {
    const OP: &str = "fast.rmsNorm";
    js((|| {
        let x = NdArray::from_js(OP, &x)?;
        let weight = optional(OP, "weight", &weight)?;
        let eps = epsilon(OP, &eps)?;
        ops::fast::rms_norm(&x, weight.as_ref(), eps, stream_option(OP, &opts)?)
    })())
    .map(NdArray::new)
}
