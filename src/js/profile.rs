//! `profile(fn)`: runs `fn` and reports when each CPU op and GPU batch ran during it.

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, future_to_promise};

use crate::clock::now_ms;
use crate::js::error::to_js;
use crate::js::runtime::current;
use crate::js::set_property as set;
use crate::profile::{CpuSpan, GpuBatch, Report};

/// Calls `fn` (which may return a promise), and resolves to
/// `{value, wallMs, cpu: [{op, stream, startMs, endMs}], gpu: [{submitMs, doneMs, gpuMs,
/// dispatches: [{kernel, ms}]}]}`. Times are `performance.now()` milliseconds; GPU `ms` come
/// from timestamp queries and are `null` where the adapter has no `timestamp-query`. It
/// records every evaluation that runs meanwhile, including ones `fn` did not start.
#[wasm_bindgen]
pub fn profile(
    #[wasm_bindgen(unchecked_param_type = "() => unknown")] f: js_sys::Function,
) -> js_sys::Promise {
    future_to_promise(async move {
        let runtime = current().await.map_err(to_js)?;
        runtime.profiler.start();
        let start = now_ms();
        let value = match f.call0(&JsValue::UNDEFINED) {
            Ok(value) => JsFuture::from(js_sys::Promise::resolve(&value)).await,
            Err(err) => Err(err),
        };
        let wall_ms = now_ms() - start;
        // Stop recording whether or not `fn` threw.
        let report = runtime
            .profiler
            .finish(runtime.gpu())
            .await
            .map_err(to_js)?;
        let object = report_to_js(&report);
        set(&object, "value", value?);
        set(&object, "wallMs", wall_ms.into());
        Ok(object.into())
    })
}

fn report_to_js(report: &Report) -> js_sys::Object {
    let object = js_sys::Object::new();
    let cpu: js_sys::Array = report.cpu.iter().map(cpu_span).collect();
    let gpu: js_sys::Array = report.gpu.iter().map(gpu_batch).collect();
    set(&object, "cpu", cpu.into());
    set(&object, "gpu", gpu.into());
    object
}

fn cpu_span(span: &CpuSpan) -> JsValue {
    let object = js_sys::Object::new();
    set(&object, "op", span.op.into());
    set(&object, "stream", span.stream.index.into());
    set(&object, "startMs", span.start_ms.into());
    set(&object, "endMs", span.end_ms.into());
    object.into()
}

fn gpu_batch(batch: &GpuBatch) -> JsValue {
    let object = js_sys::Object::new();
    set(&object, "submitMs", batch.submit_ms.into());
    set(&object, "doneMs", batch.done_ms.into());
    set(&object, "gpuMs", optional(batch.gpu_span_ms));
    let dispatches: js_sys::Array = batch
        .dispatches
        .iter()
        .enumerate()
        .map(|(i, kernel)| {
            let dispatch = js_sys::Object::new();
            set(&dispatch, "kernel", kernel.as_str().into());
            let ms = batch
                .dispatch_ms
                .as_ref()
                .and_then(|times| times.get(i).copied());
            set(&dispatch, "ms", optional(ms));
            JsValue::from(dispatch)
        })
        .collect();
    set(&object, "dispatches", dispatches.into());
    object.into()
}

fn optional(value: Option<f64>) -> JsValue {
    value.map_or(JsValue::NULL, JsValue::from_f64)
}
