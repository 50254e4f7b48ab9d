//! Starting the pool's Web Workers: each from `pool_worker.js` as a blob, given the module
//! and its shared memory, and kept for the page's life.

use std::cell::RefCell;

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

/// Each worker's stack (wasm-bindgen's stacks are whole 64 KiB pages).
const STACK_BYTES: u32 = 1 << 20;
/// How long to wait for the workers to say they are ready before giving up on them.
const READY_MS: i32 = 10_000;

thread_local! {
    static WORKERS: RefCell<Vec<web_sys::Worker>> = const { RefCell::new(Vec::new()) };
}

/// Starts `count` workers and waits until each has its instance.
pub async fn start(count: usize) -> Result<(), String> {
    if count == 0 {
        return Ok(());
    }
    let url = script_url().map_err(|e| describe(&e))?;
    let message = js_sys::Array::of3(
        &wasm_bindgen::module(),
        &wasm_bindgen::memory(),
        &STACK_BYTES.into(),
    );
    // One at a time: each waits for the last to have its instance (two instances starting
    // together on the shared memory hung Firefox's start-up now and then).
    for _ in 0..count {
        let worker = web_sys::Worker::new(&url).map_err(|e| describe(&e))?;
        let ready = answered(&worker);
        worker.post_message(&message).map_err(|e| describe(&e))?;
        WORKERS.with(|w| w.borrow_mut().push(worker));
        let race = js_sys::Promise::race(&js_sys::Array::of2(&ready, &timeout()));
        match JsFuture::from(race).await {
            Ok(v) if v.as_bool() == Some(true) => {}
            Ok(_) => return Err(format!("a worker was not ready after {READY_MS} ms")),
            Err(e) => return Err(describe(&e)),
        }
    }
    Ok(())
}

/// The worker script as a blob URL: the package needs no separate file, and a bundler no
/// rule for it.
fn script_url() -> Result<String, JsValue> {
    let parts = js_sys::Array::of1(&include_str!("../pool_worker.js").into());
    let options = web_sys::BlobPropertyBag::new();
    options.set_type("text/javascript");
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options)?;
    web_sys::Url::create_object_url_with_blob(&blob)
}

/// A promise that resolves to `true` when `worker` says it is ready, and rejects with its
/// error.
fn answered(worker: &web_sys::Worker) -> js_sys::Promise {
    js_sys::Promise::new(&mut |resolve, reject| {
        let resolve = Closure::once_into_js(move |_: JsValue| {
            let _ = resolve.call1(&JsValue::NULL, &JsValue::TRUE);
        });
        let reject = Closure::once_into_js(move |e: web_sys::ErrorEvent| {
            let _ = reject.call1(&JsValue::NULL, &e.message().into());
        });
        worker.set_onmessage(Some(resolve.unchecked_ref()));
        worker.set_onerror(Some(reject.unchecked_ref()));
    })
}

/// A promise that resolves to `undefined` after [`READY_MS`] (`setTimeout` of the page or the
/// worker tandem runs in).
fn timeout() -> js_sys::Promise {
    js_sys::Promise::new(&mut |resolve, _| {
        let set_timeout = js_sys::Reflect::get(&js_sys::global(), &"setTimeout".into());
        if let Ok(set_timeout) = set_timeout.and_then(|f| f.dyn_into::<js_sys::Function>()) {
            let _ = set_timeout.call2(&JsValue::NULL, &resolve, &READY_MS.into());
        }
    })
}

fn describe(value: &JsValue) -> String {
    crate::js::error::message_of(value).unwrap_or_else(|| format!("{value:?}"))
}
