//! Core errors as JS `Error` objects whose `name` is the kind (`ShapeError`, …).

use wasm_bindgen::JsValue;

use crate::error::Error;

/// A JS `Error` with the kind as its `name` and the core's message.
pub fn to_js(err: Error) -> JsValue {
    let js = js_sys::Error::new(err.message());
    js.set_name(err.kind());
    js.into()
}

/// Results of functions exported to JS.
pub type JsResult<T> = Result<T, JsValue>;

/// Shorthand for `result.map_err(to_js)`.
pub fn js<T>(result: crate::Result<T>) -> JsResult<T> {
    result.map_err(to_js)
}
