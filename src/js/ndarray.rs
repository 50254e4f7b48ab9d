//! `NDArray`: the JS handle to a core [`Array`].

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::array::Array;
use crate::error::Error;
use crate::graph::shape::fmt_shape;
use crate::js::data::{element_to_js, to_nested, to_typed_array};
use crate::js::error::{JsResult, to_js};
use crate::js::handles::{self, Slot};
use crate::js::runtime::current;

/// A lazy n-dimensional array. Reading its data (`toArray`, `tolist`, `item`) evaluates it.
#[wasm_bindgen(js_name = NDArray)]
pub struct NdArray {
    slot: Slot,
    handle: u32,
}

impl NdArray {
    pub fn new(array: Array) -> NdArray {
        point_symbol_dispose_at_dispose();
        crate::js::history::note_origin(&array);
        let (handle, slot) = handles::register(array);
        NdArray { slot, handle }
    }

    /// An `NDArray` that holds nothing, as if disposed (to reach the class's prototype).
    /// A handle to `array` for the length of one call, not registered as an array of the
    /// page (it has no handle of its own, and dropping it disposes nothing).
    pub(crate) fn borrowed(array: Array) -> NdArray {
        NdArray {
            slot: Rc::new(RefCell::new(Some(array))),
            handle: 0,
        }
    }

    pub(crate) fn empty() -> NdArray {
        NdArray {
            slot: Rc::new(RefCell::new(None)),
            handle: 0,
        }
    }

    /// The array, or `DisposedArrayError` once it has been disposed.
    pub fn array(&self) -> JsResult<Array> {
        self.slot
            .borrow()
            .clone()
            .ok_or_else(|| to_js(disposed("this NDArray")))
    }

    /// Another `NDArray` for the same array (JS gets a distinct object with its own handle).
    pub fn clone_handle(&self) -> NdArray {
        NdArray::new(
            self.slot
                .borrow()
                .clone()
                .expect("clone_handle of a live NDArray"),
        )
    }

    /// The array behind a JS value that should be an `NDArray`; `op` names the caller.
    pub fn from_js(op: &str, value: &JsValue) -> Result<Array, Error> {
        let handle = handles::handle_of(value).ok_or_else(|| {
            Error::Value(format!(
                "{op}: expected an NDArray, got {}",
                crate::js::options::describe(value)
            ))
        })?;
        handles::array_of(handle).ok_or_else(|| disposed(&format!("{op}: an NDArray argument")))
    }

    /// Evaluates and reads back on the runtime, then converts the words with `convert`.
    fn read(
        &self,
        convert: impl FnOnce(&Array, &[u32]) -> JsResult<JsValue> + 'static,
    ) -> js_sys::Promise {
        let array = match self.array() {
            Ok(array) => array,
            Err(err) => return js_sys::Promise::reject(&err),
        };
        future_to_promise(async move {
            let runtime = current().await.map_err(to_js)?;
            let words = runtime.read_words(&array).await.map_err(to_js)?;
            convert(&array, &words)
        })
    }
}

thread_local! {
    static SYMBOL_DISPOSE_SET: Cell<bool> = const { Cell::new(false) };
}

/// wasm-bindgen makes `[Symbol.dispose]` call `free()`, after which any use fails with a bare
/// null-pointer error. `dispose()` keeps the object so that a later use throws
/// `DisposedArrayError`, so `[Symbol.dispose]` is pointed at it, once, on the first `NDArray`
/// (the class exists by then; a start hook may not run, as in wasm-bindgen-test).
fn point_symbol_dispose_at_dispose() {
    if SYMBOL_DISPOSE_SET.with(|done| done.replace(true)) {
        return;
    }
    let symbol = js_sys::Reflect::get(&js_sys::global(), &"Symbol".into())
        .and_then(|s| js_sys::Reflect::get(&s, &"dispose".into()));
    let Ok(symbol) = symbol else { return };
    if symbol.is_undefined() {
        return;
    }
    let probe = JsValue::from(NdArray::empty());
    let prototype = js_sys::Object::get_prototype_of(&probe);
    if let Ok(dispose) = js_sys::Reflect::get(&prototype, &"dispose".into()) {
        let _ = js_sys::Reflect::set(&prototype, &symbol, &dispose);
    }
}

fn disposed(what: &str) -> Error {
    Error::DisposedArray(format!("{what} has been disposed; its data is gone"))
}

impl Drop for NdArray {
    /// Runs on `free()` and when the JS object is garbage-collected (wasm-bindgen registers
    /// every `NDArray` with a `FinalizationRegistry`).
    fn drop(&mut self) {
        handles::dispose(self.handle);
    }
}

#[wasm_bindgen(js_class = NDArray)]
impl NdArray {
    /// The handle that finds this array among the live ones (internal).
    #[wasm_bindgen(getter, js_name = "__handle")]
    pub fn handle(&self) -> u32 {
        self.handle
    }

    /// The dimensions, outermost first.
    #[wasm_bindgen(getter, unchecked_return_type = "number[]")]
    pub fn shape(&self) -> JsResult<js_sys::Array> {
        Ok(self
            .array()?
            .shape()
            .iter()
            .map(|&d| JsValue::from_f64(d as f64))
            .collect())
    }

    /// `"float32"`, `"int32"`, `"uint32"` or `"bool"`.
    #[wasm_bindgen(getter)]
    pub fn dtype(&self) -> JsResult<String> {
        Ok(self.array()?.dtype().name().into())
    }

    /// Number of elements.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> JsResult<f64> {
        Ok(self.array()?.size() as f64)
    }

    /// Number of dimensions.
    #[wasm_bindgen(getter)]
    pub fn ndim(&self) -> JsResult<u32> {
        Ok(self.array()?.ndim() as u32)
    }

    /// Bytes of the data: 1 per `bool` element, 4 otherwise.
    #[wasm_bindgen(getter)]
    pub fn nbytes(&self) -> JsResult<f64> {
        Ok(self.array()?.nbytes() as f64)
    }

    /// Frees the array's memory now. Using the `NDArray` afterwards throws
    /// `DisposedArrayError`; disposing twice does nothing. `[Symbol.dispose]` does the same,
    /// so `using x = ...` works.
    pub fn dispose(&self) {
        handles::dispose(self.handle);
        // A clone made before `tidy` registered it may share the slot but not the handle.
        let array = self.slot.borrow_mut().take();
        drop(array);
    }

    /// Whether `dispose()` has been called.
    #[wasm_bindgen(getter, js_name = isDisposed)]
    pub fn is_disposed(&self) -> bool {
        self.slot.borrow().is_none()
    }

    /// Evaluates the array and resolves to a row-major typed array of its dtype
    /// (`bool` as `Uint8Array`).
    #[wasm_bindgen(
        js_name = toArray,
        unchecked_return_type = "Promise<Float32Array | Float16Array | Int32Array | Uint32Array | Int8Array | Uint8Array>"
    )]
    pub fn to_array(&self) -> js_sys::Promise {
        self.read(|array, words| Ok(to_typed_array(words, array.dtype(), array.size())))
    }

    /// Evaluates the array and resolves to nested JS arrays (a bare value for a scalar).
    #[wasm_bindgen(unchecked_return_type = "Promise<any>")]
    pub fn tolist(&self) -> js_sys::Promise {
        self.read(|array, words| Ok(to_nested(words, array.shape(), array.dtype())))
    }

    /// Evaluates a one-element array and resolves to its value.
    #[wasm_bindgen(unchecked_return_type = "Promise<number | boolean>")]
    pub fn item(&self) -> js_sys::Promise {
        self.read(|array, words| match (array.size(), words) {
            (1, words) => Ok(element_to_js(
                crate::dtype::packed::element(words, array.dtype(), 0),
                array.dtype(),
            )),
            _ => Err(to_js(Error::Value(format!(
                "item: the array has shape {} ({} elements); item() needs exactly one",
                fmt_shape(array.shape()),
                array.size()
            )))),
        })
    }

    /// `NDArray(shape=[2, 3], dtype=float32)`.
    #[wasm_bindgen(js_name = toString)]
    pub fn to_display_string(&self) -> String {
        match self.slot.borrow().as_ref() {
            Some(array) => format!(
                "NDArray(shape={}, dtype={})",
                fmt_shape(array.shape()),
                array.dtype().name()
            ),
            None => "NDArray(disposed)".into(),
        }
    }
}
