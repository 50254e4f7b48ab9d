//! `matmul`, `outer` and `addmm`.

use wasm_bindgen::prelude::*;

use crate::js::error::{JsResult, js};
use crate::js::ndarray::NdArray;
use crate::ops;

use super::stream_option;

/// `matmul(a, b, opts?)`: batched, with broadcasting of batch axes; float32.
pub fn matmul(a: &NdArray, b: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    let device = js(stream_option("matmul", &opts))?;
    js(ops::matmul(&a.array()?, &b.array()?, device)).map(NdArray::new)
}

/// `outer(a, b, opts?)`: the outer product of the flattened operands.
pub fn outer(a: &NdArray, b: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    let device = js(stream_option("outer", &opts))?;
    js(ops::outer(&a.array()?, &b.array()?, device)).map(NdArray::new)
}

/// The options of `addmm`.
const ADDMM: &[&str] = &["alpha", "beta", "stream"];

/// `addmm(c, a, b, {alpha?, beta?, stream?})`: `alpha * (a @ b) + beta * c`.
pub fn addmm(c: &NdArray, a: &NdArray, b: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    let (c, a, b) = (c.array()?, a.array()?, b.array()?);
    js((|| {
        let parsed = crate::js::options::Options::parse("addmm", &opts, ADDMM)?;
        let alpha = parsed.number("alpha")?.unwrap_or(1.0) as f32;
        let beta = parsed.number("beta")?.unwrap_or(1.0) as f32;
        ops::addmm(
            &c,
            &a,
            &b,
            alpha,
            beta,
            crate::js::stream::stream_in(&parsed)?,
        )
    })())
    .map(NdArray::new)
}
