//! The method forms of the ops on `NDArray`: `x.exp()`, `a.add(b)`, `x.sum({axis})`,
//! `x.reshape([2, 3])`, each the same call as the function form with `this` first.

use wasm_bindgen::prelude::*;

use crate::graph::primitive::{BinaryOp, ReduceOp, UnaryOp};
use crate::js::error::{JsResult, to_js};
use crate::js::functions as ops;
use crate::js::ndarray::NdArray;

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
                    ops::binary_op(BinaryOp::$bop, ops::Arg::Array(&self.array()?), ops::Arg::Js(&other), &opts)
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

/// Declares the running reductions as methods: `x.cumsum({axis})`.
macro_rules! scan_methods {
    ($($f:ident $js:literal $op:ident),*) => {
        #[wasm_bindgen(js_class = NDArray)]
        impl NdArray {
            $(
                #[doc = concat!("`", $js, "(this, {axis?, reverse?, inclusive?, stream?})`.")]
                #[wasm_bindgen(js_name = $js)]
                pub fn $f(&self, opts: JsValue) -> JsResult<NdArray> {
                    ops::scan_op(crate::graph::primitive::ScanOp::$op, self, &opts)
                }
            )*
        }
    };
}

ops::with_scans!(scan_methods);

#[wasm_bindgen(js_class = NDArray)]
impl NdArray {
    /// `clip(this, lo, hi, opts?)`.
    pub fn clip(&self, lo: JsValue, hi: JsValue, opts: JsValue) -> JsResult<NdArray> {
        ops::clip(self, lo, hi, opts)
    }

    /// `take(this, indices, opts?)`.
    pub fn take(&self, indices: JsValue, opts: JsValue) -> JsResult<NdArray> {
        ops::take(self, indices, opts)
    }

    /// `takeAlongAxis(this, indices, opts?)`.
    #[wasm_bindgen(js_name = "takeAlongAxis")]
    pub fn take_along_axis(&self, indices: JsValue, opts: JsValue) -> JsResult<NdArray> {
        ops::take_along_axis(self, indices, opts)
    }

    /// `sort(this, opts?)`.
    pub fn sort(&self, opts: JsValue) -> JsResult<NdArray> {
        ops::sort(self, opts)
    }

    /// `argsort(this, opts?)`.
    pub fn argsort(&self, opts: JsValue) -> JsResult<NdArray> {
        ops::argsort(self, opts)
    }

    /// `topk(this, k, opts?)`.
    pub fn topk(&self, k: JsValue, opts: JsValue) -> JsResult<NdArray> {
        ops::topk(self, k, opts)
    }

    /// `diag(this, k?, opts?)`.
    pub fn diag(&self, k: JsValue, opts: JsValue) -> JsResult<NdArray> {
        ops::diag(self, k, opts)
    }

    /// `diagonal(this, opts?)`.
    pub fn diagonal(&self, opts: JsValue) -> JsResult<NdArray> {
        ops::diagonal(self, opts)
    }

    /// `var(this, opts?)`.
    #[wasm_bindgen(js_name = "var")]
    pub fn var(&self, opts: JsValue) -> JsResult<NdArray> {
        ops::variance(self, opts)
    }

    /// `std(this, opts?)`.
    pub fn std(&self, opts: JsValue) -> JsResult<NdArray> {
        ops::std(self, opts)
    }

    /// `any(this, opts?)`.
    pub fn any(&self, opts: JsValue) -> JsResult<NdArray> {
        ops::any(self, opts)
    }

    /// `all(this, opts?)`.
    pub fn all(&self, opts: JsValue) -> JsResult<NdArray> {
        ops::all(self, opts)
    }

    /// `tril(this, k?, opts?)`.
    pub fn tril(&self, k: JsValue, opts: JsValue) -> JsResult<NdArray> {
        ops::tril(self, k, opts)
    }

    /// `triu(this, k?, opts?)`.
    pub fn triu(&self, k: JsValue, opts: JsValue) -> JsResult<NdArray> {
        ops::triu(self, k, opts)
    }

    /// `nanToNum(this, opts?)`.
    #[wasm_bindgen(js_name = "nanToNum")]
    pub fn nan_to_num(&self, opts: JsValue) -> JsResult<NdArray> {
        ops::nan_to_num(self, opts)
    }

    /// `astype(this, dtype, opts?)`.
    pub fn astype(&self, dtype: &str, opts: JsValue) -> JsResult<NdArray> {
        ops::astype(self, dtype, opts)
    }

    /// `reshape(this, shape, opts?)`.
    pub fn reshape(&self, shape: JsValue, opts: JsValue) -> JsResult<NdArray> {
        ops::reshape(self, shape, opts)
    }

    /// `stopGradient(this, opts?)`.
    #[wasm_bindgen(js_name = stopGradient)]
    pub fn stop_gradient(&self, opts: JsValue) -> JsResult<NdArray> {
        ops::stop_gradient(self, opts)
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

    /// `matmul(this, other, opts?)`; anything but an NDArray as `other` is a typed error.
    pub fn matmul(
        &self,
        #[wasm_bindgen(unchecked_param_type = "NDArray")] other: JsValue,
        opts: JsValue,
    ) -> JsResult<NdArray> {
        let other = NdArray::from_js("matmul", &other).map_err(to_js)?;
        ops::matmul(self, &NdArray::borrowed(other), opts)
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
