//! The running reductions: `cumsum cumprod cummax cummin logcumsumexp`.

use wasm_bindgen::prelude::*;

use crate::error::Result;
use crate::graph::primitive::ScanOp;
use crate::js::error::{JsResult, js};
use crate::js::ndarray::NdArray;
use crate::js::options::Options;
use crate::js::stream::stream_in;
use crate::ops;

/// The options of a scan.
const SCAN: &[&str] = &["axis", "reverse", "inclusive", "stream"];

/// `op(x, {axis?, reverse?, inclusive?, stream?})`: without an axis, over the flattened array;
/// `inclusive` is true unless it says false (MLX's default).
pub(crate) fn scan_op(op: ScanOp, x: &NdArray, opts: &JsValue) -> JsResult<NdArray> {
    let x = x.array()?;
    js((|| -> Result<_> {
        let parsed = Options::parse(op.name(), opts, SCAN)?;
        let axis = parsed.single_axis()?;
        let inclusive = parsed.get("inclusive").is_none() || parsed.flag("inclusive")?;
        let reverse = parsed.flag("reverse")?;
        ops::scan(op, &x, axis, reverse, inclusive, stream_in(&parsed)?)
    })())
    .map(NdArray::new)
}

macro_rules! scan_functions {
    ($($f:ident $js:literal $op:ident),*) => {
        $(
            #[doc = concat!("`", $js, "(x, {axis?, reverse?, inclusive?, stream?})`.")]
            pub fn $f(x: &NdArray, opts: JsValue) -> JsResult<NdArray> {
                scan_op(ScanOp::$op, x, &opts)
            }
        )*
    };
}

with_scans!(scan_functions);
