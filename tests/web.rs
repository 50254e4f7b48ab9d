//! Browser tests: the JS API in headless Chromium on its WebGPU adapter (SwiftShader here).
//! Run with `cargo xtask test` (or `wasm-pack test --headless --chrome`).
#![cfg(target_arch = "wasm32")]

use js_sys::{Array as JsArray, Float32Array, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

use tandem::js::ndarray::NdArray;
use tandem::js::ops::{add, array};
use tandem::js::runtime::init_runtime;

wasm_bindgen_test_configure!(run_in_browser);

fn floats(values: &[f64]) -> JsValue {
    values
        .iter()
        .map(|&v| JsValue::from_f64(v))
        .collect::<JsArray>()
        .into()
}

fn options(pairs: &[(&str, JsValue)]) -> JsValue {
    let object = js_sys::Object::new();
    for (key, value) in pairs {
        Reflect::set(&object, &(*key).into(), value).unwrap();
    }
    object.into()
}

async fn runtime_info() -> JsValue {
    JsFuture::from(init_runtime(JsValue::UNDEFINED).unwrap())
        .await
        .unwrap()
}

async fn to_vec(a: &NdArray) -> Vec<f32> {
    let typed = JsFuture::from(a.to_array()).await.unwrap();
    typed.dyn_into::<Float32Array>().unwrap().to_vec()
}

fn get(object: &JsValue, key: &str) -> JsValue {
    Reflect::get(object, &key.into()).unwrap()
}

#[wasm_bindgen_test]
async fn init_runtime_reports_the_webgpu_adapter() {
    let info = runtime_info().await;
    assert_eq!(
        get(&info, "gpu"),
        JsValue::TRUE,
        "WebGPU must be available (--enable-unsafe-webgpu)"
    );
    let adapter = get(&info, "adapter");
    let architecture = get(&adapter, "architecture").as_string().unwrap();
    assert_eq!(
        architecture, "swiftshader",
        "headless Chromium here runs SwiftShader"
    );
    assert_eq!(get(&adapter, "isFallbackAdapter"), JsValue::TRUE);
    let limits = get(&info, "limits");
    assert!(
        get(&limits, "maxStorageBufferBindingSize")
            .as_f64()
            .unwrap()
            >= (128 << 20) as f64
    );
    let default = get(&info, "defaultDevice");
    assert!(get(&default, "reason").as_string().unwrap().len() > 10);
}

#[wasm_bindgen_test]
async fn init_runtime_twice_returns_the_same_runtime() {
    let first = runtime_info().await;
    let second = runtime_info().await;
    assert!(js_sys::Object::is(&first, &second), "the same info object");
}

#[wasm_bindgen_test]
async fn add_on_the_gpu_returns_the_sums() {
    runtime_info().await;
    let a = array(floats(&[1.0, 2.0, 3.0]), JsValue::UNDEFINED).unwrap();
    let b = array(floats(&[10.0, 20.0, 30.0]), JsValue::UNDEFINED).unwrap();
    let c = add(&a, &b, options(&[("stream", "gpu".into())])).unwrap();
    assert_eq!(to_vec(&c).await, vec![11.0, 22.0, 33.0]);
    assert!(
        c.array().storage().unwrap().on_gpu(),
        "the add ran on WebGPU"
    );
}

#[wasm_bindgen_test]
async fn add_broadcasts_and_matches_the_cpu() {
    runtime_info().await;
    let column = array(
        floats(&[1.0, 2.0]),
        options(&[("shape", floats(&[2.0, 1.0]))]),
    )
    .unwrap();
    let row = array(floats(&[10.0, 20.0, 30.0]), JsValue::UNDEFINED).unwrap();
    let on_gpu = add(&column, &row, options(&[("stream", "gpu".into())])).unwrap();
    let on_cpu = add(&column, &row, options(&[("stream", "cpu".into())])).unwrap();
    assert_eq!(on_gpu.shape().length(), 2);
    let expected = vec![11.0, 21.0, 31.0, 12.0, 22.0, 32.0];
    assert_eq!(to_vec(&on_gpu).await, expected);
    assert_eq!(to_vec(&on_cpu).await, expected);
}

#[wasm_bindgen_test]
async fn shape_mismatch_is_a_shape_error_and_the_module_keeps_working() {
    runtime_info().await;
    let err = array(
        floats(&[1.0, 2.0, 3.0]),
        options(&[("shape", floats(&[2.0, 2.0]))]),
    )
    .err()
    .expect("a shape of 4 elements for 3 values must throw");
    let err: js_sys::Error = err.dyn_into().expect("a JS Error");
    assert_eq!(String::from(err.name()), "ShapeError");
    assert!(String::from(err.message()).contains("[2, 2]"));

    let a = array(floats(&[1.0, 2.0, 3.0]), JsValue::UNDEFINED).unwrap();
    let b = array(floats(&[10.0, 20.0, 30.0]), JsValue::UNDEFINED).unwrap();
    assert_eq!(
        to_vec(&add(&a, &b, JsValue::UNDEFINED).unwrap()).await,
        vec![11.0, 22.0, 33.0]
    );
}

#[wasm_bindgen_test]
fn broadcast_mismatch_names_the_op_and_shapes() {
    let a = array(floats(&[1.0, 2.0]), JsValue::UNDEFINED).unwrap();
    let b = array(floats(&[1.0, 2.0, 3.0]), JsValue::UNDEFINED).unwrap();
    let err: js_sys::Error = add(&a, &b, JsValue::UNDEFINED)
        .err()
        .unwrap()
        .dyn_into()
        .unwrap();
    assert_eq!(String::from(err.name()), "ShapeError");
    assert_eq!(
        String::from(err.message()),
        "add: shapes [2] and [3] cannot be broadcast together"
    );
}

#[wasm_bindgen_test]
fn ragged_data_and_bad_options_throw_named_errors() {
    let ragged: JsValue = JsArray::of2(&floats(&[1.0, 2.0]), &floats(&[3.0])).into();
    let err: js_sys::Error = array(ragged, JsValue::UNDEFINED)
        .err()
        .unwrap()
        .dyn_into()
        .unwrap();
    assert_eq!(String::from(err.name()), "ShapeError");

    let bad_dtype = options(&[("dtype", "float64".into())]);
    let err: js_sys::Error = array(floats(&[1.0]), bad_dtype)
        .err()
        .unwrap()
        .dyn_into()
        .unwrap();
    assert_eq!(String::from(err.name()), "DTypeError");

    let a = array(floats(&[1.0]), JsValue::UNDEFINED).unwrap();
    let bad_stream = options(&[("stream", "tpu".into())]);
    let err: js_sys::Error = add(&a, &a, bad_stream).err().unwrap().dyn_into().unwrap();
    assert_eq!(String::from(err.name()), "ValueError");
}

#[wasm_bindgen_test]
async fn typed_arrays_keep_their_dtype_and_read_back() {
    runtime_info().await;
    let ints = js_sys::Int32Array::from(&[i32::MAX, -4][..]);
    let a = array(ints.into(), JsValue::UNDEFINED).unwrap();
    assert_eq!(a.dtype(), "int32");
    let one = array(
        js_sys::Int32Array::from(&[1, 1][..]).into(),
        JsValue::UNDEFINED,
    )
    .unwrap();
    let sum = add(&a, &one, options(&[("stream", "gpu".into())])).unwrap();
    let out = JsFuture::from(sum.to_array()).await.unwrap();
    let out: js_sys::Int32Array = out.dyn_into().expect("int32 reads back as Int32Array");
    assert_eq!(out.to_vec(), vec![i32::MIN, -3]);
}

#[wasm_bindgen_test]
async fn tolist_and_item_read_nested_values() {
    runtime_info().await;
    let nested: JsValue = JsArray::of2(&floats(&[1.0, 2.0]), &floats(&[3.0, 4.0])).into();
    let a = array(nested, JsValue::UNDEFINED).unwrap();
    let list = JsFuture::from(a.tolist()).await.unwrap();
    let first_row = JsArray::from(&JsArray::from(&list).get(0));
    assert_eq!(first_row.get(1).as_f64(), Some(2.0));
    let scalar = array(JsValue::from_f64(7.5), JsValue::UNDEFINED).unwrap();
    assert_eq!(
        JsFuture::from(scalar.item()).await.unwrap().as_f64(),
        Some(7.5)
    );
    let err = JsFuture::from(a.item()).await.err().unwrap();
    assert_eq!(
        String::from(err.dyn_into::<js_sys::Error>().unwrap().name()),
        "ValueError"
    );
}
