//! `NDArray`: the JS handle to a core [`Array`].

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::array::Array;
use crate::error::Error;
use crate::js::data::{element_to_js, to_nested, to_typed_array};
use crate::js::error::{JsResult, to_js};
use crate::js::ops;
use crate::js::runtime::current;
use crate::primitive::{BinaryOp, ReduceOp, UnaryOp};
use crate::shape::fmt_shape;

thread_local! {
    /// Every live `NDArray` by handle, so that arrays passed inside JS containers (the list of
    /// `concatenate`) can be found without taking them from their owners.
    static LIVE: RefCell<HashMap<u32, Array>> = RefCell::new(HashMap::new());
    static NEXT_HANDLE: Cell<u32> = const { Cell::new(1) };
}

/// A lazy n-dimensional array. Reading its data (`toArray`, `tolist`, `item`) evaluates it.
#[wasm_bindgen(js_name = NDArray)]
pub struct NdArray {
    array: Array,
    handle: u32,
}

impl NdArray {
    pub fn new(array: Array) -> NdArray {
        let handle = NEXT_HANDLE.with(|n| n.replace(n.get().wrapping_add(1)));
        LIVE.with(|live| live.borrow_mut().insert(handle, array.clone()));
        NdArray { array, handle }
    }

    pub fn array(&self) -> &Array {
        &self.array
    }

    /// Another `NDArray` for the same array (JS gets a distinct object with its own handle).
    pub fn clone_handle(&self) -> NdArray {
        NdArray::new(self.array.clone())
    }

    /// The array behind a JS value that should be an `NDArray`; `op` names the caller.
    pub fn from_js(op: &str, value: &JsValue) -> Result<Array, Error> {
        let handle = js_sys::Reflect::get(value, &"__handle".into())
            .ok()
            .and_then(|h| h.as_f64())
            .ok_or_else(|| Error::Value(format!("{op}: expected an NDArray")))?;
        LIVE.with(|live| live.borrow().get(&(handle as u32)).cloned())
            .ok_or_else(|| Error::Value(format!("{op}: the NDArray has been freed")))
    }

    /// Evaluates and reads back on the runtime, then converts the words with `convert`.
    fn read(
        &self,
        convert: impl FnOnce(&Array, &[u32]) -> JsResult<JsValue> + 'static,
    ) -> js_sys::Promise {
        let array = self.array.clone();
        future_to_promise(async move {
            let runtime = current().await.map_err(to_js)?;
            let words = array.to_words(&runtime).await.map_err(to_js)?;
            convert(&array, &words)
        })
    }
}

impl Drop for NdArray {
    fn drop(&mut self) {
        LIVE.with(|live| live.borrow_mut().remove(&self.handle));
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
    pub fn shape(&self) -> js_sys::Array {
        self.array
            .shape()
            .iter()
            .map(|&d| JsValue::from_f64(d as f64))
            .collect()
    }

    /// `"float32"`, `"int32"`, `"uint32"` or `"bool"`.
    #[wasm_bindgen(getter)]
    pub fn dtype(&self) -> String {
        self.array.dtype().name().into()
    }

    /// Number of elements.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> f64 {
        self.array.size() as f64
    }

    /// Number of dimensions.
    #[wasm_bindgen(getter)]
    pub fn ndim(&self) -> u32 {
        self.array.ndim() as u32
    }

    /// Bytes of the data: 1 per `bool` element, 4 otherwise.
    #[wasm_bindgen(getter)]
    pub fn nbytes(&self) -> f64 {
        self.array.nbytes() as f64
    }

    /// Evaluates the array and resolves to a row-major typed array of its dtype
    /// (`bool` as `Uint8Array`).
    #[wasm_bindgen(
        js_name = toArray,
        unchecked_return_type = "Promise<Float32Array | Int32Array | Uint32Array | Uint8Array>"
    )]
    pub fn to_array(&self) -> js_sys::Promise {
        self.read(|array, words| Ok(to_typed_array(words, array.dtype())))
    }

    /// Evaluates the array and resolves to nested JS arrays (a bare value for a scalar).
    #[wasm_bindgen(unchecked_return_type = "Promise<any>")]
    pub fn tolist(&self) -> js_sys::Promise {
        self.read(|array, words| Ok(to_nested(words, array.shape(), array.dtype())))
    }

    /// Evaluates a one-element array and resolves to its value.
    #[wasm_bindgen(unchecked_return_type = "Promise<number | boolean>")]
    pub fn item(&self) -> js_sys::Promise {
        self.read(|array, words| match words {
            [word] => Ok(element_to_js(*word, array.dtype())),
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
        format!(
            "NDArray(shape={}, dtype={})",
            fmt_shape(self.array.shape()),
            self.array.dtype().name()
        )
    }
}

/// Declares the elementwise ops as methods: `x.exp(opts?)`, `a.add(b, opts?)`.
macro_rules! elementwise_methods {
    (unary: $($uf:ident $ujs:literal $uop:ident),* ; binary: $($bf:ident $bjs:literal $bop:ident),*) => {
        #[wasm_bindgen(js_class = NDArray)]
        impl NdArray {
            $(
                #[doc = concat!("`", $ujs, "(this, opts?)`.")]
                #[wasm_bindgen(js_name = $ujs)]
                pub fn $uf(&self, opts: JsValue) -> JsResult<NdArray> {
                    ops::unary_op(UnaryOp::$uop, self, &opts)
                }
            )*
            $(
                #[doc = concat!("`", $bjs, "(this, other, opts?)`.")]
                #[wasm_bindgen(js_name = $bjs)]
                pub fn $bf(
                    &self,
                    #[wasm_bindgen(unchecked_param_type = "NDArray | number | boolean")] other: JsValue,
                    opts: JsValue,
                ) -> JsResult<NdArray> {
                    ops::binary_op(BinaryOp::$bop, ops::Arg::Array(&self.array), ops::Arg::Js(&other), &opts)
                }
            )*
        }
    };
}

ops::with_elementwise_ops!(elementwise_methods);

/// Declares the reductions as methods: `x.sum({axis, keepdims})`.
macro_rules! reduction_methods {
    ($($f:ident $js:literal $op:ident),*) => {
        #[wasm_bindgen(js_class = NDArray)]
        impl NdArray {
            $(
                #[doc = concat!("`", $js, "(this, {axis?, keepdims?, stream?})`.")]
                #[wasm_bindgen(js_name = $js)]
                pub fn $f(&self, opts: JsValue) -> JsResult<NdArray> {
                    ops::reduce_op(ReduceOp::$op, self, &opts)
                }
            )*
        }
    };
}

ops::with_reductions!(reduction_methods);

#[wasm_bindgen(js_class = NDArray)]
impl NdArray {
    /// `clip(this, lo, hi, opts?)`.
    pub fn clip(&self, lo: JsValue, hi: JsValue, opts: JsValue) -> JsResult<NdArray> {
        ops::clip(self, lo, hi, opts)
    }

    /// `astype(this, dtype, opts?)`.
    pub fn astype(&self, dtype: &str, opts: JsValue) -> JsResult<NdArray> {
        ops::astype(self, dtype, opts)
    }

    /// `reshape(this, shape, opts?)`.
    pub fn reshape(&self, shape: JsValue, opts: JsValue) -> JsResult<NdArray> {
        ops::reshape(self, shape, opts)
    }

    /// `transpose(this, axes?, opts?)`.
    pub fn transpose(&self, axes: JsValue, opts: JsValue) -> JsResult<NdArray> {
        ops::transpose(self, axes, opts)
    }

    /// `expandDims(this, axis, opts?)`.
    #[wasm_bindgen(js_name = expandDims)]
    pub fn expand_dims(&self, axis: JsValue, opts: JsValue) -> JsResult<NdArray> {
        ops::expand_dims(self, axis, opts)
    }

    /// `squeeze(this, {axis?})`.
    pub fn squeeze(&self, opts: JsValue) -> JsResult<NdArray> {
        ops::squeeze(self, opts)
    }

    /// `broadcastTo(this, shape, opts?)`.
    #[wasm_bindgen(js_name = broadcastTo)]
    pub fn broadcast_to(&self, shape: JsValue, opts: JsValue) -> JsResult<NdArray> {
        ops::broadcast_to(self, shape, opts)
    }

    /// `slice(this, start, stop, strides?, opts?)`.
    pub fn slice(
        &self,
        start: JsValue,
        stop: JsValue,
        strides: JsValue,
        opts: JsValue,
    ) -> JsResult<NdArray> {
        ops::slice(self, start, stop, strides, opts)
    }

    /// `matmul(this, other, opts?)`.
    pub fn matmul(&self, other: &NdArray, opts: JsValue) -> JsResult<NdArray> {
        ops::matmul(self, other, opts)
    }

    /// `mean(this, {axis?, keepdims?, stream?})`.
    pub fn mean(&self, opts: JsValue) -> JsResult<NdArray> {
        ops::mean(self, opts)
    }

    /// `logsumexp(this, {axis?, keepdims?, stream?})`.
    pub fn logsumexp(&self, opts: JsValue) -> JsResult<NdArray> {
        ops::logsumexp(self, opts)
    }

    /// `softmax(this, {axis?, stream?})`.
    pub fn softmax(&self, opts: JsValue) -> JsResult<NdArray> {
        ops::softmax(self, opts)
    }

    /// `flatten(this, opts?)`.
    pub fn flatten(&self, opts: JsValue) -> JsResult<NdArray> {
        ops::flatten(self, opts)
    }
}
