//! Browser tests of streams and the scheduler: MLX's cross-device example, alternating chains,
//! transfer counters, a non-blocking API, and proof that CPU and GPU work overlap.

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

use tandem::js::functions::{add, array, exp, matmul, multiply};
use tandem::js::ndarray::NdArray;
use tandem::js::profile::profile;
use tandem::js::random::random_uniform;
use tandem::js::stream::evaluate;

use crate::common::*;

/// Uniform random numbers made on the GPU.
fn uniform(shape: &[f64]) -> NdArray {
    random_uniform(floats(shape), gpu()).unwrap()
}

#[wasm_bindgen_test]
async fn mlx_example_across_devices_equals_single_device_runs() {
    runtime_info().await;
    let a = uniform(&[4096.0]);
    let b = uniform(&[4096.0]);
    let run = |first: JsValue, second: JsValue| {
        let c = add(js_value(&a), js_value(&b), first).unwrap();
        add(js_value(&a), js_value(&c), second).unwrap()
    };
    let split = run(cpu(), gpu());
    let on_cpu = run(cpu(), cpu());
    let on_gpu = run(gpu(), gpu());
    assert_eq!(split.array().unwrap().device(), tandem::Device::Gpu);
    let expected = to_vec(&on_cpu).await;
    assert_eq!(to_vec(&split).await, expected);
    assert_eq!(to_vec(&on_gpu).await, expected);
}

#[wasm_bindgen_test]
async fn chains_alternating_devices_100_times_equal_a_single_device_run() {
    runtime_info().await;
    let start = array(floats(&[0.5, -1.25, 3.0, 0.0]), JsValue::UNDEFINED).unwrap();
    let step = array(floats(&[0.25, 0.5, -0.75, 1.0]), JsValue::UNDEFINED).unwrap();
    let chain = |device_of: &dyn Fn(usize) -> JsValue| {
        let mut x = start.clone_handle();
        for i in 0..100 {
            x = add(js_value(&x), js_value(&step), device_of(i)).unwrap();
            x = multiply(js_value(&x), js_value(&step), device_of(i)).unwrap();
        }
        x
    };
    let alternating = chain(&|i| if i % 2 == 0 { cpu() } else { gpu() });
    let on_cpu = chain(&|_| cpu());
    assert_eq!(to_vec(&alternating).await, to_vec(&on_cpu).await);
}

#[wasm_bindgen_test]
async fn each_array_crosses_once_and_memory_stats_count_the_bytes() {
    runtime_info().await;
    let a = array(floats(&[1.0; 100]), JsValue::UNDEFINED).unwrap();
    let b = array(floats(&[2.0; 100]), JsValue::UNDEFINED).unwrap();
    let (up, down) = (
        stat("transfer_bytes.cpu_to_gpu"),
        stat("transfer_bytes.gpu_to_cpu"),
    );
    let c = add(js_value(&a), js_value(&b), cpu()).unwrap();
    let d = add(js_value(&a), js_value(&c), gpu()).unwrap();
    assert_eq!(to_vec(&d).await, vec![4.0; 100]);
    assert_eq!(to_vec(&d).await, vec![4.0; 100]);
    assert_eq!(
        stat("transfer_bytes.cpu_to_gpu") - up,
        800.0,
        "a and c were uploaded once each"
    );
    assert_eq!(
        stat("transfer_bytes.gpu_to_cpu") - down,
        400.0,
        "d was read back once though read twice"
    );
    assert_eq!(
        stat("active_bytes.all.current"),
        stat("active_bytes.cpu.current") + stat("active_bytes.gpu.current")
    );
}

#[wasm_bindgen_test]
async fn the_page_keeps_running_while_the_gpu_works() {
    runtime_info().await;
    let a = uniform(&[256.0, 256.0]);
    let product = matmul(&a, &a, gpu()).unwrap();
    // A zero-delay timer can only fire before the readback resolves if nothing blocks the
    // thread until the GPU is done.
    let race = js_sys::Function::new_with_args(
        "read",
        "return Promise.race([read.then(() => 'read'), \
         new Promise(done => setTimeout(() => done('timer'), 0))])",
    );
    let read = product.to_array();
    let first = race.call1(&JsValue::NULL, &read).unwrap();
    let first = JsFuture::from(js_sys::Promise::from(first)).await.unwrap();
    assert_eq!(first.as_string().unwrap(), "timer");
    JsFuture::from(read).await.unwrap();
}

/// Runs a GPU matmul and a CPU chain of exps on separate streams in one evaluation, and
/// proves from the profile that the CPU part started before the GPU part could have ended.
#[wasm_bindgen_test]
async fn cpu_work_starts_before_gpu_work_ends() {
    let info = runtime_info().await;
    let a = uniform(&[256.0, 256.0]);
    let mut x = random_uniform(floats(&[65536.0]), cpu()).unwrap();
    let small = array(floats(&[1e-3]), JsValue::UNDEFINED).unwrap();
    JsFuture::from(evaluate(vec![js_value(&a), js_value(&x)]).unwrap())
        .await
        .unwrap();
    // Compile the pipelines first: a pipeline's first use waits for its compilation.
    let warm = matmul(&a, &a, gpu()).unwrap();
    to_vec(&warm).await;
    let product = matmul(&a, &a, gpu()).unwrap();
    // Every intermediate is held, so that fusion leaves the 120 ops to run one by one.
    let mut held = Vec::new();
    for _ in 0..60 {
        let e = exp(&x, cpu()).unwrap();
        x = multiply(js_value(&e), js_value(&small), cpu()).unwrap();
        held.push((e, x.clone_handle()));
    }
    let outputs = js_sys::Array::of2(&js_value(&product), &js_value(&x));
    let work = Closure::once_into_js(move || evaluate(outputs.iter().collect()).unwrap());
    let report = JsFuture::from(profile(work.unchecked_into()))
        .await
        .unwrap();

    let gpu_batches: js_sys::Array = get(&report, "gpu").unchecked_into();
    let cpu_spans: js_sys::Array = get(&report, "cpu").unchecked_into();
    assert_eq!(gpu_batches.length(), 1, "the matmul went in one batch");
    assert_eq!(cpu_spans.length(), 120, "60 exps and 60 multiplies");
    let batch = gpu_batches.get(0);
    let number = |v: &JsValue, key| get(v, key).as_f64().unwrap();
    let dims = |v: &JsValue| -> Vec<f64> {
        let shape: js_sys::Array = get(v, "shape").unchecked_into();
        shape.iter().map(|d| d.as_f64().unwrap()).collect()
    };
    let dispatch = get(&batch, "dispatches")
        .unchecked_into::<js_sys::Array>()
        .get(0);
    assert_eq!(get(&dispatch, "op").as_string().as_deref(), Some("matmul"));
    assert_eq!(dims(&dispatch), [256.0, 256.0]);
    assert_eq!(
        get(&cpu_spans.get(0), "op").as_string().as_deref(),
        Some("exp")
    );
    assert_eq!(dims(&cpu_spans.get(0)), [65536.0]);
    // Every input was where its op ran: nothing moved.
    let transfers: js_sys::Array = get(&report, "transfers").unchecked_into();
    assert_eq!(transfers.length(), 0);
    let submit = number(&batch, "submitMs");
    let cpu_start = number(&cpu_spans.get(0), "startMs");
    let cpu_end = number(&cpu_spans.get(119), "endMs");
    assert!(
        cpu_start >= submit,
        "the CPU part runs after the GPU batch is submitted"
    );

    let features: js_sys::Array = get(&info, "features").unchecked_into();
    if features.includes(&"timestamp-query".into(), 0) {
        // The GPU cannot start before the submit, so it cannot end before submit + its own
        // measured time: a CPU start before that is a CPU start during GPU work.
        let gpu_ms = number(&batch, "gpuMs");
        assert!(
            cpu_start < submit + gpu_ms,
            "CPU started {:.2} ms after the submit; the GPU needed {gpu_ms:.2} ms",
            cpu_start - submit
        );
        web_sys::console::log_1(
            &format!(
                "overlap: GPU matmul {gpu_ms:.1} ms from submit at {submit:.1}; CPU chain {:.1}..{:.1} ms",
                cpu_start, cpu_end
            )
            .into(),
        );
    } else {
        // Without timestamps, the GPU's completion report (an upper bound on its end) must
        // still come after the CPU started, or nothing overlapped.
        assert!(cpu_start < number(&batch, "doneMs"));
    }
}

/// A CPU op that reads an array computed on the GPU by an earlier evaluation gets it from a
/// copy submitted ahead of the new GPU work, so it need not wait for that work.
#[wasm_bindgen_test]
async fn a_readback_of_earlier_gpu_data_skips_ahead_of_new_gpu_work() {
    let info = runtime_info().await;
    let features: js_sys::Array = get(&info, "features").unchecked_into();
    // A matmul long enough (tens of ms on a software adapter) that a loaded machine's
    // scheduling jitter cannot close the gap between the exp's start and the GPU's end.
    let a = uniform(&[512.0, 512.0]);
    let on_gpu = uniform(&[4096.0]);
    let warm = matmul(&a, &a, gpu()).unwrap();
    to_vec(&warm).await;
    JsFuture::from(evaluate(vec![js_value(&on_gpu)]).unwrap())
        .await
        .unwrap();
    assert!(on_gpu.array().unwrap().storage().unwrap().on_gpu());

    let product = matmul(&a, &a, gpu()).unwrap();
    let from_gpu = exp(&on_gpu, cpu()).unwrap();
    let outputs = js_sys::Array::of2(&js_value(&product), &js_value(&from_gpu));
    let work = Closure::once_into_js(move || evaluate(outputs.iter().collect()).unwrap());
    let report = JsFuture::from(profile(work.unchecked_into()))
        .await
        .unwrap();
    let batch = get(&report, "gpu").unchecked_into::<js_sys::Array>().get(0);
    let span = get(&report, "cpu").unchecked_into::<js_sys::Array>().get(0);
    let number = |v: &JsValue, key| get(v, key).as_f64().unwrap();
    let (submit, cpu_start) = (number(&batch, "submitMs"), number(&span, "startMs"));
    // The one copy: on_gpu's 4096 floats to the CPU, arrived before the exp started.
    let transfers: js_sys::Array = get(&report, "transfers").unchecked_into();
    assert_eq!(transfers.length(), 1);
    let copy = transfers.get(0);
    assert_eq!(get(&copy, "to").as_string().as_deref(), Some("cpu"));
    assert_eq!(number(&copy, "bytes"), 16384.0);
    assert!(number(&copy, "atMs") <= cpu_start);
    if features.includes(&"timestamp-query".into(), 0) {
        let gpu_ms = number(&batch, "gpuMs");
        assert!(
            cpu_start < submit + gpu_ms,
            "exp started {:.2} ms after the submit; the matmul needed {gpu_ms:.2} ms",
            cpu_start - submit
        );
    }
    let expected: Vec<f32> = to_vec(&on_gpu).await.iter().map(|v| v.exp()).collect();
    let got = to_vec(&from_gpu).await;
    for (g, e) in got.iter().zip(&expected) {
        assert!((g - e).abs() <= 1e-6 * e.abs(), "{g} vs {e}");
    }
}

/// Three fresh lazy results of `x` (`xv` is its one JS handle) on the CPU stream, each 4 KiB,
/// as the JS values a page holds.
fn three_results(x: &NdArray, xv: &JsValue) -> [JsValue; 3] {
    [
        exp(x, cpu()).unwrap().into(),
        multiply(xv.clone(), xv.clone(), cpu()).unwrap().into(),
        add(xv.clone(), xv.clone(), cpu()).unwrap().into(),
    ]
}

/// `evaluate` takes trees as MLX's `mx.eval` does: arrays in JS arrays and plain objects are
/// computed exactly as when passed one by one, numbers and `null` are skipped, and a leaf of
/// any other kind is a `ValueError` that says where it is.
#[wasm_bindgen_test]
async fn evaluate_takes_trees_and_skips_numbers() {
    runtime_info().await;
    let active = || stat("active_bytes.all.current");
    let start = active();
    let x = float_array(&[0.5; 1024]);
    let xv = js_value(&x);
    JsFuture::from(evaluate(vec![xv.clone()]).unwrap())
        .await
        .unwrap();

    let flat = three_results(&x, &xv);
    let before = active();
    JsFuture::from(evaluate(flat.to_vec()).unwrap())
        .await
        .unwrap();
    let by_one = active() - before;
    assert!(by_one >= 3.0 * 4096.0, "{by_one}");

    let [b, c, d] = three_results(&x, &xv);
    let inner = js_sys::Object::new();
    js_sys::Reflect::set(&inner, &"c".into(), &c).unwrap();
    js_sys::Reflect::set(&inner, &"n".into(), &3.into()).unwrap();
    js_sys::Reflect::set(&inner, &"z".into(), &JsValue::NULL).unwrap();
    let list: js_sys::Array = [b.clone(), inner.into(), 7.into()].iter().collect();
    let before = active();
    JsFuture::from(evaluate(vec![list.into(), d.clone(), JsValue::NULL]).unwrap())
        .await
        .unwrap();
    assert_eq!(
        active() - before,
        by_one,
        "the tree's three arrays were computed"
    );
    let read = js_sys::Reflect::get(&c, &"toArray".into()).unwrap();
    let read: js_sys::Function = read.unchecked_into();
    assert_eq!(
        floats_of(read.call0(&c).unwrap().into()).await,
        vec![0.25; 1024]
    );

    let bad: js_sys::Array = [b.clone(), "x".into()].iter().collect();
    let err: js_sys::Error = evaluate(vec![b.clone(), bad.into()])
        .unwrap_err()
        .dyn_into()
        .unwrap();
    assert_eq!(String::from(err.name()), "ValueError");
    let message = String::from(err.message());
    assert!(message.contains("evaluate: argument 1[1]"), "{message}");
    dispose(&d);
    let err: js_sys::Error = evaluate(vec![[d].iter().collect::<js_sys::Array>().into()])
        .unwrap_err()
        .dyn_into()
        .unwrap();
    assert_eq!(String::from(err.name()), "DisposedArrayError");

    // Nothing kept: once every handle is disposed, the six arrays' bytes are back. (Other
    // tests' arrays that the garbage collector finalizes meanwhile may lower the count
    // further; a leak of this test's would raise it.)
    let holding = active();
    for a in flat.iter().chain([&b, &c, &xv]) {
        dispose(a);
    }
    x.dispose();
    JsFuture::from(tandem::js::stream::synchronize(JsValue::UNDEFINED).unwrap())
        .await
        .unwrap();
    let after = active();
    assert!(holding - after >= 6.0 * 4096.0, "{holding} -> {after}");
    assert!(after <= start, "active bytes {start} -> {after}");
}
