//! `randomSeed`, `randomUniform` and `randomNormal`, and the page's random state: a seed and a
//! count of calls, from which each call derives its own Philox key. The same seed replays the
//! same arrays, on either device.

use std::cell::Cell;

use wasm_bindgen::prelude::*;

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::js::error::{JsResult, js};
use crate::js::ndarray::NdArray;
use crate::js::options::{Options, shape_of};
use crate::js::stream::stream_in;
use crate::ops;
use crate::stream::Stream;

thread_local! {
    /// The seed (from the clock until `randomSeed` is called) and the calls made under it.
    static STATE: Cell<Option<(u64, u32)>> = const { Cell::new(None) };
}

/// Seeds the generator: later random arrays are a pure function of `seed` and their order.
#[wasm_bindgen(js_name = randomSeed)]
pub fn random_seed(seed: f64) -> JsResult<()> {
    if !(seed.is_finite() && seed >= 0.0 && seed.fract() == 0.0) {
        return js(Err(Error::Value(format!(
            "randomSeed: the seed must be a non-negative integer, got {seed}"
        ))));
    }
    STATE.with(|s| s.set(Some((seed as u64, 0))));
    Ok(())
}

/// The key for the next call: `opts.key` (a number) if given, else the next one of the seed.
fn next_key(opts: &Options, op: &str) -> Result<[u32; 2]> {
    if let Some(key) = opts.get("key") {
        let k = key
            .as_f64()
            .filter(|k| k.is_finite() && *k >= 0.0 && k.fract() == 0.0)
            .ok_or_else(|| {
                Error::Value(format!("{op}: opts.key must be a non-negative integer"))
            })?;
        return Ok(ops::random::key_from_seed(k as u64, 0));
    }
    Ok(STATE.with(|s| {
        let (seed, calls) = s.get().unwrap_or_else(|| (js_sys::Date::now() as u64, 0));
        s.set(Some((seed, calls.wrapping_add(1))));
        ops::random::key_from_seed(seed, calls)
    }))
}

fn param(opts: &Options, key: &'static str, default: f32) -> Result<f32> {
    Ok(opts.number(key)?.map_or(default, |x| x as f32))
}

struct Request {
    shape: Vec<usize>,
    key: [u32; 2],
    device: Stream,
    dtype: DType,
    a: f32,
    b: f32,
}

fn request(
    op: &'static str,
    shape: &JsValue,
    opts: &JsValue,
    names: [(&'static str, f32); 2],
) -> Result<Request> {
    let shape = shape_of(op, "the shape", shape)?;
    let keys = [names[0].0, names[1].0, "dtype", "key", "stream"];
    let opts = Options::parse(op, opts, &keys)?;
    let dtype = opts.dtype()?.unwrap_or(DType::Float32);
    if !dtype.is_float() {
        return Err(Error::DType(format!(
            "{op}: only float types (float32, float16, bfloat16) are supported, got {}",
            dtype.name()
        )));
    }
    Ok(Request {
        shape,
        key: next_key(&opts, op)?,
        device: stream_in(&opts)?,
        dtype,
        a: param(&opts, names[0].0, names[0].1)?,
        b: param(&opts, names[1].0, names[1].1)?,
    })
}

/// The float32 draws rounded once to the requested dtype: the same key gives the same
/// values in every float type, to its precision.
fn in_dtype(x: crate::array::Array, r: &Request) -> crate::array::Array {
    if r.dtype == DType::Float32 {
        return x;
    }
    ops::astype(&x, r.dtype, r.device)
}

/// `randomUniform(shape, {low?, high?, dtype?, key?, stream?})`: floats in [low, high),
/// [0, 1) by default; float32 unless `dtype` names another float type.
#[wasm_bindgen(js_name = randomUniform)]
pub fn random_uniform(shape: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let r = js(request(
        "randomUniform",
        &shape,
        &opts,
        [("low", 0.0), ("high", 1.0)],
    ))?;
    let x = js(ops::random::uniform(&r.shape, r.key, r.a, r.b, r.device))?;
    Ok(NdArray::new(in_dtype(x, &r)))
}

/// `randomNormal(shape, {loc?, scale?, dtype?, key?, stream?})`: standard normal by default;
/// float32 unless `dtype` names another float type.
#[wasm_bindgen(js_name = randomNormal)]
pub fn random_normal(shape: JsValue, opts: JsValue) -> JsResult<NdArray> {
    let r = js(request(
        "randomNormal",
        &shape,
        &opts,
        [("loc", 0.0), ("scale", 1.0)],
    ))?;
    let x = js(ops::random::normal(&r.shape, r.key, r.a, r.b, r.device))?;
    Ok(NdArray::new(in_dtype(x, &r)))
}
