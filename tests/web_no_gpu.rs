//! The runtime without WebGPU. `cargo xtask test` runs this file twice: with the other browser
//! tests (WebGPU on), and in a Chromium started without `--enable-unsafe-webgpu`, built with
//! `TANDEM_EXPECT_NO_WEBGPU=1`. Either way a program gives the same results on both devices,
//! and `initRuntime` says whether the `gpu` device is a GPU.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

use tandem::js::functions::{array, exp, matmul, softmax, sum};
use tandem::js::runtime::init_runtime;

wasm_bindgen_test_configure!(run_in_browser);

#[path = "web/common/mod.rs"]
mod web_common;

use web_common::*;

/// Whether this build runs in a browser started without WebGPU.
fn expect_no_webgpu() -> bool {
    option_env!("TANDEM_EXPECT_NO_WEBGPU").is_some()
}

async fn program(stream: &str) -> Vec<f32> {
    let x = array(
        floats(&[0.5, -1.0, 2.0, 0.25, 3.0, -2.0]),
        options(&[("shape", floats(&[2.0, 3.0]))]),
    )
    .unwrap();
    let w = array(
        floats(&[1.0, 0.0, -1.0, 2.0, 0.5, 1.5]),
        options(&[("shape", floats(&[3.0, 2.0]))]),
    )
    .unwrap();
    let y = matmul(&x, &w, on(stream)).unwrap();
    let e = exp(&y, on(stream)).unwrap();
    let s = softmax(
        &e,
        options(&[("axis", (-1).into()), ("stream", stream.into())]),
    )
    .unwrap();
    let total = sum(&s, on(stream)).unwrap();
    let mut out = to_vec(&s).await;
    out.extend(to_vec(&total).await);
    out
}

#[wasm_bindgen_test]
async fn the_gpu_device_is_the_cpu_without_webgpu_and_results_agree() {
    let info = runtime_info().await;
    let gpu = get(&info, "gpu").as_bool().unwrap();
    assert_eq!(gpu, !expect_no_webgpu(), "RuntimeInfo.gpu");
    if !gpu {
        assert!(get(&info, "adapter").is_null());
        assert!(get(&info, "matmul").is_null());
        let default = get(&info, "defaultDevice");
        assert_eq!(get(&default, "device").as_string().unwrap(), "cpu");
        let reason = get(&default, "reason").as_string().unwrap();
        assert!(reason.contains("no GPU"), "{reason}");
    }
    let (on_cpu, on_gpu) = (program("cpu").await, program("gpu").await);
    assert_eq!(on_cpu.len(), 5);
    for (c, g) in on_cpu.iter().zip(&on_gpu) {
        assert!(
            (c - g).abs() <= 1e-6,
            "cpu {on_cpu:?} against gpu {on_gpu:?}"
        );
    }
    if !gpu {
        assert_eq!(on_cpu, on_gpu, "the same kernels, so the same bits");
    }
}

#[wasm_bindgen_test]
async fn require_gpu_rejects_with_a_device_error_without_webgpu() {
    runtime_info().await;
    let opts = options(&[("requireGpu", true.into())]);
    let outcome = JsFuture::from(init_runtime(opts).unwrap()).await;
    if expect_no_webgpu() {
        let err = outcome.expect_err("requireGpu without WebGPU");
        assert!(
            describe(&err).starts_with("DeviceError: "),
            "{}",
            describe(&err)
        );
    } else {
        let info = outcome.expect("requireGpu with WebGPU");
        assert_eq!(get(&info, "gpu"), JsValue::TRUE);
    }
}

#[wasm_bindgen_test]
async fn the_memory_tools_work_with_or_without_webgpu() {
    let info = runtime_info().await;
    let gpu = get(&info, "gpu").as_bool().unwrap();
    // A raw block on the gpu stream lives where the gpu device's work runs.
    let block = tandem::js::block::caching_allocator_alloc(4096.into(), on("gpu")).unwrap();
    assert_eq!(block.device(), if gpu { "gpu" } else { "cpu" });
    assert_eq!(block.buffer().is_null(), !gpu);
    assert_eq!(tandem::js::block::gpu_device().is_null(), !gpu);
    tandem::js::block::caching_allocator_delete(block.into()).unwrap();
    let text = tandem::js::smi::smi(options(&[
        ("query", "name,utilization.gpu,memory.total".into()),
        ("format", "csv,noheader".into()),
    ]))
    .unwrap()
    .as_string()
    .unwrap();
    let values: Vec<&str> = text.trim_end().split(", ").collect();
    assert_eq!(values.len(), 3, "{text}");
    assert_eq!(values[1] == "[N/A]", !gpu, "{text}");
    assert!(values[2].ends_with(" MiB"), "{text}");
    tandem::js::history::record_memory_history(JsValue::UNDEFINED).unwrap();
    let a = array(floats(&[1.0, 2.0]), JsValue::UNDEFINED).unwrap();
    let events = tandem::js::history::memory_history();
    tandem::js::history::record_memory_history(options(&[("enabled", false.into())])).unwrap();
    assert_eq!(
        events.length(),
        2,
        "segment_alloc and alloc of a host array"
    );
    drop(a);
}

/// Compiled functions that close over an array, called on both devices and then dropped for
/// the garbage collector, free what their traces held, with or without WebGPU.
#[wasm_bindgen_test]
async fn compiled_functions_dropped_for_the_collector_free_their_traces() {
    use tandem::js::functions::{add, multiply};
    use tandem::js::memory::get_active_memory;
    runtime_info().await;
    JsFuture::from(tandem::js::stream::synchronize(JsValue::UNDEFINED).unwrap())
        .await
        .unwrap();
    let before = get_active_memory();
    let mut kept = Vec::new();
    for (i, stream) in ["cpu", "gpu"].iter().cycle().take(10).enumerate() {
        let weight = JsValue::from(array(floats(&[0.5, i as f64]), JsValue::UNDEFINED).unwrap());
        let w = weight.clone();
        let body = move |x: JsValue| -> Result<JsValue, JsValue> {
            let scaled = multiply(x, (i as f64).into(), on(stream))?;
            Ok(add(scaled.into(), w.clone(), on(stream))?.into())
        };
        let f = Closure::wrap(Box::new(body) as Box<dyn Fn(JsValue) -> Result<JsValue, JsValue>>)
            .into_js_value();
        let compiled = PageCompiled::new(f).unwrap();
        let x = JsValue::from(array(floats(&[1.0, 2.0]), JsValue::UNDEFINED).unwrap());
        let out = compiled.call(js_sys::Array::of1(&x)).unwrap();
        let promise: js_sys::Promise = get(&out, "toArray")
            .unchecked_into::<js_sys::Function>()
            .call0(&out)
            .unwrap()
            .unchecked_into();
        let values = js_sys::Float32Array::from(JsFuture::from(promise).await.unwrap()).to_vec();
        assert_eq!(
            values,
            vec![i as f32 + 0.5, 2.0 * i as f32 + i as f32],
            "{stream}"
        );
        for a in [&weight, &x, &out] {
            dispose(a);
        }
        kept.push(compiled);
    }
    let holding = get_active_memory();
    assert!(holding > before, "the traces hold the weights");
    drop(kept);
    collect_garbage().await;
    let after = get_active_memory();
    // Other tests' arrays that the collector finalizes meanwhile may lower it further.
    assert!(
        after <= before,
        "active bytes {before} -> {holding} -> {after}"
    );
}
