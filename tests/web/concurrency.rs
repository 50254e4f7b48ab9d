//! Concurrency in the browser, in the form pages write it: calls started without awaiting and
//! awaited in any order give the values of the same calls awaited in program order. The first
//! five are the repros that once failed; `web_interleave.rs` runs random programs of such calls.

use js_sys::{Float32Array, Int32Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

use tandem::js::functions::{add, astype, exp, multiply, neg, sum};
use tandem::js::memory::{clear_cache, set_cache_limit, set_memory_limit};
use tandem::js::random::random_uniform;
use tandem::js::stream::{new_stream, synchronize};
use tandem::memory::device_errors::fail_next_buffers_for_tests;

use crate::common::*;

#[wasm_bindgen_test]
async fn a_read_during_an_unawaited_evaluate_waits_for_its_writes() {
    runtime_info().await;
    for input_stream in ["cpu", "gpu"] {
        // Any earlier GPU read, as in the report.
        let warm = add(float_array(&[1.0, 2.0]).into(), 1.into(), on("gpu")).unwrap();
        floats_of(warm.to_array()).await;
        // The input is made on the stream under test.
        let x = add(
            float_array(&[1.0, 2.0, 3.0, 4.0]).into(),
            0.into(),
            on(input_stream),
        )
        .unwrap();
        let y = binary(add, &x, &x, on("gpu"));
        let pending = start_evaluate(&[&y]);
        assert_eq!(floats_of(y.to_array()).await, vec![2.0, 4.0, 6.0, 8.0]);
        assert_eq!(
            floats_of(y.to_array()).await,
            vec![2.0, 4.0, 6.0, 8.0],
            "read again"
        );
        settle(pending).await.unwrap();
    }
}

#[wasm_bindgen_test]
async fn reads_in_one_promise_all_during_an_evaluate_are_right() {
    runtime_info().await;
    let values: Vec<f32> = (0..1000).map(|i| (i % 17) as f32 * 0.25).collect();
    let x = float_array(&values);
    let e = exp(&x, on("gpu")).unwrap();
    let s = sum(&x, on("gpu")).unwrap();
    let n = neg(&x, on("cpu")).unwrap();
    let pending = start_evaluate(&[&x, &e, &s, &n]);
    let reads = js_sys::Array::of4(&x.to_array(), &e.to_array(), &s.to_array(), &n.to_array());
    let all = settle(js_sys::Promise::all(&reads)).await.unwrap();
    let all: js_sys::Array = all.unchecked_into();
    let got = |i: u32| all.get(i).dyn_into::<Float32Array>().unwrap().to_vec();
    assert_eq!(got(0), values);
    for (g, v) in got(1).iter().zip(&values) {
        assert!((g - v.exp()).abs() <= 1e-5 * v.exp(), "exp({v}) = {g}");
    }
    assert_eq!(got(2), vec![values.iter().sum::<f32>()]);
    assert_eq!(got(3), values.iter().map(|v| -v).collect::<Vec<_>>());
    settle(pending).await.unwrap();
}

#[wasm_bindgen_test]
async fn fire_and_forget_evaluates_on_four_streams_then_reads_backwards() {
    runtime_info().await;
    let streams = [
        on("gpu"),
        on("cpu"),
        options(&[("stream", new_stream("gpu").unwrap().into())]),
        options(&[("stream", new_stream("cpu").unwrap().into())]),
    ];
    let one = float_array(&[1.0; 64]);
    let mut steps = vec![float_array(&[0.0; 64])];
    let mut evaluates = Vec::new();
    for i in 0..40 {
        let next = binary(add, &steps[i], &one, streams[i % 4].clone());
        // Fire and forget, as a page that never awaits its evaluates.
        evaluates.push(start_evaluate(&[&next]));
        steps.push(next);
    }
    for (i, step) in steps.iter().enumerate().rev() {
        assert_eq!(
            floats_of(step.to_array()).await,
            vec![i as f32; 64],
            "step {i}"
        );
    }
    // Only so that the next test starts with nothing of this one in flight.
    for evaluate in evaluates {
        settle(evaluate).await.unwrap();
    }
}

#[wasm_bindgen_test]
async fn a_reduction_after_astype_with_the_cast_read_in_flight_under_a_limit() {
    runtime_info().await;
    // Disposed GPU arrays of other values in the cache, and a limit that makes allocations
    // trim it and retry.
    for _ in 0..8 {
        let junk = random_uniform(floats(&[4096.0]), on("gpu")).unwrap();
        settle(start_evaluate(&[&junk])).await.unwrap();
        junk.dispose();
    }
    let previous = set_memory_limit(stat("active_bytes.all.current") + 256.0 * 1024.0).unwrap();
    let values: Vec<f32> = (0..4096).map(|i| ((i * 7) % 11) as f32 - 5.2).collect();
    let expected: i32 = values.iter().map(|&v| v as i32).sum();
    let x = float_array(&values);
    let cast = astype(&x, "int32", on("gpu")).unwrap();
    let cast_read = cast.to_array();
    let total = sum(&cast, on("gpu")).unwrap();
    let got = settle(total.to_array()).await.unwrap();
    assert_eq!(Int32Array::from(got).to_vec(), vec![expected]);
    let cast_values = Int32Array::from(settle(cast_read).await.unwrap()).to_vec();
    assert_eq!(cast_values.iter().sum::<i32>(), expected);
    set_memory_limit(previous).unwrap();
}

#[wasm_bindgen_test]
async fn a_memory_limit_error_leaves_live_arrays_readable() {
    runtime_info().await;
    let x = float_array(&[10.0; 1024]);
    let held = exp(&x, on("gpu")).unwrap();
    let expected = floats_of(held.to_array()).await;
    let previous = set_memory_limit(stat("active_bytes.all.current") + 64.0 * 1024.0).unwrap();
    let big = random_uniform(floats(&[1024.0, 1024.0]), on("gpu")).unwrap();
    let failing = start_evaluate(&[&big]);
    let read = held.to_array();
    let err = settle(failing).await.unwrap_err();
    assert_eq!(
        String::from(err.unchecked_ref::<js_sys::Error>().name()),
        "MemoryLimitError"
    );
    assert_eq!(floats_of(read).await, expected);
    assert_eq!(floats_of(held.to_array()).await, expected);
    set_memory_limit(previous).unwrap();
    big.dispose();
}

#[wasm_bindgen_test]
async fn readers_of_one_array_share_one_readback() {
    runtime_info().await;
    let x = float_array(&[3.0; 256]);
    let y = binary(multiply, &x, &x, on("gpu"));
    let before = stat("transfer_bytes.gpu_to_cpu");
    let reads = js_sys::Array::of3(&y.to_array(), &y.tolist(), &y.to_array());
    let all: js_sys::Array = settle(js_sys::Promise::all(&reads))
        .await
        .unwrap()
        .unchecked_into();
    assert_eq!(Float32Array::from(all.get(0)).to_vec(), vec![9.0; 256]);
    assert_eq!(Float32Array::from(all.get(2)).to_vec(), vec![9.0; 256]);
    assert_eq!(js_sys::Array::from(&all.get(1)).length(), 256);
    assert_eq!(
        stat("transfer_bytes.gpu_to_cpu") - before,
        1024.0,
        "three readers, one copy to the host"
    );
}

#[wasm_bindgen_test]
async fn dispose_and_cache_trims_during_reads_leave_every_value_intact() {
    // The test before this one leaves arrays whose frees land at the next synchronize, and
    // earlier ones leave arrays to the collector: both settled before the count is taken.
    settled_runtime_info().await;
    let active = stat("active_bytes.all.current");
    let x = float_array(&[2.0; 4096]);
    let y = exp(&x, on("gpu")).unwrap();
    let z = binary(add, &y, &x, on("gpu"));
    let expected: Vec<f32> = floats_of(z.to_array()).await;
    let w = binary(multiply, &z, &x, on("gpu"));
    // Reads started, then their arrays disposed and the cache emptied and disabled while
    // the copies are in flight.
    let read_w = w.to_array();
    let read_z = z.to_array();
    w.dispose();
    z.dispose();
    clear_cache();
    let previous = set_cache_limit(0.0).unwrap();
    let doubled: Vec<f32> = expected.iter().map(|v| v * 2.0).collect();
    assert_eq!(floats_of(read_w).await, doubled);
    assert_eq!(floats_of(read_z).await, expected);
    set_cache_limit(previous).unwrap();
    x.dispose();
    y.dispose();
    settle(synchronize(JsValue::UNDEFINED).unwrap())
        .await
        .unwrap();
    assert_eq!(stat("active_bytes.all.current"), active, "all of it freed");
}

#[wasm_bindgen_test]
async fn a_buffer_the_gpu_failed_to_create_is_never_seen_by_another_call() {
    runtime_info().await;
    let x = float_array(&[1.5; 1000]);
    let warm = binary(add, &x, &x, on("gpu"));
    floats_of(warm.to_array()).await;
    // The next buffer created is y's, reported lost at once; z's report takes a while. A
    // call that uses y meanwhile must not meet the lost buffer: the batch is discarded first
    // and every node in it runs again.
    clear_cache();
    fail_next_buffers_for_tests(1);
    let y = binary(add, &x, &x, on("gpu"));
    let z = exp(&y, on("gpu")).unwrap();
    let evaluating = start_evaluate(&[&z]);
    let w = binary(multiply, &y, &x, on("gpu"));
    let read = w.to_array();
    settle(evaluating).await.unwrap();
    assert_eq!(floats_of(read).await, vec![4.5; 1000]);
    assert_eq!(floats_of(y.to_array()).await, vec![3.0; 1000]);
    for v in floats_of(z.to_array()).await {
        assert!((v - 3f32.exp()).abs() <= 1e-5 * 3f32.exp(), "{v}");
    }
}
