//! The wasm-bindgen layer: the JS API of `../shared/API.md`. It converts JS values, calls the
//! core and maps errors; it holds no logic of its own.

pub mod block;
pub mod data;
pub mod error;
pub mod history;
pub mod memory;
pub mod ndarray;
pub mod ops;
pub mod options;
pub mod profile;
pub mod random;
pub mod runtime;
pub mod smi;
pub mod stream;
pub mod tidy;
pub mod torch;

use wasm_bindgen::prelude::*;

/// Runs when the module is instantiated: panics (bugs, never bad input) reach the console with
/// their message instead of a bare `unreachable`.
#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}

/// Sets `key` on a plain object the layer is building for JS.
pub(crate) fn set_property(object: &js_sys::Object, key: &str, value: JsValue) {
    // Setting a data property on a fresh plain object cannot fail.
    let _ = js_sys::Reflect::set(object, &JsValue::from_str(key), &value);
}
