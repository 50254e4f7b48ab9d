//! `sort`, `argsort` and `topk`. As in MLX, the axis is the last one when `opts.axis` is
//! absent, and `axis: null` sorts the flattened array.

use wasm_bindgen::prelude::*;

use crate::error::{Error, Result};
use crate::js::error::{JsResult, js};
use crate::js::ndarray::NdArray;
use crate::js::options::{Options, count_of};
use crate::js::stream::stream_in;
use crate::ops;
use crate::stream::Stream;

/// The options of the sorts.
const SORT: &[&str] = &["axis", "stream"];

/// `opts.axis`: -1 when absent, `None` (flattened) for `null`, else one axis; and the stream.
fn sort_options(op: &'static str, opts: &JsValue) -> Result<(Option<isize>, Stream)> {
    let parsed = Options::parse(op, opts, SORT)?;
    let axis = match parsed.get("axis") {
        None => Some(-1),
        Some(v) if v.is_null() => None,
        Some(_) => match parsed.axis()?.as_deref() {
            Some([a]) => Some(*a),
            _ => {
                return Err(Error::Value(format!(
                    "{op}: opts.axis must be one axis or null"
                )));
            }
        },
    };
    Ok((axis, stream_in(&parsed)?))
}

/// `sort(x, {axis?, stream?})`: stable, NaN last.
pub fn sort(x: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    let x = x.array()?;
    js(sort_options("sort", &opts).and_then(|(axis, s)| ops::sort(&x, axis, s))).map(NdArray::new)
}

/// `argsort(x, {axis?, stream?})`: uint32 positions of a stable sort.
pub fn argsort(x: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    let x = x.array()?;
    js(sort_options("argsort", &opts).and_then(|(axis, s)| ops::argsort(&x, axis, s)))
        .map(NdArray::new)
}

/// `topk(x, k, {axis?, stream?})`: the k largest, in descending order.
pub fn topk(x: &NdArray, k: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let x = x.array()?;
    js((|| {
        let k = count_of("topk", "k", &k)?;
        let (axis, stream) = sort_options("topk", &opts)?;
        ops::topk(&x, k, axis, stream)
    })())
    .map(NdArray::new)
}
