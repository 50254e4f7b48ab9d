//! Calling a page's function from inside a transform: the function gets new `NDArray`s for
//! the transform's stand-ins, and what it returns is read back as a tree of arrays. Every
//! `NDArray` made during the call is disposed afterwards, as `tidy` does, so that the
//! function's intermediates do not keep its activations alive after the transform has let go
//! of them. A JS exception thrown by the function is kept here and rethrown unchanged by the
//! transform's entry point, however deep in the core the call was.

use std::cell::RefCell;

use wasm_bindgen::prelude::*;

use crate::array::Array;
use crate::error::{Error, Result};
use crate::js::error::to_js;
use crate::js::handles;
use crate::js::options::describe;
use crate::js::tree::{Numbers, Tree};

thread_local! {
    /// The exception a traced function threw, until its transform rethrows it.
    static THROWN: RefCell<Option<JsValue>> = const { RefCell::new(None) };
}

/// `f` as a function, or the `ValueError` that says `op` needs one.
pub(crate) fn function<'a>(op: &str, f: &'a JsValue) -> Result<&'a js_sys::Function> {
    f.dyn_ref::<js_sys::Function>()
        .ok_or_else(|| Error::Value(format!("{op}: expected a function, got {}", describe(f))))
}

/// Calls `f` with the arguments `make_args` builds (inside the call's scope, so the
/// `NDArray`s it makes are the call's), and splits its result into a tree and its arrays.
pub(crate) fn call(
    op: &str,
    f: &js_sys::Function,
    make_args: impl FnOnce() -> js_sys::Array,
) -> Result<(Tree, Vec<Array>)> {
    handles::open_scope();
    let args = make_args();
    let result = f.apply(&JsValue::UNDEFINED, &args);
    drop(args);
    let scope = handles::close_scope();
    let split = match result {
        Ok(value) => result_tree(op, &value),
        Err(thrown) => {
            THROWN.with(|t| *t.borrow_mut() = Some(thrown));
            Err(Error::Value(format!("{op}: the function threw")))
        }
    };
    scope.into_iter().for_each(handles::dispose);
    split
}

fn result_tree(op: &str, value: &JsValue) -> Result<(Tree, Vec<Array>)> {
    if value.is_instance_of::<js_sys::Promise>() {
        return Err(Error::Value(format!(
            "{op}: the function returned a promise; transforms need a synchronous function"
        )));
    }
    let mut arrays = Vec::new();
    let tree = Tree::split(
        &format!("{op}: the function's result"),
        value,
        Numbers::Keep,
        &mut arrays,
    )?;
    Ok((tree, arrays))
}

/// The JS error for a transform that failed with `err`: the function's own exception if it
/// threw one, else `err` as a typed error.
pub(crate) fn rethrow(err: Error) -> JsValue {
    THROWN
        .with(|t| t.borrow_mut().take())
        .unwrap_or_else(|| to_js(err))
}

/// Forgets an exception a transform caught but did not rethrow (it failed another way first).
pub(crate) fn forget_thrown() {
    THROWN.with(|t| t.borrow_mut().take());
}
