//! Browser tests of bad input, as a page would pass it: every class of mistake gets the typed
//! error of the API with a message that names the problem, and the module keeps working.

use js_sys::{Float64Array, Int32Array, Uint32Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

use tandem::js::functions::{
    add, arange, array, broadcast_to, clip, eye, full, linspace, reshape, slice, softmax, sum,
    transpose, where_, zeros,
};
use tandem::js::ndarray::NdArray;
use tandem::js::random::random_uniform;

use crate::common::*;

/// The error's `name` and message, after checking that it is a JS `Error`.
fn failure(result: Result<NdArray, JsValue>) -> (String, String) {
    let err: js_sys::Error = result
        .err()
        .expect("an error")
        .dyn_into()
        .expect("a JS Error");
    (String::from(err.name()), String::from(err.message()))
}

fn assert_fails(result: Result<NdArray, JsValue>, name: &str, words: &[&str]) {
    let (got, message) = failure(result);
    assert_eq!(got, name, "{message}");
    for word in words {
        assert!(
            message.contains(word),
            "{message:?} should mention {word:?}"
        );
    }
}

fn numbers(values: &[f64]) -> JsValue {
    floats(values)
}

fn shape(dims: &[f64]) -> JsValue {
    floats(dims)
}

/// A small float32 matrix [[0, 1, 2], [3, 4, 5]].
fn matrix() -> NdArray {
    array(
        numbers(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]),
        options(&[("shape", shape(&[2.0, 3.0]))]),
    )
    .unwrap()
}

async fn shape_of(a: &NdArray) -> Vec<f64> {
    let dims: js_sys::Array = a.shape().unwrap();
    dims.iter().map(|d| d.as_f64().unwrap()).collect()
}

/// The module still computes after the errors.
async fn still_works() {
    let x = array(numbers(&[1.0, 2.0]), JsValue::UNDEFINED).unwrap();
    let a = add(js_value(&x), 1.into(), gpu()).unwrap();
    assert_eq!(to_vec(&a).await, vec![2.0, 3.0]);
}

#[wasm_bindgen_test]
async fn an_unknown_option_key_names_the_key_and_the_valid_ones() {
    runtime_info().await;
    let x = matrix();
    let typo = options(&[("axes", 1.into())]);
    assert_fails(
        sum(&x, typo),
        "ValueError",
        &["sum", "\"axes\"", "axis, keepdims, stream"],
    );
    let typo = options(&[("dtyp", "int32".into())]);
    assert_fails(
        zeros(shape(&[2.0]), typo),
        "ValueError",
        &["zeros", "\"dtyp\""],
    );
    let typo = options(&[("stream", "gpu".into()), ("keepdim", true.into())]);
    assert_fails(
        softmax(&x, typo),
        "ValueError",
        &["\"keepdim\"", "axis, stream"],
    );
    let typo = options(&[("lo", 0.into())]);
    assert_fails(
        random_uniform(shape(&[2.0]), typo),
        "ValueError",
        &["\"lo\"", "low, high"],
    );
    // `array` takes no stream, and says why.
    let stream = options(&[("stream", "gpu".into())]);
    assert_fails(
        array(numbers(&[1.0]), stream),
        "ValueError",
        &["\"stream\"", "no fixed place"],
    );
    still_works().await;
}

#[wasm_bindgen_test]
async fn an_ndarray_or_a_number_where_the_options_go_is_rejected() {
    runtime_info().await;
    let x = matrix();
    assert_fails(
        sum(&x, js_value(&x)),
        "ValueError",
        &["sum", "plain object", "an NDArray"],
    );
    assert_fails(sum(&x, 1.into()), "ValueError", &["the number 1"]);
    assert_fails(sum(&x, numbers(&[0.0])), "ValueError", &["an array"]);
    still_works().await;
}

#[wasm_bindgen_test]
async fn a_stream_naming_no_device_is_rejected_by_every_kind_of_op() {
    runtime_info().await;
    let tpu = || options(&[("stream", "tpu".into())]);
    let x = matrix();
    let results = [
        zeros(shape(&[2.0]), tpu()),
        full(shape(&[2.0]), 1.into(), tpu()),
        arange(3.into(), tpu(), JsValue::UNDEFINED, JsValue::UNDEFINED),
        linspace(0.into(), 1.into(), 3.into(), tpu()),
        eye(2.into(), tpu()),
        random_uniform(shape(&[2.0]), tpu()),
        sum(&x, tpu()),
        transpose(&x, tpu(), JsValue::UNDEFINED),
        add(js_value(&x), 1.into(), tpu()),
    ];
    for result in results {
        assert_fails(result, "ValueError", &["tpu"]);
    }
    let fake = options(&[("device", "gpu".into()), ("index", (-1).into())]);
    assert_fails(
        sum(&x, options(&[("stream", fake)])),
        "ValueError",
        &["opts.stream.index", "the number -1"],
    );
    assert_fails(
        sum(&x, options(&[("stream", 5.into())])),
        "ValueError",
        &["opts.stream", "the number 5"],
    );
    still_works().await;
}

#[wasm_bindgen_test]
async fn the_options_object_may_stand_in_for_any_omitted_positional() {
    runtime_info().await;
    let x = matrix();
    let t = transpose(&x, cpu(), JsValue::UNDEFINED).unwrap();
    assert_eq!(t.array().unwrap().device(), tandem::Device::Cpu);
    assert_eq!(shape_of(&t).await, vec![3.0, 2.0]);
    assert_eq!(to_vec(&t).await, vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    let s = slice(
        &x,
        numbers(&[0.0, 1.0]),
        numbers(&[2.0, 3.0]),
        gpu(),
        JsValue::UNDEFINED,
    )
    .unwrap();
    assert_eq!(s.array().unwrap().device(), tandem::Device::Gpu);
    assert_eq!(to_vec(&s).await, vec![1.0, 2.0, 4.0, 5.0]);
    let ints = options(&[("dtype", "int32".into())]);
    let r = arange(4.into(), ints, JsValue::UNDEFINED, JsValue::UNDEFINED).unwrap();
    assert_eq!(r.dtype().unwrap(), "int32");
    assert_eq!(shape_of(&r).await, vec![4.0]);
    let r = arange(1.into(), 7.into(), 2.into(), cpu()).unwrap();
    assert_eq!(shape_of(&r).await, vec![3.0]);
    // Positionals after the options object are a mistake, not ignored.
    assert_fails(
        transpose(&x, cpu(), numbers(&[1.0, 0.0])),
        "ValueError",
        &["must be the last argument"],
    );
    assert_fails(
        arange(4.into(), cpu(), 2.into(), JsValue::UNDEFINED),
        "ValueError",
        &["must be the last argument"],
    );
}

#[wasm_bindgen_test]
async fn integers_from_js_numbers_are_exact() {
    runtime_info().await;
    let values = [
        16_777_217.0,
        2_147_483_647.0,
        -2_147_483_648.0,
        -16_777_217.0,
    ];
    let ints = array(numbers(&values), options(&[("dtype", "int32".into())])).unwrap();
    let got = JsFuture::from(ints.to_array()).await.unwrap();
    let got: Int32Array = got.dyn_into().unwrap();
    assert_eq!(
        got.to_vec(),
        vec![16_777_217, 2_147_483_647, -2_147_483_648, -16_777_217]
    );
    let big = [4_294_967_295.0, 16_777_217.0];
    let uints = array(numbers(&big), options(&[("dtype", "uint32".into())])).unwrap();
    let got: Uint32Array = JsFuture::from(uints.to_array())
        .await
        .unwrap()
        .dyn_into()
        .unwrap();
    assert_eq!(got.to_vec(), vec![4_294_967_295, 16_777_217]);
    let typed = Float64Array::from(&[16_777_217.0, -3.0][..]);
    let ints = array(typed.into(), options(&[("dtype", "int32".into())])).unwrap();
    let got: Int32Array = JsFuture::from(ints.to_array())
        .await
        .unwrap()
        .dyn_into()
        .unwrap();
    assert_eq!(got.to_vec(), vec![16_777_217, -3]);
    // A number operand next to an int32 array is exact too, on the GPU.
    let sum = add(js_value(&ints), 1.into(), gpu()).unwrap();
    let got: Int32Array = JsFuture::from(sum.to_array())
        .await
        .unwrap()
        .dyn_into()
        .unwrap();
    assert_eq!(got.to_vec(), vec![16_777_218, -2]);
}

#[wasm_bindgen_test]
async fn sizes_past_what_memory_can_address_are_memory_limit_errors() {
    runtime_info().await;
    for stream in [cpu(), gpu()] {
        // 2^33 bytes: more than wasm32 can address.
        assert_fails(
            zeros(shape(&[2f64.powi(31), 4.0]), stream.clone()),
            "MemoryLimitError",
            &["zeros"],
        );
        // The element count overflows 64 bits.
        assert_fails(
            zeros(shape(&[2f64.powi(40), 2f64.powi(40)]), stream),
            "MemoryLimitError",
            &["zeros", "[1099511627776, 1099511627776]"],
        );
    }
    // A shape whose element count wraps to the data's length is not accepted.
    let wraps = options(&[("shape", shape(&[2f64.powi(32), 2f64.powi(32)]))]);
    assert_fails(array(numbers(&[]), wraps), "MemoryLimitError", &["array"]);
    // Broadcasting [n, 1] against [1, n] would make n * n elements.
    let n = 2f64.powi(28);
    let one = array(numbers(&[1.0]), JsValue::UNDEFINED).unwrap();
    let column = broadcast_to(&one, shape(&[n, 1.0]), JsValue::UNDEFINED).unwrap();
    let row = broadcast_to(&one, shape(&[1.0, n]), JsValue::UNDEFINED).unwrap();
    assert_fails(
        add(js_value(&column), js_value(&row), JsValue::UNDEFINED),
        "MemoryLimitError",
        &["add"],
    );
    assert_fails(
        broadcast_to(&one, shape(&[n, n]), JsValue::UNDEFINED),
        "MemoryLimitError",
        &["broadcastTo"],
    );
    still_works().await;
}

#[wasm_bindgen_test]
async fn numbers_where_arrays_go_and_arrays_where_numbers_go_are_named() {
    runtime_info().await;
    let x = matrix();
    assert_fails(
        reshape(&x, 6.into(), JsValue::UNDEFINED),
        "ValueError",
        &[
            "reshape",
            "the shape",
            "an array of integers",
            "the number 6",
        ],
    );
    assert_fails(
        eye(numbers(&[3.0]), JsValue::UNDEFINED),
        "ValueError",
        &["eye", "n"],
    );
    assert_fails(
        full(shape(&[2.0]), numbers(&[1.0]), JsValue::UNDEFINED),
        "ValueError",
        &["full", "the value", "a number"],
    );
    assert_fails(
        linspace("0".into(), 1.into(), 3.into(), JsValue::UNDEFINED),
        "ValueError",
        &["linspace", "start"],
    );
    for (dims, what) in [(-1.0, "the number -1"), (1.5, "the number 1.5")] {
        assert_fails(
            zeros(shape(&[2.0, dims]), JsValue::UNDEFINED),
            "ValueError",
            &["zeros", "the shape[1]", what],
        );
    }
    let bad = [
        (options(&[("axis", 1.5.into())]), "opts.axis"),
        (options(&[("axis", "0".into())]), "opts.axis"),
        (options(&[("keepdims", "yes".into())]), "opts.keepdims"),
    ];
    for (opts, what) in bad {
        assert_fails(sum(&x, opts), "ValueError", &["sum", what]);
    }
    assert_fails(
        sum(&x, options(&[("axis", 2.into())])),
        "ValueError",
        &["sum", "axis 2"],
    );
    still_works().await;
}

#[wasm_bindgen_test]
async fn clip_takes_array_bounds_and_broadcasts_them() {
    runtime_info().await;
    let x = matrix();
    let lo = array(numbers(&[1.0, 0.0, 3.0]), JsValue::UNDEFINED).unwrap();
    let hi = array(
        numbers(&[2.0, 4.0]),
        options(&[("shape", shape(&[2.0, 1.0]))]),
    )
    .unwrap();
    for stream in [cpu(), gpu()] {
        let c = clip(&x, js_value(&lo), js_value(&hi), stream).unwrap();
        assert_eq!(to_vec(&c).await, vec![1.0, 1.0, 2.0, 3.0, 4.0, 4.0]);
        let c = clip(&x, JsValue::NULL, js_value(&lo), JsValue::UNDEFINED).unwrap();
        assert_eq!(to_vec(&c).await, vec![0.0, 0.0, 2.0, 1.0, 0.0, 3.0]);
    }
    assert_fails(
        clip(&x, JsValue::NULL, JsValue::NULL, JsValue::UNDEFINED),
        "ValueError",
        &["clip", "at most one"],
    );
    assert_fails(
        clip(&x, "1".into(), JsValue::NULL, JsValue::UNDEFINED),
        "ValueError",
        &["clip", "the string \"1\""],
    );
}

#[wasm_bindgen_test]
async fn softmax_over_an_empty_axis_is_empty() {
    runtime_info().await;
    for stream in ["cpu", "gpu"] {
        let empty = zeros(shape(&[2.0, 0.0]), JsValue::UNDEFINED).unwrap();
        let opts = options(&[("axis", (-1).into()), ("stream", stream.into())]);
        let s = softmax(&empty, opts).unwrap();
        assert_eq!(shape_of(&s).await, vec![2.0, 0.0]);
        assert!(to_vec(&s).await.is_empty());
    }
}

/// Work the browser's GPU rejects (a test hook adds an invalid copy to the next submit) fails
/// the read with a `DeviceError`, never returns the stale output, and the runtime goes on.
#[wasm_bindgen_test]
async fn work_the_gpu_rejects_is_a_device_error_and_never_a_stale_result() {
    runtime_info().await;
    let x = array(numbers(&[1.0, 2.0, 3.0]), JsValue::UNDEFINED).unwrap();
    let first = add(js_value(&x), js_value(&x), gpu()).unwrap();
    tandem::gpu::device::errors::spoil_next_submit_for_tests();
    let spoiled = JsFuture::from(first.to_array()).await;
    let err = spoiled.expect_err("the spoiled read rejects");
    assert!(
        describe(&err).starts_with("DeviceError: "),
        "{}",
        describe(&err)
    );
    let again = JsFuture::from(first.to_array()).await;
    assert!(
        again.is_err(),
        "the stale output is not returned later either"
    );
    let fresh = add(js_value(&x), js_value(&x), gpu()).unwrap();
    assert_eq!(to_vec(&fresh).await, vec![2.0, 4.0, 6.0]);
}

/// Slice bounds and strides anywhere in a JS number's range clamp as MLX's do, on wasm32
/// too (where they pass `isize`, and a stride times a bound used to overflow).
#[wasm_bindgen_test]
async fn huge_slice_bounds_and_strides_clamp() {
    runtime_info().await;
    let x = matrix();
    let big = 2f64.powi(40);
    for stream in [cpu(), gpu()] {
        let s = slice(
            &x,
            numbers(&[-big, 0.0]),
            numbers(&[big, big]),
            numbers(&[big, 2.0]),
            stream.clone(),
        )
        .unwrap();
        assert_eq!(shape_of(&s).await, vec![1.0, 2.0]);
        assert_eq!(to_vec(&s).await, vec![0.0, 2.0]);
        let s = slice(
            &x,
            numbers(&[big, big]),
            numbers(&[-big, -big]),
            numbers(&[-big, -1.0]),
            stream,
        )
        .unwrap();
        assert_eq!(to_vec(&s).await, vec![5.0, 4.0, 3.0]);
    }
}

/// `where` takes numbers and booleans for any of its three arguments, as MLX does.
#[wasm_bindgen_test]
async fn where_takes_scalars_in_any_position() {
    runtime_info().await;
    let mask = array(
        js_sys::Array::of3(&true.into(), &false.into(), &true.into()).into(),
        JsValue::UNDEFINED,
    )
    .unwrap();
    let x = array(numbers(&[1.0, 2.0, 3.0]), JsValue::UNDEFINED).unwrap();
    for stream in [cpu(), gpu()] {
        let w = where_(js_value(&mask), js_value(&x), 0.into(), stream.clone()).unwrap();
        assert_eq!(to_vec(&w).await, vec![1.0, 0.0, 3.0]);
        let w = where_(js_value(&mask), (-1.5).into(), js_value(&x), stream.clone()).unwrap();
        assert_eq!(to_vec(&w).await, vec![-1.5, 2.0, -1.5]);
        let w = where_(js_value(&mask), 1.into(), 2.into(), stream.clone()).unwrap();
        assert_eq!(to_vec(&w).await, vec![1.0, 2.0, 1.0]);
        let w = where_(false.into(), js_value(&x), 7.into(), stream).unwrap();
        assert_eq!(to_vec(&w).await, vec![7.0, 7.0, 7.0]);
    }
    assert_fails(
        where_(
            js_value(&mask),
            "1".into(),
            js_value(&x),
            JsValue::UNDEFINED,
        ),
        "ValueError",
        &["where", "the string \"1\""],
    );
}

/// What JS passes where an NDArray goes is checked by tandem, as JS calls the exported
/// functions: a number, an array, a string or a disposed NDArray is a typed error that names
/// the op and what it got.
#[wasm_bindgen_test]
async fn something_else_where_an_ndarray_goes_is_a_typed_error() {
    use tandem::js::functions::exported;
    runtime_info().await;
    let x = matrix();
    let opts = || JsValue::UNDEFINED;
    assert_fails(
        exported::exp(5.into(), opts()),
        "ValueError",
        &["exp", "the number 5"],
    );
    assert_fails(
        exported::sum(numbers(&[1.0]), opts()),
        "ValueError",
        &["sum", "expected an NDArray", "an array"],
    );
    assert_fails(
        exported::matmul(js_value(&x), "x".into(), opts()),
        "ValueError",
        &["matmul", "the string \"x\""],
    );
    assert_fails(
        exported::reshape(JsValue::NULL, numbers(&[6.0]), opts()),
        "ValueError",
        &["reshape"],
    );
    assert_fails(
        x.matmul(7.into(), opts()),
        "ValueError",
        &["matmul", "the number 7"],
    );
    let gone = js_value(&x);
    dispose(&gone);
    assert_fails(
        exported::softmax(gone, opts()),
        "DisposedArrayError",
        &["softmax"],
    );
    // The exported forms compute what the Rust ones do.
    let t = exported::transpose(js_value(&x), cpu(), opts()).unwrap();
    assert_eq!(to_vec(&t).await, vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    let parts = exported::split(js_value(&x), 3.into(), options(&[("axis", 1.into())])).unwrap();
    assert_eq!(parts.length(), 3);
}
