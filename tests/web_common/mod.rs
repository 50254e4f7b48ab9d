//! Helpers shared by the browser tests.
#![allow(dead_code)]

use js_sys::{Array as JsArray, Float32Array, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use tandem::js::ndarray::NdArray;
use tandem::js::runtime::init_runtime;

pub fn floats(values: &[f64]) -> JsValue {
    values
        .iter()
        .map(|&v| JsValue::from_f64(v))
        .collect::<JsArray>()
        .into()
}

pub fn options(pairs: &[(&str, JsValue)]) -> JsValue {
    let object = js_sys::Object::new();
    for (key, value) in pairs {
        Reflect::set(&object, &(*key).into(), value).unwrap();
    }
    object.into()
}

pub async fn runtime_info() -> JsValue {
    JsFuture::from(init_runtime(JsValue::UNDEFINED).unwrap())
        .await
        .unwrap()
}

pub async fn to_vec(a: &NdArray) -> Vec<f32> {
    let typed = JsFuture::from(a.to_array()).await.unwrap();
    typed.dyn_into::<Float32Array>().unwrap().to_vec()
}

pub fn get(object: &JsValue, key: &str) -> JsValue {
    Reflect::get(object, &key.into()).unwrap()
}

/// A JS value for an NDArray, as a page would pass it.
pub fn js_value(a: &NdArray) -> JsValue {
    JsValue::from(a.clone_handle())
}

pub fn gpu() -> JsValue {
    options(&[("stream", "gpu".into())])
}

pub fn cpu() -> JsValue {
    options(&[("stream", "cpu".into())])
}

pub fn error_name(result: Result<NdArray, JsValue>) -> String {
    let err: js_sys::Error = result
        .err()
        .expect("an error")
        .dyn_into()
        .expect("a JS Error");
    String::from(err.name())
}
