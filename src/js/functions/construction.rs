//! `pad`, `tile`, `repeat`, `roll`, `diag` and `diagonal`.

use wasm_bindgen::prelude::*;

use crate::error::{Error, Result};
use crate::js::error::{JsResult, js};
use crate::js::ndarray::NdArray;
use crate::js::options::{Options, count_of, describe, integers_of, trailing_options};
use crate::js::stream::stream_in;
use crate::ops::{self, PadMode};

use super::stream_option;

const PAD: &[&str] = &["mode", "constantValues", "stream"];

/// `padWidth`: a count for every side, a `[before, after]` pair for every axis, or one pair
/// per axis.
fn pad_widths(value: &JsValue, rank: usize) -> Result<Vec<(usize, usize)>> {
    if value.as_f64().is_some() {
        let n = count_of("pad", "padWidth", value)?;
        return Ok(vec![(n, n); rank]);
    }
    let bad = || {
        Error::Value(format!(
            "pad: padWidth must be a count, a [before, after] pair or one pair per axis ({rank}), got {}",
            describe(value)
        ))
    };
    let list = value.dyn_ref::<js_sys::Array>().ok_or_else(bad)?;
    let pair = |v: &JsValue| -> Result<(usize, usize)> {
        let p = integers_of("pad", "padWidth", v)?;
        match p.as_slice() {
            [b, a] if *b >= 0 && *a >= 0 => Ok((*b as usize, *a as usize)),
            _ => Err(bad()),
        }
    };
    if list.length() == 2 && list.get(0).as_f64().is_some() {
        return Ok(vec![pair(value)?; rank]);
    }
    list.iter().map(|v| pair(&v)).collect()
}

/// `pad(x, padWidth, {mode?, constantValues?, stream?})`: `mode` is `"constant"` (0 unless
/// `constantValues` says) or `"edge"`.
pub fn pad(x: &NdArray, pad_width: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let x = x.array()?;
    js((|| {
        let parsed = Options::parse("pad", &opts, PAD)?;
        let mode = match parsed.string("mode")?.as_deref() {
            None | Some("constant") => {
                PadMode::Constant(parsed.number("constantValues")?.unwrap_or(0.0))
            }
            Some("edge") => PadMode::Edge,
            Some(other) => {
                return Err(Error::Value(format!(
                    "pad: opts.mode must be \"constant\" or \"edge\", got \"{other}\""
                )));
            }
        };
        ops::pad(
            &x,
            &pad_widths(&pad_width, x.ndim())?,
            mode,
            stream_in(&parsed)?,
        )
    })())
    .map(NdArray::new)
}

/// A count, or a list of counts.
fn counts(op: &str, what: &str, value: &JsValue) -> Result<Vec<usize>> {
    match value.dyn_ref::<js_sys::Array>() {
        Some(list) => list.iter().map(|v| count_of(op, what, &v)).collect(),
        None => Ok(vec![count_of(op, what, value)?]),
    }
}

/// `tile(x, reps, {stream?})`: `reps` a count or a list.
pub fn tile(x: &NdArray, reps: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let x = x.array()?;
    js((|| {
        ops::tile(
            &x,
            &counts("tile", "reps", &reps)?,
            stream_option("tile", &opts)?,
        )
    })())
    .map(NdArray::new)
}

const AXIS: &[&str] = &["axis", "stream"];

/// `repeat(x, repeats, {axis?, stream?})`.
pub fn repeat(x: &NdArray, repeats: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let x = x.array()?;
    js((|| {
        let repeats = count_of("repeat", "repeats", &repeats)?;
        let parsed = Options::parse("repeat", &opts, AXIS)?;
        ops::repeat(&x, repeats, parsed.single_axis()?, stream_in(&parsed)?)
    })())
    .map(NdArray::new)
}

/// `roll(x, shift, {axis?, stream?})`: `shift` and `axis` a number or a list.
pub fn roll(x: &NdArray, shift: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let x = x.array()?;
    js((|| {
        let list = if shift.as_f64().is_some() {
            js_sys::Array::of1(&shift).into()
        } else {
            shift.clone()
        };
        let shifts: Vec<i64> = integers_of("roll", "shift", &list)?
            .into_iter()
            .map(|s| s as i64)
            .collect();
        let parsed = Options::parse("roll", &opts, AXIS)?;
        ops::roll(&x, &shifts, parsed.axis()?.as_deref(), stream_in(&parsed)?)
    })())
    .map(NdArray::new)
}

/// `diag(x, k?, {stream?})`.
pub fn diag(x: &NdArray, k: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let x = x.array()?;
    js((|| {
        let ([k], opts) = trailing_options("diag", [&k], &opts)?;
        let k = match k {
            None => 0,
            Some(k) => integers_of("diag", "k", &js_sys::Array::of1(k).into())?[0] as i64,
        };
        ops::diag(&x, k, stream_option("diag", opts)?)
    })())
    .map(NdArray::new)
}

const DIAGONAL: &[&str] = &["offset", "axis1", "axis2", "stream"];

/// `diagonal(x, {offset?, axis1?, axis2?, stream?})`: MLX's defaults 0, 0 and 1.
pub fn diagonal(x: &NdArray, opts: JsValue) -> JsResult<NdArray> {
    let x = x.array()?;
    js((|| {
        let parsed = Options::parse("diagonal", &opts, DIAGONAL)?;
        let whole = |key: &'static str, default: i64| -> Result<i64> {
            match parsed.get(key) {
                None => Ok(default),
                Some(v) => {
                    Ok(integers_of("diagonal", key, &js_sys::Array::of1(&v).into())?[0] as i64)
                }
            }
        };
        let (offset, a1, a2) = (whole("offset", 0)?, whole("axis1", 0)?, whole("axis2", 1)?);
        ops::diagonal(&x, offset, a1 as isize, a2 as isize, stream_in(&parsed)?)
    })())
    .map(NdArray::new)
}
