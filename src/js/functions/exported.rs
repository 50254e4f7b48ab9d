//! The functions above that take NDArrays, as JS sees them. Their NDArray parameters arrive as
//! JS values, so that a number, an array or a disposed NDArray in their place is a typed error
//! that names the op and what it got (wasm-bindgen's own check throws a plain `Error`). Each
//! calls its namesake above with the NDArray borrowed.

use wasm_bindgen::prelude::*;

use crate::js::error::{JsResult, js};
use crate::js::ndarray::NdArray;

/// The NDArray a JS argument names, borrowed for one call.
fn borrow(op: &str, value: &JsValue) -> JsResult<NdArray> {
    js(NdArray::from_js(op, value)).map(NdArray::borrowed)
}

/// Exports `super::$rust` as `$js`; `$arr` are its NDArray parameters, `$arg` the rest.
macro_rules! export {
    ($($doc:expr, $js:literal $rust:ident($($arr:ident),+ $(; $($arg:ident: $ty:ty),*)?) -> $ret:ty;)*) => {
        $(
            #[doc = $doc]
            #[wasm_bindgen(js_name = $js)]
            #[allow(clippy::too_many_arguments)]
            pub fn $rust(
                $(#[wasm_bindgen(unchecked_param_type = "NDArray")] $arr: JsValue,)+
                $($($arg: $ty,)*)?
            ) -> JsResult<$ret> {
                $(let $arr = borrow($js, &$arr)?;)+
                super::$rust($(&$arr,)+ $($($arg),*)?)
            }
        )*
    };
}

macro_rules! export_elementwise {
    (unary: $($uf:ident $ujs:literal $uop:ident),* ; binary: $($bf:ident $bjs:literal $bop:ident),*) => {
        export! {
            $(concat!("`", $ujs, "(x, {stream?})`, elementwise."), $ujs $uf(x; opts: JsValue) -> NdArray;)*
        }
    };
}
super::with_elementwise_ops!(export_elementwise);

macro_rules! export_reductions {
    ($($f:ident $js:literal $op:ident),*) => {
        export! {
            $(concat!("`", $js, "(x, {axis?, keepdims?, stream?})`."), $js $f(x; opts: JsValue) -> NdArray;)*
        }
    };
}
super::with_reductions!(export_reductions);

macro_rules! export_scans {
    ($($f:ident $js:literal $op:ident),*) => {
        export! {
            $(concat!("`", $js, "(x, {axis?, reverse?, inclusive?, stream?})`."), $js $f(x; opts: JsValue) -> NdArray;)*
        }
    };
}
super::with_scans!(export_scans);

export! {
    "`clip(x, lo, hi, {stream?})`: each bound an NDArray (broadcast), a number or null.",
        "clip" clip(x; lo: JsValue, hi: JsValue, opts: JsValue) -> NdArray;
    "`nanToNum(x, {nan?, posinf?, neginf?, stream?})`.",
        "nanToNum" nan_to_num(x; opts: JsValue) -> NdArray;
    "`astype(x, dtype, {stream?})`.", "astype" astype(x; dtype: &str, opts: JsValue) -> NdArray;
    "`reshape(x, shape, {stream?})`; one size may be -1.",
        "reshape" reshape(x; shape: JsValue, opts: JsValue) -> NdArray;
    "`transpose(x, axes?, {stream?})`; without axes, reverses them.",
        "transpose" transpose(x; axes: JsValue, opts: JsValue) -> NdArray;
    "`expandDims(x, axis, {stream?})`: `axis` is a number or a list.",
        "expandDims" expand_dims(x; axis: JsValue, opts: JsValue) -> NdArray;
    "`squeeze(x, {axis?, stream?})`.", "squeeze" squeeze(x; opts: JsValue) -> NdArray;
    "`broadcastTo(x, shape, {stream?})`.",
        "broadcastTo" broadcast_to(x; shape: JsValue, opts: JsValue) -> NdArray;
    "`slice(x, start, stop, strides?, {stream?})` with MLX's semantics.",
        "slice" slice(x; start: JsValue, stop: JsValue, strides: JsValue, opts: JsValue) -> NdArray;
    "`flatten(x, {stream?})`.", "flatten" flatten(x; opts: JsValue) -> NdArray;
    "`stopGradient(x, {stream?})`: `x`, with no gradient flowing back through it.",
        "stopGradient" stop_gradient(x; opts: JsValue) -> NdArray;
    "`mean(x, {axis?, keepdims?, stream?})`: float32 for every dtype.",
        "mean" mean(x; opts: JsValue) -> NdArray;
    "`logsumexp(x, {axis?, keepdims?, stream?})`, computed stably.",
        "logsumexp" logsumexp(x; opts: JsValue) -> NdArray;
    "`softmax(x, {axis?, stream?})`, computed stably; all axes when `axis` is absent.",
        "softmax" softmax(x; opts: JsValue) -> NdArray;
    "`var(x, {axis?, keepdims?, ddof?, stream?})` (the glue's `variance`; `var` is reserved).",
        "variance" variance(x; opts: JsValue) -> NdArray;
    "`std(x, {axis?, keepdims?, ddof?, stream?})`.", "std" std(x; opts: JsValue) -> NdArray;
    "`any(x, {axis?, keepdims?, stream?})`.", "any" any(x; opts: JsValue) -> NdArray;
    "`all(x, {axis?, keepdims?, stream?})`.", "all" all(x; opts: JsValue) -> NdArray;
    "`take(x, indices, {axis?, stream?})`: indices an NDArray, an integer or a list of them.",
        "take" take(x; indices: JsValue, opts: JsValue) -> NdArray;
    "`takeAlongAxis(x, indices, {axis?, stream?})`.",
        "takeAlongAxis" take_along_axis(x; indices: JsValue, opts: JsValue) -> NdArray;
    "`putAlongAxis(x, indices, values, {axis?, stream?})`: values an NDArray or a number.",
        "putAlongAxis" put_along_axis(x; indices: JsValue, values: JsValue, opts: JsValue) -> NdArray;
    "`sliceUpdate(x, update, start, stop, strides?, {stream?})`.",
        "sliceUpdate" slice_update(x; update: JsValue, start: JsValue, stop: JsValue, strides: JsValue, opts: JsValue) -> NdArray;
    "`sort(x, {axis?, stream?})`: stable, NaN last; `axis: null` sorts the flattened array.",
        "sort" sort(x; opts: JsValue) -> NdArray;
    "`argsort(x, {axis?, stream?})`.", "argsort" argsort(x; opts: JsValue) -> NdArray;
    "`topk(x, k, {axis?, stream?})`: descending.", "topk" topk(x; k: JsValue, opts: JsValue) -> NdArray;
    "`pad(x, padWidth, {mode?, constantValues?, stream?})`.",
        "pad" pad(x; pad_width: JsValue, opts: JsValue) -> NdArray;
    "`tile(x, reps, {stream?})`.", "tile" tile(x; reps: JsValue, opts: JsValue) -> NdArray;
    "`repeat(x, repeats, {axis?, stream?})`.",
        "repeat" repeat(x; repeats: JsValue, opts: JsValue) -> NdArray;
    "`roll(x, shift, {axis?, stream?})`.", "roll" roll(x; shift: JsValue, opts: JsValue) -> NdArray;
    "`diag(x, k?, {stream?})`.", "diag" diag(x; k: JsValue, opts: JsValue) -> NdArray;
    "`diagonal(x, {offset?, axis1?, axis2?, stream?})`.",
        "diagonal" diagonal(x; opts: JsValue) -> NdArray;
    "`tril(x, k?, {stream?})`.", "tril" tril(x; k: JsValue, opts: JsValue) -> NdArray;
    "`triu(x, k?, {stream?})`.", "triu" triu(x; k: JsValue, opts: JsValue) -> NdArray;
    "`outer(a, b, {stream?})`.", "outer" outer(a, b; opts: JsValue) -> NdArray;
    "`addmm(c, a, b, {alpha?, beta?, stream?})`.",
        "addmm" addmm(c, a, b; opts: JsValue) -> NdArray;
    "`tensordot(a, b, axes?, {stream?})`: `axes` a count or `[aAxes, bAxes]`.",
        "tensordot" tensordot(a, b; axes: JsValue, opts: JsValue) -> NdArray;
    "`conv1d(input, weight, {stride?, padding?, dilation?, groups?, stream?})`, channels last.",
        "conv1d" conv1d(x, w; opts: JsValue) -> NdArray;
    "`conv2d(input, weight, {stride?, padding?, dilation?, groups?, stream?})`, channels last.",
        "conv2d" conv2d(x, w; opts: JsValue) -> NdArray;
    "`convTranspose1d(input, weight, {stride?, padding?, dilation?, outputPadding?, groups?, stream?})`.",
        "convTranspose1d" conv_transpose1d(x, w; opts: JsValue) -> NdArray;
    "`convTranspose2d(input, weight, {stride?, padding?, dilation?, outputPadding?, groups?, stream?})`.",
        "convTranspose2d" conv_transpose2d(x, w; opts: JsValue) -> NdArray;
    "`matmul(a, b, {stream?})`: batched, with broadcasting of batch axes; float32.",
        "matmul" matmul(a, b; opts: JsValue) -> NdArray;
}

/// `split(x, indicesOrSections, {axis?, stream?})`: a number of equal sections, or the
/// indices to cut at; returns an array of NDArray views.
#[wasm_bindgen(js_name = "split", unchecked_return_type = "NDArray[]")]
pub fn split(
    #[wasm_bindgen(unchecked_param_type = "NDArray")] x: JsValue,
    indices_or_sections: JsValue,
    opts: JsValue,
) -> JsResult<js_sys::Array> {
    super::split(&borrow("split", &x)?, indices_or_sections, opts)
}
