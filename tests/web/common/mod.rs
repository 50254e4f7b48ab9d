//! Helpers shared by the browser tests.
#![allow(dead_code)]

use js_sys::{Array as JsArray, Float32Array, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use tandem::js::functions::array;
use tandem::js::memory::{get_active_memory, memory_stats};
use tandem::js::ndarray::NdArray;
use tandem::js::runtime::init_runtime;
use tandem::js::stream::evaluate;

pub fn floats(values: &[f64]) -> JsValue {
    values
        .iter()
        .map(|&v| JsValue::from_f64(v))
        .collect::<JsArray>()
        .into()
}

pub fn options(pairs: &[(&str, JsValue)]) -> JsValue {
    let object = js_sys::Object::new();
    for (key, value) in pairs {
        Reflect::set(&object, &(*key).into(), value).unwrap();
    }
    object.into()
}

pub async fn runtime_info() -> JsValue {
    JsFuture::from(init_runtime(JsValue::UNDEFINED).unwrap())
        .await
        .unwrap()
}

pub async fn to_vec(a: &NdArray) -> Vec<f32> {
    let typed = JsFuture::from(a.to_array()).await.unwrap();
    typed.dyn_into::<Float32Array>().unwrap().to_vec()
}

pub fn get(object: &JsValue, key: &str) -> JsValue {
    Reflect::get(object, &key.into()).unwrap()
}

/// A JS value for an NDArray, as a page would pass it.
pub fn js_value(a: &NdArray) -> JsValue {
    JsValue::from(a.clone_handle())
}

pub fn gpu() -> JsValue {
    options(&[("stream", "gpu".into())])
}

pub fn cpu() -> JsValue {
    options(&[("stream", "cpu".into())])
}

pub fn error_name(result: Result<NdArray, JsValue>) -> String {
    let err: js_sys::Error = result
        .err()
        .expect("an error")
        .dyn_into()
        .expect("a JS Error");
    String::from(err.name())
}

// Helpers of the concurrency tests, which start calls as a page does.

pub fn stat(key: &str) -> f64 {
    get(&memory_stats(), key)
        .as_f64()
        .unwrap_or_else(|| panic!("memoryStats() has no key {key}"))
}

pub fn float_array(values: &[f32]) -> NdArray {
    let data = Float32Array::from(values);
    array(data.into(), JsValue::UNDEFINED).unwrap()
}

pub fn on(stream: &str) -> JsValue {
    options(&[("stream", stream.into())])
}

pub async fn settle(promise: js_sys::Promise) -> Result<JsValue, JsValue> {
    JsFuture::from(promise).await
}

pub async fn floats_of(promise: js_sys::Promise) -> Vec<f32> {
    let value = settle(promise).await.unwrap();
    value.dyn_into::<Float32Array>().unwrap().to_vec()
}

// Arrays go to the JS functions as extra handles, which are disposed at once: left to the
// garbage collector, they would free memory in the middle of a later program's accounting.

pub fn start_evaluate(arrays: &[&NdArray]) -> js_sys::Promise {
    let handles: Vec<JsValue> = arrays.iter().map(|a| js_value(a)).collect();
    let promise = evaluate(handles.clone()).unwrap();
    handles.iter().for_each(dispose);
    promise
}

pub type BinaryFn = fn(JsValue, JsValue, JsValue) -> Result<NdArray, JsValue>;

pub fn binary(f: BinaryFn, a: &NdArray, b: &NdArray, opts: JsValue) -> NdArray {
    let (a, b) = (js_value(a), js_value(b));
    let result = f(a.clone(), b.clone(), opts).unwrap();
    dispose(&a);
    dispose(&b);
    result
}

pub fn dispose(value: &JsValue) {
    let method: js_sys::Function = js_sys::Reflect::get(value, &"dispose".into())
        .unwrap()
        .unchecked_into();
    method.call0(value).unwrap();
}

pub fn describe(err: &JsValue) -> String {
    match err.dyn_ref::<js_sys::Error>() {
        Some(e) => format!("{}: {}", String::from(e.name()), String::from(e.message())),
        None => format!("{err:?}"),
    }
}

/// Resolves after `ms` milliseconds, as `setTimeout` does.
pub async fn sleep_ms(ms: i32) {
    let make =
        js_sys::Function::new_with_args("ms", "return new Promise(done => setTimeout(done, ms))");
    let promise: js_sys::Promise = make
        .call1(&JsValue::NULL, &ms.into())
        .unwrap()
        .unchecked_into();
    JsFuture::from(promise).await.unwrap();
}

/// Collects garbage (Chromium runs with --js-flags=--expose-gc) and lets the
/// FinalizationRegistry callbacks run, until active memory stops changing.
pub async fn collect_garbage() {
    let gc: js_sys::Function = Reflect::get(&js_sys::global(), &"gc".into())
        .unwrap()
        .dyn_into()
        .expect("Chromium runs with --js-flags=--expose-gc");
    let mut last = f64::NAN;
    for _ in 0..20 {
        gc.call0(&JsValue::NULL).unwrap();
        sleep_ms(20).await;
        if get_active_memory() == last {
            return;
        }
        last = get_active_memory();
    }
}

/// A compiled function as the package's wrapper (`npm/index.js`) makes it: the `Compiled`,
/// held as a JS value as the wrapper holds it (so the collector may finalize it), and the JS
/// function it is given on every call.
#[derive(Clone)]
pub struct PageCompiled {
    f: JsValue,
    compiled: JsValue,
}

impl PageCompiled {
    pub fn new(f: JsValue) -> Result<PageCompiled, JsValue> {
        let compiled = tandem::js::compile::Compiled::new(&f)?.into();
        Ok(PageCompiled { f, compiled })
    }

    /// Calls it with `args`, as `compiled(...args)` does.
    pub fn call(&self, args: JsArray) -> Result<JsValue, JsValue> {
        let call: js_sys::Function = get(&self.compiled, "call").unchecked_into();
        call.call2(&self.compiled, &self.f, &args)
    }

    /// Input shapes traced so far.
    pub fn traces(&self) -> usize {
        get(&self.compiled, "traces")
            .as_f64()
            .expect("traces is a number") as usize
    }

    pub fn dispose(&self) {
        let dispose: js_sys::Function = get(&self.compiled, "dispose").unchecked_into();
        dispose
            .call0(&self.compiled)
            .expect("dispose does not throw");
    }
}

/// The runtime's info, once the page is as a test of exact figures in the shared browser
/// binary (`tests/web/`) needs it: the arrays that earlier tests of the binary left to the
/// garbage collector finalized, the queue idle and the cache empty.
pub async fn settled_runtime_info() -> JsValue {
    let info = runtime_info().await;
    collect_garbage().await;
    JsFuture::from(tandem::js::stream::synchronize(JsValue::UNDEFINED).unwrap())
        .await
        .unwrap();
    tandem::js::torch::empty_cache();
    info
}

/// How far each gauge of `memoryStats` (`active_bytes.all`, …) has its current value from its
/// allocations less its frees. Allocations and frees keep it; only
/// `resetAccumulatedMemoryStats` with memory held changes it (an earlier test of the binary
/// may have), so a test compares it before and after rather than with zero.
pub fn gauge_offsets() -> std::collections::BTreeMap<String, f64> {
    let stats = memory_stats();
    let keys = js_sys::Object::keys(stats.unchecked_ref::<js_sys::Object>());
    let value = |key: &str| get(&stats, key).as_f64().unwrap();
    keys.iter()
        .filter_map(|k| {
            let key = k.as_string()?;
            let prefix = key.strip_suffix(".current")?.to_string();
            let net = value(&format!("{prefix}.allocated")) - value(&format!("{prefix}.freed"));
            Some((prefix, value(&key) - net))
        })
        .collect()
}

/// The page's active blocks by id, each as `device size op stream`, from `memorySnapshot()`.
pub fn active_blocks() -> std::collections::BTreeMap<u64, String> {
    tandem::js::memory::memory_snapshot()
        .iter()
        .filter(|entry| get(entry, "state").as_string().as_deref() == Some("active"))
        .filter_map(|entry| {
            let id = get(&entry, "id").as_f64()? as u64;
            let text = |key: &str| {
                let value = get(&entry, key);
                value.as_string().unwrap_or_else(|| format!("{value:?}"))
            };
            let size = get(&entry, "size").as_f64().unwrap_or(0.0);
            let what = format!(
                "{} {size} bytes, op {}, stream {}",
                text("device"),
                text("op"),
                text("stream")
            );
            Some((id, what))
        })
        .collect()
}

/// Fails unless active memory is back at `start`, naming the blocks alive now that were not
/// in `before` (`active_blocks()` when `start` was read), so that a leak says what leaked.
pub fn assert_active_back(start: f64, before: &std::collections::BTreeMap<u64, String>) {
    let now = stat("active_bytes.all.current");
    if now == start {
        return;
    }
    let alive = active_blocks();
    let new: Vec<String> = alive
        .iter()
        .filter(|(id, _)| !before.contains_key(id))
        .map(|(id, what)| format!("#{id}: {what}"))
        .collect();
    let gone: Vec<&u64> = before.keys().filter(|id| !alive.contains_key(id)).collect();
    panic!(
        "active memory went {start} -> {now} bytes; blocks alive now that were not before: \
         {new:?}; blocks freed since: {gone:?}"
    );
}
