//! Device loss in the browser, simulated with `GPUDevice.destroy()`: calls then reject with a
//! `DeviceError`, arrays with a host copy stay readable, and `initRuntime()` gets a new device
//! on which everything works again. A file of its own: it destroys the page's device.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

use tandem::js::functions::{add, array, multiply};
use tandem::js::runtime::init_runtime;

wasm_bindgen_test_configure!(run_in_browser);

#[path = "web/common/mod.rs"]
mod web_common;

use web_common::*;

async fn rejection(promise: js_sys::Promise) -> String {
    describe(&JsFuture::from(promise).await.expect_err("a rejection"))
}

#[wasm_bindgen_test]
async fn after_device_loss_calls_reject_host_copies_survive_and_init_runtime_recovers() {
    let info = runtime_info().await;
    assert_eq!(get(&info, "gpu"), JsValue::TRUE);
    let host = array(floats(&[1.0, 2.0, 3.0]), JsValue::UNDEFINED).unwrap();
    // Read once, so it has a host copy as well as its GPU copy.
    let read = add(js_value(&host), js_value(&host), gpu()).unwrap();
    assert_eq!(to_vec(&read).await, vec![2.0, 4.0, 6.0]);
    // Evaluated on the GPU only.
    let gpu_only = multiply(js_value(&host), 10.into(), gpu()).unwrap();
    JsFuture::from(start_evaluate(&[&gpu_only])).await.unwrap();

    let runtime = tandem::js::runtime::current().await.unwrap();
    runtime.gpu().unwrap().device.destroy();
    drop(runtime);

    let pending = add(js_value(&host), 1.into(), gpu()).unwrap();
    let why = rejection(pending.to_array()).await;
    assert!(
        why.starts_with("DeviceError: ") && why.contains("lost"),
        "{why}"
    );
    let why = rejection(gpu_only.to_array()).await;
    assert!(why.starts_with("DeviceError: "), "{why}");
    assert_eq!(
        to_vec(&read).await,
        vec![2.0, 4.0, 6.0],
        "a host copy stays readable"
    );
    assert_eq!(to_vec(&host).await, vec![1.0, 2.0, 3.0]);

    let info = JsFuture::from(init_runtime(JsValue::UNDEFINED).unwrap())
        .await
        .unwrap();
    assert_eq!(get(&info, "gpu"), JsValue::TRUE, "a new device");
    let again = add(js_value(&read), js_value(&host), gpu()).unwrap();
    assert_eq!(to_vec(&again).await, vec![3.0, 6.0, 9.0]);
    let fresh = multiply(js_value(&host), 10.into(), gpu()).unwrap();
    assert_eq!(to_vec(&fresh).await, vec![10.0, 20.0, 30.0]);
    // What was only on the lost device is gone for good, and says so.
    let why = rejection(gpu_only.to_array()).await;
    assert!(why.starts_with("DeviceError: "), "{why}");
}
