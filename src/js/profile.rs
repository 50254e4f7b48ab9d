//! `profile(fn)`: runs `fn` and reports when each CPU op and GPU batch ran during it.

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, future_to_promise};

use crate::js::error::to_js;
use crate::js::runtime::current;
use crate::js::set_property as set;
use crate::observe::clock::now_ms;
use crate::observe::profile::{CpuSpan, GpuBatch, Report};
use crate::observe::transfers::Transfer;

/// Calls `fn` (which may return a promise), and resolves to
/// `{value, wallMs, cpu: [{op, shape, stream, startMs, endMs}], gpu: [{submitMs, doneMs, gpuMs,
/// dispatches: [{kernel, op, shape, ms}]}], transfers: [{to, bytes, atMs}]}`. Times are `performance.now()` milliseconds; GPU `ms` come
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
        let report = runtime.finish_profile().await.map_err(to_js)?;
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
    let transfers: js_sys::Array = report.transfers.iter().map(transfer).collect();
    set(&object, "transfers", transfers.into());
    object
}

fn transfer(t: &Transfer) -> JsValue {
    let object = js_sys::Object::new();
    set(&object, "to", t.to.name().into());
    set(&object, "bytes", (t.bytes as f64).into());
    set(&object, "atMs", t.at_ms.into());
    object.into()
}

fn shape(dims: &[usize]) -> JsValue {
    dims.iter()
        .map(|&d| JsValue::from_f64(d as f64))
        .collect::<js_sys::Array>()
        .into()
}

fn cpu_span(span: &CpuSpan) -> JsValue {
    let object = js_sys::Object::new();
    set(&object, "op", span.op.into());
    set(&object, "shape", shape(&span.shape));
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
        .map(|(i, d)| {
            let dispatch = js_sys::Object::new();
            set(&dispatch, "kernel", d.kernel.as_str().into());
            set(&dispatch, "op", d.op.into());
            set(&dispatch, "shape", shape(&d.shape));
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
