//! `compile` in the browser: a compiled function returns the plain one's bits, traces once per
//! input kind, takes 10,000-op chains on wasm's small stack, refuses what it cannot replay
//! with a `ValueError`, and leaves no memory behind.

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

use tandem::js::compile::Compiled;
use tandem::js::functions::{add, array, exp, multiply, tanh};
use tandem::js::memory::get_active_memory;
use tandem::js::ndarray::NdArray;
use tandem::js::random::random_uniform;
use tandem::js::stream::synchronize;

use crate::common::*;

/// A JS function of one argument, as a page passes it.
fn function(f: impl Fn(JsValue) -> Result<JsValue, JsValue> + 'static) -> JsValue {
    Closure::wrap(Box::new(f) as Box<dyn Fn(JsValue) -> Result<JsValue, JsValue>>).into_js_value()
}

/// A JS function of two arguments.
fn function2(f: impl Fn(JsValue, JsValue) -> Result<JsValue, JsValue> + 'static) -> JsValue {
    Closure::wrap(Box::new(f) as Box<dyn Fn(JsValue, JsValue) -> Result<JsValue, JsValue>>)
        .into_js_value()
}

fn nd(v: &JsValue) -> NdArray {
    NdArray::new(NdArray::from_js("test", v).unwrap())
}

/// `count` exps of `x` on `stream`, then tanh(y * s + 1).
fn chain(x: &JsValue, s: &JsValue, count: usize, stream: &str) -> Result<JsValue, JsValue> {
    let opts = || options(&[("stream", stream.into())]);
    let mut y = nd(x);
    for _ in 0..count {
        y = exp(&y, opts())?;
    }
    let scaled = multiply(js_value(&y), s.clone(), opts())?;
    let shifted = add(js_value(&scaled), 1.0.into(), opts())?;
    Ok(tanh(&shifted, opts())?.into())
}

fn bits(values: &[f32]) -> Vec<u32> {
    values.iter().map(|v| v.to_bits()).collect()
}

fn input(values: &[f64], shape: &[usize]) -> JsValue {
    let shape: Vec<f64> = shape.iter().map(|&d| d as f64).collect();
    js_value(&array(floats(values), options(&[("shape", floats(&shape))])).unwrap())
}

/// Calls the JS object's `dispose()`, as a page does.
fn dispose(v: &JsValue) {
    let method = js_sys::Reflect::get(v, &"dispose".into()).unwrap();
    method
        .dyn_into::<js_sys::Function>()
        .unwrap()
        .call0(v)
        .unwrap();
}

async fn values(v: &JsValue) -> Vec<f32> {
    to_vec(&nd(v)).await
}

#[wasm_bindgen_test]
async fn a_compiled_chain_gives_the_plain_bits_and_traces_once_per_kind() {
    runtime_info().await;
    for stream in ["cpu", "gpu"] {
        let compiled = PageCompiled::new(function2(move |x, s| chain(&x, &s, 20, stream))).unwrap();
        let x = input(&[0.1, -0.5, 0.25, 0.0, 0.3, -1.0, 0.05, 0.2], &[2, 4]);
        let args = |a: &JsValue, s: f64| js_sys::Array::of2(a, &s.into());
        let plain = values(&chain(&x, &0.5.into(), 20, stream).unwrap()).await;
        let first = values(&compiled.call(args(&x, 0.5)).unwrap()).await;
        assert_eq!(bits(&first), bits(&plain), "{stream}");
        let x2 = input(&[0.2, -0.1, 0.0, 0.4, -0.3, 0.1, 0.0, 0.15], &[2, 4]);
        let again = values(&compiled.call(args(&x2, 0.5)).unwrap()).await;
        let plain2 = values(&chain(&x2, &0.5.into(), 20, stream).unwrap()).await;
        assert_eq!(
            bits(&again),
            bits(&plain2),
            "{stream}: a replay for new inputs"
        );
        assert_eq!(compiled.traces(), 1);
        compiled.call(args(&x2, 2.0)).unwrap();
        assert_eq!(compiled.traces(), 2, "a new number is a new trace");
        let other = input(&[0.5; 3], &[3]);
        compiled.call(args(&other, 0.5)).unwrap();
        assert_eq!(compiled.traces(), 3, "a new shape is a new trace");
    }
}

/// Long fused GPU programs of the ops whose WGSL tests NaN (max, min, comparisons, `where`):
/// written with short-circuit operators, eight `maximum`s in one kernel lost SwiftShader's
/// device. Each must give the plain ops' bits.
#[wasm_bindgen_test]
async fn long_gpu_programs_of_nan_tests_compile_and_match() {
    runtime_info().await;
    let program = |x: &JsValue| -> Result<JsValue, JsValue> {
        let s = || gpu();
        let mut y = nd(x);
        for i in 0..16 {
            let hi = tandem::js::functions::maximum(js_value(&y), (i as f64 / 100.0).into(), s())?;
            let lo = tandem::js::functions::minimum(js_value(&hi), 2.0.into(), s())?;
            let big = tandem::js::functions::not_equal(js_value(&lo), 0.5.into(), s())?;
            y = tandem::js::functions::where_(js_value(&big), js_value(&lo), js_value(&hi), s())?;
        }
        Ok(y.into())
    };
    let compiled = PageCompiled::new(function(move |x| program(&x))).unwrap();
    let x = input(&[0.1, -0.5, 0.25, f64::NAN, 0.3, -1.0, 3.0, 0.5], &[8]);
    let got = values(&compiled.call(js_sys::Array::of1(&x)).unwrap()).await;
    let plain = values(&program(&x).unwrap()).await;
    assert_eq!(bits(&got), bits(&plain));
}

#[wasm_bindgen_test]
async fn ten_thousand_ops_compile_and_run_on_both_devices() {
    runtime_info().await;
    for stream in ["cpu", "gpu"] {
        let compiled = PageCompiled::new(function(move |x| {
            let opts = || options(&[("stream", stream.into())]);
            let mut y = nd(&x);
            for i in 0..10_000 {
                let step = if i % 2 == 0 { 1.0 } else { -0.5 };
                y = add(js_value(&y), step.into(), opts())?;
            }
            Ok(y.into())
        }))
        .unwrap();
        let x = input(&[0.0, 1.0, 2.0, 3.0], &[4]);
        let out = compiled.call(js_sys::Array::of1(&x)).unwrap();
        assert_eq!(
            values(&out).await,
            vec![2500.0, 2501.0, 2502.0, 2503.0],
            "{stream}"
        );
    }
}

#[wasm_bindgen_test]
async fn what_a_replay_cannot_repeat_is_a_value_error() {
    runtime_info().await;
    let x = input(&[1.0, 2.0], &[2]);
    let name = |r: Result<JsValue, JsValue>| -> String {
        let err: js_sys::Error = r.expect_err("an error").dyn_into().unwrap();
        format!(
            "{}: {}",
            String::from(err.name()),
            String::from(err.message())
        )
    };
    let random = PageCompiled::new(function(|x| {
        let r = random_uniform(floats(&[2.0]), JsValue::UNDEFINED)?;
        Ok(add(x, js_value(&r), JsValue::UNDEFINED)?.into())
    }))
    .unwrap();
    let err = name(random.call(js_sys::Array::of1(&x)));
    assert!(
        err.starts_with("ValueError") && err.contains("random"),
        "{err}"
    );
    let number = PageCompiled::new(function(|_| Ok(3.0.into()))).unwrap();
    let err = name(number.call(js_sys::Array::of1(&x)));
    assert!(err.contains("must return an NDArray"), "{err}");
    let err = name(number.call(js_sys::Array::of1(&"x".into())));
    assert!(err.contains("argument 0 is"), "{err}");
    let err = Compiled::new(&3.0.into()).err().unwrap();
    let err: js_sys::Error = err.dyn_into().unwrap();
    assert!(String::from(err.message()).contains("expected a function"));
    let throws = PageCompiled::new(function(|_| Err(js_sys::Error::new("inside").into()))).unwrap();
    assert!(name(throws.call(js_sys::Array::of1(&x))).contains("inside"));
}

async fn settle() {
    JsFuture::from(synchronize(JsValue::UNDEFINED).unwrap())
        .await
        .unwrap();
}

/// Active blocks that a compiled function's trace holds, by `memorySnapshot`'s `owner`.
fn held_by_compile() -> usize {
    tandem::js::memory::memory_snapshot()
        .iter()
        .filter(|b| {
            js_sys::Reflect::get(b, &"owner".into())
                .unwrap()
                .as_string()
                == Some("compile".into())
        })
        .count()
}

#[wasm_bindgen_test]
async fn compiled_calls_leave_no_memory_behind() {
    runtime_info().await;
    settle().await;
    let before = get_active_memory();
    {
        let compiled = PageCompiled::new(function2(|x, s| chain(&x, &s, 5, "gpu"))).unwrap();
        for round in 0..3 {
            let x = input(&[0.1 * round as f64; 8], &[8]);
            let out = compiled.call(js_sys::Array::of2(&x, &0.5.into())).unwrap();
            values(&out).await;
            dispose(&x);
            dispose(&out);
        }
    }
    settle().await;
    // Other tests' arrays that the garbage collector finalizes meanwhile may lower it; a
    // leak of this test's arrays or of a tape's would raise it.
    let after = get_active_memory();
    assert!(after <= before, "active bytes {before} -> {after}");
}

/// A trace keeps the arrays its function closed over (shown as held by `compile`) and none
/// for its numbers; `dispose()` frees them at once, and a later call is a
/// `DisposedArrayError`.
#[wasm_bindgen_test]
async fn dispose_frees_what_the_traces_hold_and_later_calls_are_refused() {
    runtime_info().await;
    for stream in ["cpu", "gpu"] {
        settle().await;
        let before = get_active_memory();
        let held_before = held_by_compile();
        let weight = input(&[0.5, 0.25], &[2]);
        let w = weight.clone();
        let compiled = PageCompiled::new(function(move |x| {
            let opts = || options(&[("stream", stream.into())]);
            let scaled = multiply(x, 3.0.into(), opts())?;
            Ok(add(js_value(&scaled), w.clone(), opts())?.into())
        }))
        .unwrap();
        for shape in [[2usize].as_slice(), &[3, 2]] {
            let x = input(&vec![1.0; shape.iter().product()], shape);
            let out = compiled.call(js_sys::Array::of1(&x)).unwrap();
            values(&out).await;
            dispose(&out);
            dispose(&x);
        }
        assert_eq!(compiled.traces(), 2);
        dispose(&weight);
        settle().await;
        let held = held_by_compile() - held_before;
        assert!(
            held >= 1,
            "{stream}: the weight's blocks are shown as held by compile"
        );
        let holding = get_active_memory();
        compiled.dispose();
        settle().await;
        // Other tests' arrays that the garbage collector finalizes meanwhile may lower it, so
        // the weight's bytes are seen in what dispose() frees, not against `before` (a
        // finalizer between `before` and `holding` once hid them there).
        let after = get_active_memory();
        assert!(
            after < holding,
            "{stream}: dispose() frees what the traces held: {holding} -> {after}"
        );
        assert!(
            after <= before,
            "{stream}: active bytes {before} -> {after}"
        );
        assert_eq!(held_by_compile(), held_before, "{stream}");
        let x = input(&[1.0, 2.0], &[2]);
        let err: js_sys::Error = compiled
            .call(js_sys::Array::of1(&x))
            .expect_err("a disposed function refuses calls")
            .dyn_into()
            .unwrap();
        assert_eq!(String::from(err.name()), "DisposedArrayError");
        assert!(String::from(err.message()).contains("compile"));
        compiled.dispose();
        dispose(&x);
    }
}
