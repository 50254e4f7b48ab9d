//! `tidy(fn)`: disposes every `NDArray` created while `fn` runs, except those it returns.

use std::collections::HashSet;

use wasm_bindgen::prelude::*;

use crate::error::Error;
use crate::js::error::{JsResult, to_js};
use crate::js::handles::{self, note_created};

/// Calls `fn` and returns what it returns. Every `NDArray` created meanwhile is disposed
/// unless the result holds it (itself, or inside arrays and plain objects); kept ones belong
/// to the enclosing `tidy`, if any. If `fn` throws, everything it created is disposed. `fn`
/// must be synchronous: a returned promise is a `ValueError`, and its arrays are kept.
#[wasm_bindgen]
pub fn tidy(
    #[wasm_bindgen(unchecked_param_type = "() => any")] f: &js_sys::Function,
) -> JsResult<JsValue> {
    handles::open_scope();
    let result = f.call0(&JsValue::UNDEFINED);
    let scope = handles::close_scope();
    let value = match result {
        Ok(value) => value,
        Err(err) => {
            scope.into_iter().for_each(handles::dispose);
            return Err(err);
        }
    };
    if value.is_instance_of::<js_sys::Promise>() {
        scope.into_iter().for_each(note_created);
        return Err(to_js(Error::Value(
            "tidy: fn returned a promise; tidy needs a synchronous function (nothing was disposed)"
                .into(),
        )));
    }
    let mut keep = HashSet::new();
    handles_in(&value, &mut keep, 0);
    for handle in scope {
        if keep.contains(&handle) {
            note_created(handle);
        } else {
            handles::dispose(handle);
        }
    }
    Ok(value)
}

/// Collects the handles of the `NDArray`s in `value`: itself, or inside arrays and plain
/// objects, to a bounded depth (a cyclic object cannot loop).
fn handles_in(value: &JsValue, keep: &mut HashSet<u32>, depth: usize) {
    if depth > 32 || !value.is_object() {
        return;
    }
    if let Some(handle) = handles::handle_of(value) {
        keep.insert(handle);
        return;
    }
    if js_sys::Array::is_array(value) {
        for item in js_sys::Array::from(value).iter() {
            handles_in(&item, keep, depth + 1);
        }
        return;
    }
    let object: &js_sys::Object = value.unchecked_ref();
    let proto = js_sys::Object::get_prototype_of(object);
    let plain = js_sys::Object::get_prototype_of(&js_sys::Object::new());
    if proto.is_null() || js_sys::Object::is(&proto, &plain) {
        for item in js_sys::Object::values(object).iter() {
            handles_in(&item, keep, depth + 1);
        }
    }
}
