//! Weights files and the packed dtypes from JavaScript: `load` from every kind of source,
//! progress, placement on the GPU, typed errors that leave nothing allocated, `save` and
//! `saveSafetensors` round trips, and the typed arrays the packed dtypes come from and go to.

use js_sys::{Array as JsArray, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

use crate::common::{collect_garbage, dispose, get, options, runtime_info};
use tandem::js::functions::array;
use tandem::js::memory::{get_active_memory, memory_stats, set_memory_limit};
use tandem::js::weights::{load, save, save_safetensors};

const NUMPY: &[u8] = include_bytes!("../weights/python/numpy.safetensors");
const MLX: &[u8] = include_bytes!("../weights/python/mlx.safetensors");
const F16_NPY: &[u8] = include_bytes!("../weights/python/f16.npy");
const TRUNCATED: &[u8] = include_bytes!("../weights/python/truncated.safetensors");
const UNKNOWN: &[u8] = include_bytes!("../weights/python/unknown_dtype.safetensors");

/// A JS function of `args` with `body`, as a page would write it.
fn js(args: &str, body: &str) -> js_sys::Function {
    js_sys::Function::new_with_args(args, body)
}

fn bytes(data: &[u8]) -> JsValue {
    Uint8Array::from(data).into()
}

async fn settle(promise: js_sys::Promise) -> Result<JsValue, JsValue> {
    JsFuture::from(promise).await
}

fn error_of(result: Result<JsValue, JsValue>) -> (String, String) {
    let err: js_sys::Error = result.expect_err("an error").dyn_into().expect("an Error");
    (String::from(err.name()), String::from(err.message()))
}

/// Every source kind a page has for the same bytes.
fn sources(data: &[u8]) -> Vec<(&'static str, JsValue)> {
    let u8s = Uint8Array::from(data);
    let make = js(
        "u8",
        "const blob = new Blob([u8]); return [u8.buffer.slice(0), blob, new Response(u8.slice()), \
         URL.createObjectURL(blob)];",
    );
    let made: JsArray = make.call1(&JsValue::NULL, &u8s).unwrap().unchecked_into();
    vec![
        ("Uint8Array", u8s.into()),
        ("ArrayBuffer", made.get(0)),
        ("Blob", made.get(1)),
        ("Response", made.get(2)),
        ("URL", made.get(3)),
    ]
}

/// Disposes every array of a loaded record.
fn dispose_record(record: &JsValue) {
    for value in js_sys::Object::values(record.unchecked_ref::<js_sys::Object>()).iter() {
        dispose(&value);
    }
}

#[wasm_bindgen_test]
async fn load_reads_every_kind_of_source_with_the_same_bits() {
    runtime_info().await;
    collect_garbage().await;
    let before = get_active_memory();
    for (kind, source) in sources(NUMPY) {
        let record = settle(load(source, JsValue::UNDEFINED)).await.unwrap();
        let keys: Vec<String> = js_sys::Object::keys(record.unchecked_ref::<js_sys::Object>())
            .iter()
            .map(|k| k.as_string().unwrap())
            .collect();
        assert_eq!(keys.len(), 10, "{kind}: {keys:?}");
        // float16 reads back as the engine's Float16Array, with its bits.
        let f16 = get(&record, "f16");
        let values = settle(call(&f16, "toArray")).await.unwrap();
        let ctor = get(&get(&values, "constructor"), "name")
            .as_string()
            .unwrap();
        assert_eq!(ctor, "Float16Array", "{kind}");
        let bits = js(
            "a",
            "return Array.from(new Uint16Array(a.buffer, a.byteOffset, a.length));",
        )
        .call1(&JsValue::NULL, &values)
        .unwrap();
        let bits: Vec<f64> = JsArray::from(&bits)
            .iter()
            .map(|b| b.as_f64().unwrap())
            .collect();
        assert_eq!(
            bits,
            [32256.0, 31744.0, 64512.0, 32768.0, 1.0, 13653.0],
            "{kind}"
        );
        assert_eq!(call_sync(&get(&record, "scalar"), "dtype"), "float32");
        dispose_record(&record);
    }
    // A .npy file is one array, not a record.
    let one = settle(load(bytes(F16_NPY), JsValue::UNDEFINED))
        .await
        .unwrap();
    assert_eq!(call_sync(&one, "dtype"), "float16");
    dispose(&one);
    assert_eq!(get_active_memory(), before, "every loaded array was freed");
}

fn call(object: &JsValue, method: &str) -> js_sys::Promise {
    let f: js_sys::Function = get(object, method).unchecked_into();
    f.call0(object).unwrap().unchecked_into()
}

#[wasm_bindgen_test]
async fn load_reports_progress_and_puts_tensors_on_the_gpu() {
    runtime_info().await;
    let calls = JsArray::new();
    let record_call = js(
        "calls",
        "return (read, total) => calls.push([read, total]);",
    )
    .call1(&JsValue::NULL, &calls)
    .unwrap();
    let blob = sources(MLX).remove(2).1;
    let gpu_before = get(&memory_stats(), "active_bytes.gpu.current")
        .as_f64()
        .unwrap();
    let opts = options(&[("stream", "gpu".into()), ("onProgress", record_call)]);
    let record = settle(load(blob, opts)).await.unwrap();
    let last: JsArray = calls.get(calls.length() - 1).unchecked_into();
    assert_eq!(
        last.get(0),
        last.get(1),
        "the last call has read the whole file"
    );
    assert_eq!(last.get(1).as_f64(), Some(MLX.len() as f64));
    let gpu_after = get(&memory_stats(), "active_bytes.gpu.current")
        .as_f64()
        .unwrap();
    assert!(gpu_after > gpu_before, "the tensors are on the GPU");
    let bf16 = get(&record, "bf16");
    assert_eq!(call_sync(&bf16, "dtype"), "bfloat16");
    let values = settle(call(&bf16, "toArray")).await.unwrap();
    assert!(
        values.is_instance_of::<js_sys::Float32Array>(),
        "bfloat16 reads as Float32Array"
    );
    dispose_record(&record);
}

fn call_sync(object: &JsValue, getter: &str) -> String {
    get(object, getter).as_string().unwrap_or_default()
}

#[wasm_bindgen_test]
async fn load_errors_are_typed_and_leave_nothing_allocated() {
    runtime_info().await;
    collect_garbage().await;
    let before = get_active_memory();
    let cases: Vec<(JsValue, JsValue, &str, &str)> = vec![
        (
            bytes(NUMPY),
            options(&[("strem", "gpu".into())]),
            "ValueError",
            "strem",
        ),
        (
            bytes(NUMPY),
            options(&[("dtype", "int8".into())]),
            "DTypeError",
            "float",
        ),
        (
            bytes(NUMPY),
            options(&[("onProgress", 3.into())]),
            "ValueError",
            "onProgress",
        ),
        (
            JsValue::from(3),
            JsValue::UNDEFINED,
            "ValueError",
            "URL string",
        ),
        (bytes(TRUNCATED), JsValue::UNDEFINED, "ValueError", "723"),
        (bytes(UNKNOWN), JsValue::UNDEFINED, "DTypeError", "F64"),
        (
            bytes(b"hello, world"),
            JsValue::UNDEFINED,
            "ValueError",
            "not a safetensors",
        ),
        (
            "./no-such-file.safetensors".into(),
            JsValue::UNDEFINED,
            "ValueError",
            "404",
        ),
    ];
    for (source, opts, kind, mention) in cases {
        let (name, message) = error_of(settle(load(source, opts)).await);
        assert_eq!(name, kind, "{message}");
        assert!(message.contains(mention), "{message}");
    }
    // A file past the memory limit fails at its header, before its data is read.
    set_memory_limit(before + 64.0).unwrap();
    let (name, message) = error_of(settle(load(bytes(NUMPY), JsValue::UNDEFINED)).await);
    set_memory_limit(f64::INFINITY).unwrap();
    assert_eq!(name, "MemoryLimitError", "{message}");
    assert_eq!(
        get_active_memory(),
        before,
        "a failed load allocates nothing"
    );
}

#[wasm_bindgen_test]
async fn save_and_save_safetensors_round_trip_every_packed_dtype() {
    runtime_info().await;
    collect_garbage().await;
    let before = get_active_memory();
    let values = [0.5, -2.25, 100.0, 0.0];
    let make = |dtype: &str| {
        let data: JsValue = values
            .iter()
            .map(|&v| JsValue::from_f64(v))
            .collect::<JsArray>()
            .into();
        array(data, options(&[("dtype", dtype.into())])).unwrap()
    };
    let dtypes = ["float16", "bfloat16", "int8", "uint8", "float32", "bool"];
    let record = js_sys::Object::new();
    let mut made = Vec::new();
    for dtype in dtypes {
        let a = make(dtype);
        let value = JsValue::from(a);
        js_sys::Reflect::set(&record, &dtype.into(), &value).unwrap();
        made.push(value);
    }
    let meta = options(&[("written_by", "a test".into())]);
    let file = settle(save_safetensors(record.clone().into(), meta))
        .await
        .unwrap();
    let back = settle(load(file.clone(), JsValue::UNDEFINED))
        .await
        .unwrap();
    for (dtype, original) in dtypes.iter().zip(&made) {
        let a = settle(call(original, "tolist")).await.unwrap();
        let loaded = get(&back, dtype);
        assert_eq!(call_sync(&loaded, "dtype"), *dtype);
        let b = settle(call(&loaded, "tolist")).await.unwrap();
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{dtype}");
        // And each as a .npy file.
        let npy = settle(save(original.clone())).await.unwrap();
        let one = settle(load(npy, JsValue::UNDEFINED)).await.unwrap();
        let c = settle(call(&one, "tolist")).await.unwrap();
        assert_eq!(format!("{a:?}"), format!("{c:?}"), "{dtype} .npy");
        dispose(&one);
    }
    let bad = options(&[("n", 3.into())]);
    let (name, message) = error_of(settle(save_safetensors(record.into(), bad)).await);
    assert_eq!(name, "ValueError", "{message}");
    assert!(message.contains("\"n\""), "{message}");
    dispose_record(&back);
    made.iter().for_each(dispose);
    assert_eq!(get_active_memory(), before);
}

#[wasm_bindgen_test]
async fn packed_dtypes_come_from_and_go_to_typed_arrays() {
    runtime_info().await;
    let i8s: JsValue = js_sys::Int8Array::from(&[-128i8, -1, 0, 127][..]).into();
    let a = array(i8s, JsValue::UNDEFINED).unwrap();
    assert_eq!(a.dtype().unwrap(), "int8");
    assert_eq!(a.nbytes().unwrap(), 4.0);
    let back = settle(a.to_array()).await.unwrap();
    assert!(back.is_instance_of::<js_sys::Int8Array>());
    let u8s: JsValue = Uint8Array::from(&[1u8, 255][..]).into();
    let b = array(u8s, JsValue::UNDEFINED).unwrap();
    assert_eq!(b.dtype().unwrap(), "uint8");
    let halves = js("", "return new Float16Array([1.5, 65504, -0.0009765625]);")
        .call0(&JsValue::NULL)
        .unwrap();
    let h = array(halves, JsValue::UNDEFINED).unwrap();
    assert_eq!(h.dtype().unwrap(), "float16");
    assert_eq!(h.nbytes().unwrap(), 6.0);
    let list = settle(h.tolist()).await.unwrap();
    assert_eq!(format!("{list:?}"), "JsValue([1.5, 65504, -0.0009765625])");
    // Numbers round once to the dtype: 0.1 in bfloat16 is 0.10009765625.
    let one = array(0.1.into(), options(&[("dtype", "bfloat16".into())])).unwrap();
    assert_eq!(
        settle(one.item()).await.unwrap().as_f64(),
        Some(0.10009765625)
    );
}
