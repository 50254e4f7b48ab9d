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

/// The message of a thrown JS value: an `Error`'s message, or the value itself when it is a
/// string; `None` for anything else (each caller says what it shows then).
pub fn message_of(value: &JsValue) -> Option<String> {
    use wasm_bindgen::JsCast;
    value
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| value.as_string())
}
