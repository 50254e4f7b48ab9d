//! The op functions of the JS API: parse arguments, call the core op builder.

use wasm_bindgen::prelude::*;

use crate::array::Array;
use crate::error::Result;
use crate::js::data::{from_js, with_dtype};
use crate::js::error::{JsResult, js};
use crate::js::ndarray::NdArray;
use crate::js::options::Options;
use crate::js::runtime::default_device;
use crate::ops;
use crate::stream::Device;

/// Creates an array from a number, a boolean, nested arrays of them, or a typed array.
/// `opts.shape` reshapes the data (its size must match) and `opts.dtype` converts it.
#[wasm_bindgen]
pub fn array(data: JsValue, opts: JsValue) -> JsResult<NdArray> {
    js(make_array(&data, &opts)).map(NdArray::new)
}

fn make_array(data: &JsValue, opts: &JsValue) -> Result<Array> {
    let opts = Options::parse("array", opts)?;
    let mut host = from_js(data)?;
    if let Some(dtype) = opts.dtype()? {
        host = with_dtype(host, dtype);
    }
    let shape = opts.shape()?.unwrap_or(host.shape);
    Array::from_words(host.words, &shape, host.dtype)
}

/// Elementwise `a + b` with NumPy broadcasting.
#[wasm_bindgen]
pub fn add(a: &NdArray, b: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    let device = js(device_option("add", &opts))?;
    js(ops::add(a.array(), b.array(), device)).map(NdArray::new)
}

/// `opts.stream`, or the default device.
fn device_option(op: &'static str, opts: &JsValue) -> Result<Device> {
    Ok(Options::parse(op, opts)?
        .device()?
        .unwrap_or_else(default_device))
}
