//! The wasm-bindgen layer: the JS API (`npm/index.d.ts`, `docs/reference.md`). It converts JS values, calls the
//! core and maps errors; it holds no logic of its own.
//!
//! The package's TypeScript types are `npm/index.d.ts`, written for users (dtype-generic
//! arrays, an options interface per op); `tests/package/exports.mjs` checks that they declare
//! exactly what the package exports. wasm-bindgen's own `.d.ts` is not generated.

pub mod block;
pub mod compile;
pub mod data;
pub mod error;
pub mod functions;
pub mod grad;
pub mod handles;
pub mod history;
pub mod memory;
pub mod methods;
pub mod ndarray;
pub mod optimizers;
pub mod options;
pub mod profile;
pub mod random;
pub mod runtime;
pub mod smi;
pub mod store;
pub mod stream;
pub mod threads;
pub mod tidy;
pub mod torch;
pub mod traced;
pub mod tree;
pub mod vmap;
pub mod weights;

use std::cell::RefCell;

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

/// `key` as a JS string, made once per thread: every op reads a few properties, and
/// converting a Rust string to JS decodes it anew each time.
pub(crate) fn property(key: &'static str) -> JsValue {
    thread_local! {
        static KEYS: RefCell<Vec<(&'static str, JsValue)>> = const { RefCell::new(Vec::new()) };
    }
    KEYS.with(|keys| {
        if let Some((_, value)) = keys.borrow().iter().find(|(k, _)| *k == key) {
            return value.clone();
        }
        let value = JsValue::from_str(key);
        keys.borrow_mut().push((key, value.clone()));
        value
    })
}
