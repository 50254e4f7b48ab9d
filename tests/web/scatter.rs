//! `putAlongAxis` and `sliceUpdate` through the JS API as a page calls them: indices as arrays,
//! numbers and lists, values as numbers, options in each position, typos and bad shapes, both
//! streams giving the same values, and the array written into left as it was.

use js_sys::Int32Array;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

use tandem::js::functions::{self as tn, exported as ex};
use tandem::js::ndarray::NdArray;

use crate::common::*;

fn message(result: Result<NdArray, JsValue>) -> (String, String) {
    let err: js_sys::Error = result.err().expect("an error").dyn_into().unwrap();
    (String::from(err.name()), String::from(err.message()))
}

fn grid() -> NdArray {
    tn::array(
        floats(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]),
        options(&[("shape", floats(&[2.0, 3.0]))]),
    )
    .unwrap()
}

fn indices(values: &[i32], shape: &[f64]) -> NdArray {
    tn::array(
        Int32Array::from(values).into(),
        options(&[("shape", floats(shape))]),
    )
    .unwrap()
}

#[wasm_bindgen_test]
async fn put_along_axis_writes_numbers_and_arrays_on_both_streams() {
    runtime_info().await;
    let x = grid();
    for stream in ["cpu", "gpu"] {
        let opts = |axis: f64| options(&[("axis", axis.into()), ("stream", stream.into())]);
        // One index per row, a number for the values (cast to x's dtype), negative from the end.
        let idx = indices(&[-1, 0], &[2.0, 1.0]);
        let put = ex::put_along_axis(js_value(&x), js_value(&idx), 9.into(), opts(1.0)).unwrap();
        assert_eq!(to_vec(&put).await, vec![0.0, 1.0, 9.0, 9.0, 4.0, 5.0]);
        // Values broadcast against the indices; an array's out-of-range index clamps.
        let idx = indices(&[1, 99, 0], &[1.0, 3.0]);
        let values = tn::array(floats(&[7.0, 8.0, 9.0]), JsValue::UNDEFINED).unwrap();
        let put =
            ex::put_along_axis(js_value(&x), js_value(&idx), js_value(&values), opts(0.0)).unwrap();
        assert_eq!(to_vec(&put).await, vec![0.0, 1.0, 9.0, 7.0, 8.0, 5.0]);
        // Without an axis: the flattened array, with JS integers as the indices.
        let flat = ex::put_along_axis(js_value(&x), floats(&[5.0, -6.0]), (-1).into(), on(stream))
            .unwrap();
        assert_eq!(to_vec(&flat).await, vec![-1.0, 1.0, 2.0, 3.0, 4.0, -1.0]);
        let shape: Vec<f64> = flat
            .shape()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(shape, vec![2.0, 3.0]);
    }
    // The array written into is unchanged.
    assert_eq!(to_vec(&x).await, vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
}

#[wasm_bindgen_test]
async fn put_along_axis_names_bad_indices_shapes_and_options() {
    runtime_info().await;
    let x = grid();
    let undefined = JsValue::UNDEFINED;
    let (name, text) = message(ex::put_along_axis(
        js_value(&x),
        6.into(),
        1.into(),
        undefined.clone(),
    ));
    assert_eq!(name, "ValueError");
    assert!(
        text.contains("putAlongAxis") && text.contains("index 6"),
        "{text}"
    );
    let (name, text) = message(ex::put_along_axis(
        js_value(&x),
        js_value(&x),
        1.into(),
        options(&[("axis", 0.into())]),
    ));
    assert_eq!(name, "DTypeError");
    assert!(text.contains("indices must be integers"), "{text}");
    let (name, text) = message(ex::put_along_axis(
        js_value(&x),
        js_value(&indices(&[0, 1, 0], &[1.0, 3.0])),
        js_value(&tn::zeros(floats(&[2.0, 2.0]), undefined.clone()).unwrap()),
        options(&[("axis", 0.into())]),
    ));
    assert_eq!(name, "ShapeError");
    assert!(
        text.contains("putAlongAxis") && text.contains("[1, 3]") && text.contains("[2, 2]"),
        "{text}"
    );
    let (name, text) = message(ex::put_along_axis(
        js_value(&x),
        js_value(&indices(&[0], &[1.0, 1.0])),
        1.into(),
        options(&[("axes", 0.into())]),
    ));
    assert_eq!(name, "ValueError");
    assert!(
        text.contains("\"axes\"") && text.contains("axis, stream"),
        "{text}"
    );
    let (name, text) = message(ex::put_along_axis(
        js_value(&x),
        js_value(&indices(&[0], &[1.0, 1.0])),
        "one".into(),
        options(&[("axis", 0.into())]),
    ));
    assert_eq!(name, "ValueError");
    assert!(
        text.contains("values must be") && text.contains("\"one\""),
        "{text}"
    );
}

#[wasm_bindgen_test]
async fn slice_update_takes_strides_or_options_in_their_place() {
    runtime_info().await;
    let x = grid();
    for stream in ["cpu", "gpu"] {
        // Every second column of both rows, backwards, from a broadcast row.
        let row = tn::array(floats(&[-1.0, -2.0]), JsValue::UNDEFINED).unwrap();
        let put = ex::slice_update(
            js_value(&x),
            js_value(&row),
            floats(&[0.0, -1.0]),
            floats(&[2.0, -4.0]),
            floats(&[1.0, -2.0]),
            on(stream),
        )
        .unwrap();
        assert_eq!(to_vec(&put).await, vec![-2.0, 1.0, -1.0, -2.0, 4.0, -1.0]);
        // Strides left out: the options object takes their place; a number as the update.
        let put = ex::slice_update(
            js_value(&x),
            7.into(),
            floats(&[1.0, 1.0]),
            floats(&[2.0, 3.0]),
            on(stream),
            JsValue::UNDEFINED,
        )
        .unwrap();
        assert_eq!(to_vec(&put).await, vec![0.0, 1.0, 2.0, 3.0, 7.0, 7.0]);
        // An empty slice changes nothing.
        let same = ex::slice_update(
            js_value(&x),
            js_value(&tn::zeros(floats(&[0.0, 3.0]), JsValue::UNDEFINED).unwrap()),
            floats(&[1.0, 0.0]),
            floats(&[1.0, 3.0]),
            on(stream),
            JsValue::UNDEFINED,
        )
        .unwrap();
        assert_eq!(to_vec(&same).await, vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    }
    let (name, text) = message(ex::slice_update(
        js_value(&x),
        js_value(&tn::zeros(floats(&[3.0]), JsValue::UNDEFINED).unwrap()),
        floats(&[0.0, 0.0]),
        floats(&[2.0, 2.0]),
        JsValue::UNDEFINED,
        JsValue::UNDEFINED,
    ));
    assert_eq!(name, "ShapeError");
    assert!(
        text.contains("sliceUpdate") && text.contains("[3]") && text.contains("[2, 2]"),
        "{text}"
    );
    let (name, text) = message(ex::slice_update(
        js_value(&x),
        1.into(),
        floats(&[0.0]),
        floats(&[2.0, 2.0]),
        JsValue::UNDEFINED,
        JsValue::UNDEFINED,
    ));
    assert_eq!(name, "ValueError");
    assert!(
        text.contains("sliceUpdate") && text.contains("2 entries"),
        "{text}"
    );
    let (name, text) = message(ex::slice_update(
        js_value(&x),
        1.into(),
        floats(&[0.0, 0.0]),
        floats(&[2.0, 2.0]),
        floats(&[1.0, 0.0]),
        JsValue::UNDEFINED,
    ));
    assert_eq!(name, "ValueError");
    assert!(
        text.contains("sliceUpdate") && text.contains("stride of 0"),
        "{text}"
    );
    let (name, text) = message(ex::slice_update(
        js_value(&x),
        1.into(),
        floats(&[0.0, 0.0]),
        floats(&[2.0, 2.0]),
        options(&[("strean", "cpu".into())]),
        JsValue::UNDEFINED,
    ));
    assert_eq!(name, "ValueError");
    assert!(text.contains("\"strean\""), "{text}");
}
