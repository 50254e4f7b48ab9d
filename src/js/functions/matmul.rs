//! `matmul`.

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
