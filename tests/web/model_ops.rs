//! The ops a model needs, through the JS API as a page calls them: function and method forms,
//! numbers in place of arrays, options in each position, typos, integers near 2^31, and both
//! streams giving the same values.

use js_sys::{Int32Array, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

use tandem::js::functions::{self as tn, exported as ex};
use tandem::js::ndarray::NdArray;

use crate::common::*;

fn message(result: Result<NdArray, JsValue>) -> (String, String) {
    let err: js_sys::Error = result.err().expect("an error").dyn_into().unwrap();
    (String::from(err.name()), String::from(err.message()))
}

async fn ints(a: &NdArray) -> Vec<i32> {
    let typed = JsFuture::from(a.to_array()).await.unwrap();
    typed.dyn_into::<Int32Array>().unwrap().to_vec()
}

async fn bools(a: &NdArray) -> Vec<u8> {
    let typed = JsFuture::from(a.to_array()).await.unwrap();
    typed.dyn_into::<Uint8Array>().unwrap().to_vec()
}

fn int_array(values: &[i32]) -> NdArray {
    tn::array(Int32Array::from(values).into(), JsValue::UNDEFINED).unwrap()
}

#[wasm_bindgen_test]
async fn nan_to_num_takes_its_options_and_rejects_typos() {
    runtime_info().await;
    let x = float_array(&[f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 2.0]);
    for stream in ["cpu", "gpu"] {
        let plain = ex::nan_to_num(js_value(&x), on(stream)).unwrap();
        assert_eq!(to_vec(&plain).await, vec![0.0, f32::MAX, -f32::MAX, 2.0]);
        let opts = options(&[
            ("nan", (-1).into()),
            ("posinf", 9.into()),
            ("neginf", (-9).into()),
            ("stream", stream.into()),
        ]);
        let method = x.nan_to_num(opts).unwrap();
        assert_eq!(to_vec(&method).await, vec![-1.0, 9.0, -9.0, 2.0]);
    }
    let (name, text) = message(ex::nan_to_num(
        js_value(&x),
        options(&[("posInf", 1.into())]),
    ));
    assert_eq!(name, "ValueError");
    assert!(
        text.contains("\"posInf\"") && text.contains("nan, posinf, neginf, stream"),
        "{text}"
    );
    let (name, text) = message(ex::nan_to_num(
        js_value(&x),
        options(&[("nan", "zero".into())]),
    ));
    assert_eq!(name, "ValueError");
    assert!(text.contains("opts.nan must be a number"), "{text}");
    let (name, text) = message(ex::nan_to_num(3.into(), JsValue::UNDEFINED));
    assert_eq!(name, "ValueError");
    assert!(
        text.contains("nanToNum") && text.contains("the number 3"),
        "{text}"
    );
    // Integer arrays come back unchanged.
    let i = int_array(&[i32::MAX, -1]);
    assert_eq!(
        ints(&i.nan_to_num(JsValue::UNDEFINED).unwrap()).await,
        vec![i32::MAX, -1]
    );
}

#[wasm_bindgen_test]
async fn integer_division_rounds_down_near_the_ends_of_int32() {
    runtime_info().await;
    let a = int_array(&[i32::MIN, i32::MAX, -7, 7, 5]);
    let b = int_array(&[3, -5, 2, -2, 0]);
    for stream in ["cpu", "gpu"] {
        let q = tn::floor_divide(js_value(&a), js_value(&b), on(stream)).unwrap();
        assert_eq!(
            ints(&q).await,
            vec![-715827883, -429496730, -4, -4, 0],
            "{stream}"
        );
        let r = a.remainder(js_value(&b), on(stream)).unwrap();
        assert_eq!(ints(&r).await, vec![1, -3, 1, -1, 5], "{stream}");
        // A number stands in for either operand, typed weakly as MLX types Python scalars.
        let by_three = tn::remainder(js_value(&a), 3.into(), on(stream)).unwrap();
        assert_eq!(ints(&by_three).await, vec![1, 1, 2, 1, 2], "{stream}");
    }
}

#[wasm_bindgen_test]
async fn class_tests_and_two_argument_functions_agree_on_both_streams() {
    runtime_info().await;
    let x = float_array(&[f32::NAN, f32::INFINITY, -0.0, 1e-30, -3.5]);
    let y = float_array(&[1.0, -2.0, -0.0, -1.0, 0.0]);
    for stream in ["cpu", "gpu"] {
        assert_eq!(
            bools(&ex::isnan(js_value(&x), on(stream)).unwrap()).await,
            vec![1, 0, 0, 0, 0]
        );
        assert_eq!(
            bools(&x.isinf(on(stream)).unwrap()).await,
            vec![0, 1, 0, 0, 0]
        );
        assert_eq!(
            bools(&x.isfinite(on(stream)).unwrap()).await,
            vec![0, 0, 1, 1, 1]
        );
        let angle = tn::arctan2(js_value(&x), js_value(&y), on(stream)).unwrap();
        let got = to_vec(&angle).await;
        let want = [
            f32::NAN,
            std::f32::consts::FRAC_PI_2,
            -std::f32::consts::PI,
            std::f32::consts::PI,
            -std::f32::consts::FRAC_PI_2,
        ];
        for (g, w) in got.iter().zip(want) {
            assert!(
                (g.is_nan() && w.is_nan()) || (g - w).abs() <= 1e-6 * w.abs(),
                "{got:?} on {stream}"
            );
        }
        let sum = tn::logaddexp(js_value(&y), 1000.into(), on(stream)).unwrap();
        assert_eq!(to_vec(&sum).await, vec![1000.0; 5], "{stream}");
    }
}

#[wasm_bindgen_test]
async fn spreads_truths_and_triangles_take_their_options() {
    runtime_info().await;
    let x = tn::array(
        floats(&[1.0, 2.0, 4.0, 7.0, 0.0, 0.0]),
        options(&[("shape", floats(&[2.0, 3.0]))]),
    )
    .unwrap();
    for stream in ["cpu", "gpu"] {
        let v = ex::variance(
            js_value(&x),
            options(&[
                ("axis", 1.into()),
                ("ddof", 1.into()),
                ("stream", stream.into()),
            ]),
        )
        .unwrap();
        let got = to_vec(&v).await;
        assert!(
            (got[0] - 7.0 / 3.0).abs() < 1e-6 && (got[1] - 49.0 / 3.0).abs() < 1e-5,
            "{got:?}"
        );
        let any = x
            .any(options(&[("axis", 0.into()), ("stream", stream.into())]))
            .unwrap();
        assert_eq!(bools(&any).await, vec![1, 1, 1]);
        let all = ex::all(js_value(&x), on(stream)).unwrap();
        assert_eq!(bools(&all).await, vec![0]);
        // k positionally, or the options in its place.
        let upper = x.triu(1.into(), on(stream)).unwrap();
        assert_eq!(to_vec(&upper).await, vec![0.0, 2.0, 4.0, 0.0, 0.0, 0.0]);
        let lower = ex::tril(js_value(&x), on(stream), JsValue::UNDEFINED).unwrap();
        assert_eq!(to_vec(&lower).await, vec![1.0, 0.0, 0.0, 7.0, 0.0, 0.0]);
    }
    let (name, text) = message(ex::variance(
        js_value(&x),
        options(&[("ddof", (-1).into())]),
    ));
    assert_eq!(name, "ValueError");
    assert!(text.contains("var") && text.contains("ddof"), "{text}");
    let (name, text) = message(ex::std(js_value(&x), options(&[("axes", 0.into())])));
    assert_eq!(name, "ValueError");
    assert!(
        text.contains("\"axes\"") && text.contains("axis, keepdims, ddof, stream"),
        "{text}"
    );
    let vector = float_array(&[1.0, 2.0]);
    let (name, text) = message(vector.tril(JsValue::UNDEFINED, JsValue::UNDEFINED));
    assert_eq!(name, "ValueError");
    assert!(
        text.contains("tril") && text.contains("at least 2 axes"),
        "{text}"
    );
    let (name, text) = message(ex::triu(js_value(&x), 1.5.into(), JsValue::UNDEFINED));
    assert_eq!(name, "ValueError");
    assert!(text.contains("triu"), "{text}");
    let product = ex::addmm(
        js_value(&float_array(&[1.0])),
        js_value(&x),
        js_value(&tn::ones(floats(&[3.0, 1.0]), JsValue::UNDEFINED).unwrap()),
        options(&[
            ("alpha", 2.into()),
            ("beta", (-1).into()),
            ("stream", "gpu".into()),
        ]),
    )
    .unwrap();
    assert_eq!(to_vec(&product).await, vec![13.0, 13.0]);
    let (name, text) = message(ex::addmm(
        js_value(&float_array(&[1.0])),
        js_value(&x),
        js_value(&x),
        options(&[("gamma", 1.into())]),
    ));
    assert_eq!(name, "ValueError");
    assert!(text.contains("\"gamma\""), "{text}");
    let outer = ex::outer(js_value(&vector), js_value(&vector), JsValue::UNDEFINED).unwrap();
    assert_eq!(to_vec(&outer).await, vec![1.0, 2.0, 2.0, 4.0]);
}

#[wasm_bindgen_test]
async fn take_reads_indices_as_arrays_numbers_and_lists() {
    runtime_info().await;
    let x = tn::array(
        floats(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]),
        options(&[("shape", floats(&[2.0, 3.0]))]),
    )
    .unwrap();
    for stream in ["cpu", "gpu"] {
        let opts = |axis: f64| options(&[("axis", axis.into()), ("stream", stream.into())]);
        let row = ex::take(js_value(&x), (-1).into(), opts(0.0)).unwrap();
        assert_eq!(to_vec(&row).await, vec![3.0, 4.0, 5.0]);
        let columns = x.take(floats(&[2.0, 0.0]), opts(-1.0)).unwrap();
        assert_eq!(to_vec(&columns).await, vec![2.0, 0.0, 5.0, 3.0]);
        // Without an axis, from the flattened array; an array's indices clamp on the device.
        let idx = int_array(&[5, -6, 99, -99]);
        let flat = ex::take(js_value(&x), js_value(&idx), on(stream)).unwrap();
        assert_eq!(to_vec(&flat).await, vec![5.0, 0.0, 5.0, 0.0]);
        let along = tn::array(
            Int32Array::from(&[2, 0][..]).into(),
            options(&[("shape", floats(&[2.0, 1.0]))]),
        )
        .unwrap();
        let picked = ex::take_along_axis(js_value(&x), js_value(&along), opts(1.0)).unwrap();
        assert_eq!(to_vec(&picked).await, vec![2.0, 3.0]);
    }
    // JS integers are known on the host: one out of range is a ValueError there.
    let (name, text) = message(ex::take(js_value(&x), 6.into(), JsValue::UNDEFINED));
    assert_eq!(name, "ValueError");
    assert!(
        text.contains("take") && text.contains("index 6") && text.contains("extent 6"),
        "{text}"
    );
    let (name, text) = message(ex::take(js_value(&x), floats(&[0.5]), JsValue::UNDEFINED));
    assert_eq!(name, "ValueError");
    assert!(text.contains("take") && text.contains("indices"), "{text}");
    let (name, text) = message(ex::take(js_value(&x), js_value(&x), JsValue::UNDEFINED));
    assert_eq!(name, "DTypeError");
    assert!(
        text.contains("indices must be integers") && text.contains("float32"),
        "{text}"
    );
    let (name, text) = message(ex::take(
        js_value(&x),
        0.into(),
        options(&[("axes", 0.into())]),
    ));
    assert_eq!(name, "ValueError");
    assert!(
        text.contains("\"axes\"") && text.contains("axis, stream"),
        "{text}"
    );
    let (name, text) = message(ex::take_along_axis(
        js_value(&x),
        js_value(&int_array(&[0])),
        options(&[("axis", 0.into())]),
    ));
    assert_eq!(name, "ShapeError");
    assert!(text.contains("rank"), "{text}");
    let empty = tn::zeros(floats(&[0.0, 3.0]), JsValue::UNDEFINED).unwrap();
    let (name, text) = message(ex::take(
        js_value(&empty),
        js_value(&int_array(&[0])),
        options(&[("axis", 0.into())]),
    ));
    assert_eq!(name, "ValueError");
    assert!(text.contains("empty"), "{text}");
}

#[wasm_bindgen_test]
async fn scans_run_either_way_on_both_streams() {
    runtime_info().await;
    let x = tn::array(
        floats(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
        options(&[("shape", floats(&[2.0, 3.0]))]),
    )
    .unwrap();
    for stream in ["cpu", "gpu"] {
        let flat = ex::cumsum(js_value(&x), on(stream)).unwrap();
        assert_eq!(to_vec(&flat).await, vec![1.0, 3.0, 6.0, 10.0, 15.0, 21.0]);
        let opts = options(&[
            ("axis", 0.into()),
            ("reverse", true.into()),
            ("inclusive", false.into()),
            ("stream", stream.into()),
        ]);
        let down = x.cumprod(opts).unwrap();
        assert_eq!(to_vec(&down).await, vec![4.0, 5.0, 6.0, 1.0, 1.0, 1.0]);
        let bools = tn::array(
            floats(&[1.0, 0.0, 1.0]),
            options(&[("dtype", "bool".into())]),
        )
        .unwrap();
        let counted = ex::cumsum(js_value(&bools), on(stream)).unwrap();
        assert_eq!(ints(&counted).await, vec![1, 1, 2]);
    }
    let (name, text) = message(ex::cummax(
        js_value(&x),
        options(&[("reversed", true.into())]),
    ));
    assert_eq!(name, "ValueError");
    assert!(
        text.contains("cummax")
            && text.contains("\"reversed\"")
            && text.contains("axis, reverse, inclusive, stream"),
        "{text}"
    );
    let (name, text) = message(ex::cumsum(js_value(&x), options(&[("axis", 2.into())])));
    assert_eq!(name, "ValueError");
    assert!(text.contains("cumsum") && text.contains("axis 2"), "{text}");
    let (name, text) = message(ex::logcumsumexp(
        js_value(&x),
        options(&[("inclusive", 1.into())]),
    ));
    assert_eq!(name, "ValueError");
    assert!(text.contains("opts.inclusive must be a boolean"), "{text}");
}

#[wasm_bindgen_test]
async fn fast_norms_match_their_compositions_and_check_their_arguments() {
    runtime_info().await;
    let x = tn::array(
        floats(&[1.0, 2.0, 4.0, 8.0, -1.0, 0.0, 1.0, 2.0]),
        options(&[("shape", floats(&[2.0, 4.0]))]),
    )
    .unwrap();
    let w = float_array(&[1.0, 0.5, 2.0, -1.0]);
    let b = float_array(&[0.0, 1.0, 0.0, -1.0]);
    for stream in ["cpu", "gpu"] {
        let y = tn::fast_layer_norm(
            js_value(&x),
            js_value(&w),
            js_value(&b),
            1e-5.into(),
            on(stream),
        )
        .unwrap();
        let got = to_vec(&y).await;
        // Row 0: mean 3.75, variance 7.1875.
        let s = 1.0 / (7.1875f32 + 1e-5).sqrt();
        let want0 = [
            (1.0 - 3.75) * s,
            (2.0 - 3.75) * s * 0.5 + 1.0,
            (4.0 - 3.75) * s * 2.0,
            -(8.0 - 3.75) * s - 1.0,
        ];
        for (g, w) in got.iter().zip(want0) {
            assert!(
                (g - w).abs() <= 1e-5 * w.abs().max(1.0),
                "{got:?} on {stream}"
            );
        }
        let r = tn::fast_rms_norm(js_value(&x), JsValue::NULL, 0.into(), on(stream)).unwrap();
        let got = to_vec(&r).await;
        let rms = (85.0f32 / 4.0).sqrt();
        assert!((got[3] - 8.0 / rms).abs() < 1e-5, "{got:?} on {stream}");
    }
    let (name, text) = message(tn::fast_layer_norm(
        js_value(&x),
        js_value(&x),
        JsValue::NULL,
        1e-5.into(),
        JsValue::UNDEFINED,
    ));
    assert_eq!(name, "ShapeError");
    assert!(
        text.contains("fast.layerNorm") && text.contains("weight") && text.contains("[4]"),
        "{text}"
    );
    let (name, text) = message(tn::fast_rms_norm(
        js_value(&x),
        JsValue::NULL,
        JsValue::UNDEFINED,
        JsValue::UNDEFINED,
    ));
    assert_eq!(name, "ValueError");
    assert!(
        text.contains("fast.rmsNorm") && text.contains("eps"),
        "{text}"
    );
    let (name, text) = message(tn::fast_rms_norm(
        js_value(&x),
        3.into(),
        1e-5.into(),
        JsValue::UNDEFINED,
    ));
    assert_eq!(name, "ValueError");
    assert!(
        text.contains("weight must be an NDArray or null") && text.contains("the number 3"),
        "{text}"
    );
    let (name, _) = message(tn::fast_rms_norm(
        js_value(&x),
        JsValue::NULL,
        1e-5.into(),
        options(&[("strem", "gpu".into())]),
    ));
    assert_eq!(name, "ValueError");
}

#[wasm_bindgen_test]
async fn sorts_take_the_last_axis_by_default_and_null_for_flattened() {
    runtime_info().await;
    let x = tn::array(
        floats(&[3.0, f64::NAN, 1.0, 0.0, -2.0, 5.0]),
        options(&[("shape", floats(&[2.0, 3.0]))]),
    )
    .unwrap();
    for stream in ["cpu", "gpu"] {
        let rows = ex::sort(js_value(&x), on(stream)).unwrap();
        let got = to_vec(&rows).await;
        assert_eq!(
            (got[0], got[1], got[3], got[4], got[5]),
            (1.0, 3.0, -2.0, 0.0, 5.0),
            "{stream}"
        );
        assert!(got[2].is_nan());
        let flat = x
            .sort(options(&[
                ("axis", JsValue::NULL),
                ("stream", stream.into()),
            ]))
            .unwrap();
        assert_eq!(flat.shape().unwrap().length(), 1);
        let order = ex::argsort(
            js_value(&x),
            options(&[("axis", 0.into()), ("stream", stream.into())]),
        )
        .unwrap();
        let typed = JsFuture::from(order.to_array()).await.unwrap();
        assert_eq!(
            typed.dyn_into::<js_sys::Uint32Array>().unwrap().to_vec(),
            vec![1, 1, 0, 0, 0, 1]
        );
        let top = x.topk(2.into(), on(stream)).unwrap();
        let got = to_vec(&top).await;
        assert!(
            got[0].is_nan() && got[1] == 3.0 && got[2] == 5.0 && got[3] == 0.0,
            "{got:?} {stream}"
        );
    }
    let (name, text) = message(ex::topk(js_value(&x), 4.into(), JsValue::UNDEFINED));
    assert_eq!(name, "ValueError");
    assert!(text.contains("topk") && text.contains("k = 4"), "{text}");
    let (name, text) = message(ex::topk(js_value(&x), (-1).into(), JsValue::UNDEFINED));
    assert_eq!(name, "ValueError");
    assert!(text.contains("topk") && text.contains("k"), "{text}");
    let (name, text) = message(ex::sort(
        js_value(&x),
        options(&[("axis", floats(&[0.0, 1.0]))]),
    ));
    assert_eq!(name, "ValueError");
    assert!(text.contains("one axis or null"), "{text}");
}

#[wasm_bindgen_test]
async fn attention_and_rope_take_their_masks_and_options() {
    runtime_info().await;
    let shape = |dims: &[f64]| options(&[("shape", floats(dims))]);
    let q = tn::array(floats(&[1.0, 0.0, 0.0, 1.0]), shape(&[1.0, 1.0, 2.0, 2.0])).unwrap();
    let v = tn::array(floats(&[1.0, 2.0, 3.0, 4.0]), shape(&[1.0, 1.0, 2.0, 2.0])).unwrap();
    for stream in ["cpu", "gpu"] {
        // Causal: the first query sees only the first key, so it reads v's first row.
        let opts = options(&[("mask", "causal".into()), ("stream", stream.into())]);
        let out =
            tn::fast_scaled_dot_product_attention(js_value(&q), js_value(&q), js_value(&v), opts)
                .unwrap();
        let got = to_vec(&out).await;
        assert_eq!(&got[..2], &[1.0, 2.0], "{stream}");
        let keep = tn::array(
            floats(&[0.0, 1.0, 1.0, 1.0]),
            options(&[("dtype", "bool".into()), ("shape", floats(&[2.0, 2.0]))]),
        )
        .unwrap();
        let opts = options(&[
            ("mask", js_value(&keep)),
            ("scale", 1.into()),
            ("stream", stream.into()),
        ]);
        let out =
            tn::fast_scaled_dot_product_attention(js_value(&q), js_value(&q), js_value(&v), opts)
                .unwrap();
        assert_eq!(&to_vec(&out).await[..2], &[3.0, 4.0], "{stream}");
        let x = tn::array(floats(&[1.0, 0.0, 1.0, 0.0]), shape(&[1.0, 2.0, 2.0])).unwrap();
        let rotated = tn::fast_rope(
            js_value(&x),
            2.into(),
            options(&[("offset", 1.into()), ("stream", stream.into())]),
        )
        .unwrap();
        let got = to_vec(&rotated).await;
        // Positions 1 and 2: (cos p, sin p).
        for (g, w) in got
            .iter()
            .zip([1f32.cos(), 1f32.sin(), 2f32.cos(), 2f32.sin()])
        {
            assert!((g - w).abs() < 1e-6, "{got:?} on {stream}");
        }
    }
    let (name, text) = message(tn::fast_scaled_dot_product_attention(
        js_value(&q),
        js_value(&q),
        js_value(&v),
        options(&[("mask", "upper".into())]),
    ));
    assert_eq!(name, "ValueError");
    assert!(
        text.contains("opts.mask") && text.contains("causal"),
        "{text}"
    );
    let flat = float_array(&[1.0, 2.0]);
    let (name, text) = message(tn::fast_scaled_dot_product_attention(
        js_value(&flat),
        js_value(&q),
        js_value(&v),
        JsValue::UNDEFINED,
    ));
    assert_eq!(name, "ShapeError");
    assert!(
        text.contains("[B, Hq, L, D]") && text.contains("[2]"),
        "{text}"
    );
    let (name, text) = message(tn::fast_rope(js_value(&q), 3.into(), JsValue::UNDEFINED));
    assert_eq!(name, "ValueError");
    assert!(
        text.contains("fast.rope") && text.contains("dims 3"),
        "{text}"
    );
    let (name, text) = message(tn::fast_rope(
        js_value(&q),
        2.into(),
        options(&[("theta", 1.into())]),
    ));
    assert_eq!(name, "ValueError");
    assert!(
        text.contains("\"theta\"") && text.contains("traditional, base, scale, offset, stream"),
        "{text}"
    );
}

#[wasm_bindgen_test]
async fn convolutions_take_numbers_or_lists_and_name_bad_shapes() {
    runtime_info().await;
    let shape = |dims: &[f64]| options(&[("shape", floats(dims))]);
    // A 1x3x3x1 image of 1..9 and a 1x2x2x1 box filter.
    let x = tn::array(
        floats(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]),
        shape(&[1.0, 3.0, 3.0, 1.0]),
    )
    .unwrap();
    let w = tn::ones(floats(&[1.0, 2.0, 2.0, 1.0]), JsValue::UNDEFINED).unwrap();
    for stream in ["cpu", "gpu"] {
        let y = ex::conv2d(js_value(&x), js_value(&w), on(stream)).unwrap();
        assert_eq!(to_vec(&y).await, vec![12.0, 16.0, 24.0, 28.0], "{stream}");
        let opts = options(&[
            ("padding", floats(&[1.0, 0.0])),
            ("stride", 2.into()),
            ("stream", stream.into()),
        ]);
        let y = ex::conv2d(js_value(&x), js_value(&w), opts).unwrap();
        assert_eq!(to_vec(&y).await, vec![3.0, 24.0], "{stream}");
        // The transpose spreads each input over the filter's 2x2 window.
        let y = ex::conv_transpose2d(js_value(&x), js_value(&w), on(stream)).unwrap();
        let full = [
            1.0, 3.0, 5.0, 3.0, 5.0, 12.0, 16.0, 9.0, 11.0, 24.0, 28.0, 15.0, 7.0, 15.0, 17.0, 9.0,
        ];
        assert_eq!(to_vec(&y).await, full.to_vec(), "{stream}");
        let opts = options(&[("padding", 1.into()), ("stream", stream.into())]);
        let y = ex::conv_transpose2d(js_value(&x), js_value(&w), opts).unwrap();
        assert_eq!(to_vec(&y).await, vec![12.0, 16.0, 24.0, 28.0], "{stream}");
    }
    let (name, text) = message(ex::conv_transpose2d(
        js_value(&x),
        js_value(&w),
        options(&[("outputPadding", 1.into())]),
    ));
    assert_eq!(name, "ValueError");
    assert!(
        text.contains("convTranspose2d") && text.contains("outputPadding 1"),
        "{text}"
    );
    let (name, text) = message(ex::conv_transpose2d(
        js_value(&x),
        js_value(&w),
        options(&[("output_padding", 1.into())]),
    ));
    assert_eq!(name, "ValueError");
    assert!(text.contains("\"output_padding\""), "{text}");
    let (name, text) = message(ex::conv2d(
        js_value(&x),
        js_value(&w),
        options(&[("padding", floats(&[1.0]))]),
    ));
    assert_eq!(name, "ValueError");
    assert!(
        text.contains("conv2d") && text.contains("opts.padding") && text.contains("list of 2"),
        "{text}"
    );
    let (name, text) = message(ex::conv1d(js_value(&x), js_value(&w), JsValue::UNDEFINED));
    assert_eq!(name, "ShapeError");
    assert!(text.contains("conv1d") && text.contains("3 axes"), "{text}");
    let (name, text) = message(ex::conv2d(
        js_value(&x),
        js_value(&w),
        options(&[("groups", 2.into())]),
    ));
    assert_eq!(name, "ShapeError");
    assert!(text.contains("groups"), "{text}");
    let (name, text) = message(ex::conv2d(
        js_value(&x),
        js_value(&w),
        options(&[("dilation", 3.into())]),
    ));
    assert_eq!(name, "ValueError");
    assert!(text.contains("kernel spans 4"), "{text}");
}

#[wasm_bindgen_test]
async fn construction_ops_read_their_arguments_as_numpy_does() {
    runtime_info().await;
    let x = tn::array(
        floats(&[1.0, 2.0, 3.0, 4.0]),
        options(&[("shape", floats(&[2.0, 2.0]))]),
    )
    .unwrap();
    for stream in ["cpu", "gpu"] {
        let padded = ex::pad(
            js_value(&x),
            floats(&[1.0, 0.0]),
            options(&[("mode", "edge".into()), ("stream", stream.into())]),
        )
        .unwrap();
        assert_eq!(
            to_vec(&padded).await,
            vec![1.0, 1.0, 2.0, 1.0, 1.0, 2.0, 3.0, 3.0, 4.0],
            "{stream}"
        );
        let tiled = ex::tile(js_value(&x), 2.into(), on(stream)).unwrap();
        assert_eq!(
            to_vec(&tiled).await,
            vec![1.0, 2.0, 1.0, 2.0, 3.0, 4.0, 3.0, 4.0],
            "{stream}"
        );
        let repeated = ex::repeat(
            js_value(&x),
            2.into(),
            options(&[("axis", 0.into()), ("stream", stream.into())]),
        )
        .unwrap();
        assert_eq!(
            to_vec(&repeated).await,
            vec![1.0, 2.0, 1.0, 2.0, 3.0, 4.0, 3.0, 4.0],
            "{stream}"
        );
        let rolled = ex::roll(js_value(&x), (-1).into(), on(stream)).unwrap();
        assert_eq!(to_vec(&rolled).await, vec![2.0, 3.0, 4.0, 1.0], "{stream}");
        let d = ex::diag(js_value(&x), on(stream), JsValue::UNDEFINED).unwrap();
        assert_eq!(to_vec(&d).await, vec![1.0, 4.0], "{stream}");
        let m = ex::diag(js_value(&float_array(&[5.0, 6.0])), 1.into(), on(stream)).unwrap();
        assert_eq!(
            to_vec(&m).await,
            vec![0.0, 5.0, 0.0, 0.0, 0.0, 6.0, 0.0, 0.0, 0.0],
            "{stream}"
        );
        let anti = ex::diagonal(
            js_value(&x),
            options(&[("offset", 1.into()), ("stream", stream.into())]),
        )
        .unwrap();
        assert_eq!(to_vec(&anti).await, vec![2.0], "{stream}");
    }
    let (name, text) = message(ex::pad(
        js_value(&x),
        floats(&[1.0, -1.0]),
        JsValue::UNDEFINED,
    ));
    assert_eq!(name, "ValueError");
    assert!(text.contains("pad") && text.contains("padWidth"), "{text}");
    let (name, text) = message(ex::pad(
        js_value(&x),
        1.into(),
        options(&[("mode", "reflect".into())]),
    ));
    assert_eq!(name, "ValueError");
    assert!(text.contains("\"reflect\""), "{text}");
    let (name, text) = message(ex::roll(
        js_value(&x),
        floats(&[1.0, 2.0, 3.0]),
        options(&[("axis", floats(&[0.0, 1.0]))]),
    ));
    assert_eq!(name, "ValueError");
    assert!(
        text.contains("roll") && text.contains("3 shifts for 2 axes"),
        "{text}"
    );
    let (name, text) = message(ex::diag(
        js_value(&tn::zeros(floats(&[2.0, 2.0, 2.0]), JsValue::UNDEFINED).unwrap()),
        JsValue::UNDEFINED,
        JsValue::UNDEFINED,
    ));
    assert_eq!(name, "ValueError");
    assert!(text.contains("1-D or 2-D"), "{text}");
}

#[wasm_bindgen_test]
async fn contractions_read_axes_subscripts_and_trailing_options() {
    runtime_info().await;
    let a = tn::array(
        floats(&[1.0, 2.0, 3.0, 4.0]),
        options(&[("shape", floats(&[2.0, 2.0]))]),
    )
    .unwrap();
    for stream in ["cpu", "gpu"] {
        let t = ex::tensordot(js_value(&a), js_value(&a), 1.into(), on(stream)).unwrap();
        assert_eq!(to_vec(&t).await, vec![7.0, 10.0, 15.0, 22.0], "{stream}");
        let lists = js_sys::Array::of2(&floats(&[0.0]), &floats(&[0.0]));
        let t = ex::tensordot(js_value(&a), js_value(&a), lists.into(), on(stream)).unwrap();
        assert_eq!(to_vec(&t).await, vec![10.0, 14.0, 14.0, 20.0], "{stream}");
        let operands = js_sys::Array::of3(&js_value(&a), &js_value(&a), &on(stream));
        let e = tn::einsum("ij,jk->ki".into(), operands).unwrap();
        assert_eq!(to_vec(&e).await, vec![7.0, 15.0, 10.0, 22.0], "{stream}");
    }
    let (name, text) = message(tn::einsum(
        "ij,jk".into(),
        js_sys::Array::of2(&js_value(&a), &js_value(&a)),
    ));
    assert_eq!(name, "ValueError");
    assert!(text.contains("einsum") && text.contains("->"), "{text}");
    let (name, text) = message(tn::einsum(
        "ij->i".into(),
        js_sys::Array::of2(&js_value(&a), &js_value(&a)),
    ));
    assert_eq!(name, "ValueError");
    assert!(text.contains("1 operands named for 2 given"), "{text}");
    let (name, text) = message(tn::einsum(
        "ijk->i".into(),
        js_sys::Array::of1(&js_value(&a)),
    ));
    assert_eq!(name, "ShapeError");
    assert!(text.contains("names 3 axes"), "{text}");
    let (name, text) = message(ex::tensordot(
        js_value(&a),
        js_value(&a),
        3.into(),
        JsValue::UNDEFINED,
    ));
    assert_eq!(name, "ValueError");
    assert!(
        text.contains("tensordot") && text.contains("3 axes"),
        "{text}"
    );
}
