//! `tn.fast.*` (MLX's `mx.fast`): the glue exports them as `fastLayerNorm` and friends, and
//! the package's `index.js` gathers them into the `fast` object.

use wasm_bindgen::prelude::*;

use crate::array::Array;
use crate::error::{Error, Result};
use crate::js::error::{JsResult, js};
use crate::js::ndarray::NdArray;
use crate::js::options::{Options, describe};
use crate::js::stream::stream_in;
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

/// The options of `fast.rope`.
const ROPE: &[&str] = &["traditional", "base", "scale", "offset", "stream"];

/// `fast.rope(x, dims, {traditional?, base?, scale?, offset?, stream?})`; MLX's defaults are
/// false, 10000, 1 and 0.
#[wasm_bindgen(js_name = "fastRope")]
pub fn fast_rope(
    #[wasm_bindgen(unchecked_param_type = "NDArray")] x: JsValue,
    dims: JsValue,
    opts: JsValue,
) -> JsResult<NdArray> {
    const OP: &str = "fast.rope";
    js((|| {
        let x = NdArray::from_js(OP, &x)?;
        let dims = crate::js::options::count_of(OP, "dims", &dims)?;
        let parsed = Options::parse(OP, &opts, ROPE)?;
        let offset = parsed.number("offset")?.unwrap_or(0.0);
        if offset.fract() != 0.0 || offset.abs() > 9.0e15 {
            return Err(Error::Value(format!(
                "{OP}: opts.offset must be a whole number, got {offset}"
            )));
        }
        let rope = ops::fast::Rope {
            dims,
            traditional: parsed.flag("traditional")?,
            base: parsed.number("base")?.unwrap_or(10000.0) as f32,
            scale: parsed.number("scale")?.unwrap_or(1.0) as f32,
            offset: offset as i64,
        };
        ops::fast::rope(&x, &rope, stream_in(&parsed)?)
    })())
    .map(NdArray::new)
}

/// The options of `fast.scaledDotProductAttention`.
const ATTENTION: &[&str] = &["scale", "mask", "stream"];

/// `fast.scaledDotProductAttention(q, k, v, {scale?, mask?, stream?})`: `scale` is
/// 1/sqrt(D) when absent; `mask` is `"causal"`, an additive float array or a bool array.
#[wasm_bindgen(js_name = "fastScaledDotProductAttention")]
pub fn fast_scaled_dot_product_attention(
    #[wasm_bindgen(unchecked_param_type = "NDArray")] q: JsValue,
    #[wasm_bindgen(unchecked_param_type = "NDArray")] k: JsValue,
    #[wasm_bindgen(unchecked_param_type = "NDArray")] v: JsValue,
    opts: JsValue,
) -> JsResult<NdArray> {
    const OP: &str = "fast.scaledDotProductAttention";
    js((|| {
        let [q, k, v] = [&q, &k, &v].map(|a| NdArray::from_js(OP, a));
        let (q, k, v) = (q?, k?, v?);
        let parsed = Options::parse(OP, &opts, ATTENTION)?;
        let depth = q.shape().last().copied().unwrap_or(1).max(1) as f64;
        let scale = parsed.number("scale")?.unwrap_or(1.0 / depth.sqrt()) as f32;
        let array;
        let mask = match parsed.get("mask") {
            None => ops::fast::AttentionMask::None,
            Some(m) if m.is_null() => ops::fast::AttentionMask::None,
            Some(m) if m.as_string().as_deref() == Some("causal") => {
                ops::fast::AttentionMask::Causal
            }
            Some(m) if crate::js::handles::handle_of(&m).is_some() => {
                array = NdArray::from_js(OP, &m)?;
                if array.dtype() == crate::dtype::DType::Bool {
                    ops::fast::AttentionMask::Keep(&array)
                } else {
                    ops::fast::AttentionMask::Additive(&array)
                }
            }
            Some(m) => {
                return Err(Error::Value(format!(
                    "{OP}: opts.mask must be \"causal\", an NDArray or null, got {}",
                    describe(&m)
                )));
            }
        };
        ops::fast::scaled_dot_product_attention(&q, &k, &v, scale, mask, stream_in(&parsed)?)
    })())
    .map(NdArray::new)
}
