//! Browser tests of memory: the buffer cache, exact statistics, the memory limit, the cache
//! limit, `dispose`, `tidy` and the `FinalizationRegistry` safety net, in headless Chromium.
//! Every figure is exact; tests measure differences so they do not depend on each other.

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

use tandem::js::functions::{add, array, full, maximum, subtract};
use tandem::js::memory::*;
use tandem::js::ndarray::NdArray;
use tandem::js::random::random_uniform;
use tandem::js::stream::evaluate;
use tandem::js::tidy::tidy;

use crate::common::*;

const MIB: f64 = 1048576.0;

fn stat(key: &str) -> f64 {
    get(&memory_stats(), key)
        .as_f64()
        .unwrap_or_else(|| panic!("memoryStats() has no key {key}"))
}

// The tests hold NDArrays as the JS objects a page holds, never as extra handles, so that
// disposing one frees its memory.

fn gpu_array(bytes: f64) -> JsValue {
    random_uniform(floats(&[bytes / 4.0]), gpu())
        .unwrap()
        .into()
}

async fn eval(arrays: &[JsValue]) {
    JsFuture::from(evaluate(arrays.to_vec()).unwrap())
        .await
        .unwrap();
}

/// Calls the method `name` of a JS object.
fn call(object: &JsValue, name: &str) -> Result<JsValue, JsValue> {
    let method: js_sys::Function = js_sys::Reflect::get(object, &name.into())?.dyn_into()?;
    method.call0(object)
}

fn dispose(array: &JsValue) {
    call(array, "dispose").unwrap();
}

async fn read_i32(array: &JsValue) -> Vec<i32> {
    let typed = JsFuture::from(js_sys::Promise::from(call(array, "toArray").unwrap()))
        .await
        .unwrap();
    js_sys::Int32Array::from(typed).to_vec()
}

fn error_kind(err: JsValue) -> String {
    err.dyn_into::<js_sys::Error>().unwrap().name().into()
}

#[wasm_bindgen_test]
async fn a_4_mib_array_made_and_disposed_1000_times_reuses_one_buffer() {
    runtime_info().await;
    let source = gpu_array(4.0 * MIB);
    eval(std::slice::from_ref(&source)).await;
    clear_cache();
    let (active, allocs) = (get_active_memory(), stat("num_device_alloc"));
    for _ in 0..1000 {
        // A cheap op makes each 4 MiB GPU array (random numbers cost ~100 ms on SwiftShader).
        let x: JsValue = add(source.clone(), source.clone(), gpu()).unwrap().into();
        eval(std::slice::from_ref(&x)).await;
        dispose(&x);
    }
    assert_eq!(get_active_memory(), active);
    assert_eq!(get_cache_memory(), 4.0 * MIB, "one buffer in the cache");
    assert_eq!(stat("num_device_alloc") - allocs, 1.0);
    dispose(&source);
}

#[wasm_bindgen_test]
async fn peak_memory_is_the_true_maximum_of_live_bytes() {
    runtime_info().await;
    let base = get_active_memory();
    reset_peak_memory();
    let host = |mib: f64| JsValue::from(host_zeros(mib * MIB / 4.0).unwrap());
    let a = host(3.0);
    let b = host(2.0);
    dispose(&a);
    let c = host(4.0);
    let d = host(1.0);
    dispose(&b);
    dispose(&c);
    let e = host(1.0);
    // Live bytes over the script: 3, 5, 2, 6, 7, 1, 2 MiB over the base.
    assert_eq!(get_peak_memory(), base + 7.0 * MIB);
    reset_peak_memory();
    assert_eq!(get_peak_memory(), base + 2.0 * MIB);
    assert_eq!(get_peak_memory(), get_active_memory());
    dispose(&d);
    dispose(&e);
}

#[wasm_bindgen_test]
async fn a_64_mib_limit_fails_at_the_expected_array_and_recovers() {
    runtime_info().await;
    let previous = set_memory_limit(64.0 * MIB).unwrap();
    assert_eq!(previous, f64::INFINITY);
    assert_eq!(get_memory_limit(), 64.0 * MIB);
    let expected_failure = ((64.0 * MIB - get_active_memory()) / MIB).floor() as usize;
    let ooms = stat("num_ooms");
    let mut arrays = Vec::new();
    let mut failed_at = None;
    for i in 0..100 {
        match host_full_i32(MIB / 4.0, i as i32) {
            Ok(a) => arrays.push(JsValue::from(a)),
            Err(err) => {
                let message =
                    String::from(err.clone().dyn_into::<js_sys::Error>().unwrap().message());
                assert_eq!(error_kind(err), "MemoryLimitError");
                assert!(message.contains("limit 67108864 bytes"), "{message}");
                failed_at = Some(i);
                break;
            }
        }
    }
    assert_eq!(failed_at, Some(expected_failure));
    assert_eq!(stat("num_ooms") - ooms, 1.0);
    let info = get_memory_info();
    assert_eq!(get(&info, "total").as_f64(), Some(64.0 * MIB));
    for (i, a) in arrays.iter().enumerate() {
        let values = read_i32(a).await;
        assert!(values.iter().all(|&v| v == i as i32), "array {i} is intact");
    }
    for a in arrays.iter().step_by(2) {
        dispose(a);
    }
    let again = host_full_i32(MIB / 4.0, 7);
    assert!(again.is_ok(), "after disposing half, allocation succeeds");
    set_memory_limit(f64::INFINITY).unwrap();
    drop(again);
    arrays.iter().skip(1).step_by(2).for_each(dispose);
}

/// `count` zeros made from data, so their bytes are counted at once (creation ops are lazy:
/// `zeros` allocates when evaluated).
fn host_zeros(count: f64) -> Result<NdArray, JsValue> {
    array(
        js_sys::Float32Array::new_with_length(count as u32).into(),
        JsValue::UNDEFINED,
    )
}

/// `count` int32 copies of `value` made from data.
fn host_full_i32(count: f64, value: i32) -> Result<NdArray, JsValue> {
    let data = js_sys::Int32Array::new_with_length(count as u32);
    data.fill(value, 0, count as u32);
    array(data.into(), JsValue::UNDEFINED)
}

#[wasm_bindgen_test]
async fn an_8_mib_cache_limit_holds_and_drops_the_least_recently_freed() {
    runtime_info().await;
    clear_cache();
    let previous = set_cache_limit(8.0 * MIB).unwrap();
    let sizes = [3.0, 2.0, 1.0, 3.0, 2.0];
    let arrays: Vec<JsValue> = sizes.iter().map(|&m| gpu_array(m * MIB)).collect();
    eval(&arrays).await;
    for a in &arrays {
        dispose(a);
        assert!(get_cache_memory() <= 8.0 * MIB);
    }
    let cached: Vec<f64> = memory_snapshot()
        .iter()
        .filter(|e| get(e, "state").as_string().unwrap() == "cached")
        .filter(|e| get(e, "usage").as_string().as_deref() == Some("storage"))
        .map(|e| get(&e, "size").as_f64().unwrap() / MIB)
        .collect();
    assert_eq!(
        cached,
        vec![2.0, 1.0, 3.0, 2.0],
        "the first 3 MiB freed went first"
    );
    set_cache_limit(previous).unwrap();
}

const METRICS: [&str; 9] = [
    "allocation",
    "segment",
    "active",
    "allocated_bytes",
    "reserved_bytes",
    "active_bytes",
    "requested_bytes",
    "inactive_split",
    "inactive_split_bytes",
];
const POOLS: [&str; 5] = ["all", "large_pool", "small_pool", "cpu", "gpu"];

/// Per metric and pool, `current - (allocated - freed)`: zero unless the accumulated counts
/// were reset while blocks were live (another test's `resetAccumulatedMemoryStats`), and
/// constant from then on.
fn drift() -> Vec<f64> {
    let mut out = Vec::new();
    for pool in POOLS {
        for metric in METRICS {
            let key = |f: &str| stat(&format!("{metric}.{pool}.{f}"));
            out.push(key("current") - (key("allocated") - key("freed")));
        }
    }
    out
}

/// Active is at most reserved; current moves exactly as allocated less freed (from the
/// `drift` at the start); the pools add up.
fn assert_consistent(start: &[f64]) {
    assert_eq!(drift(), start, "current moves as allocated less freed");
    for pool in POOLS {
        assert!(
            stat(&format!("active_bytes.{pool}.current"))
                <= stat(&format!("reserved_bytes.{pool}.current"))
        );
        for metric in METRICS {
            let key = |f: &str| stat(&format!("{metric}.{pool}.{f}"));
            assert!(key("peak") >= key("current"), "{metric}.{pool}");
        }
    }
    let active = |p: &str| stat(&format!("active_bytes.{p}.current"));
    assert_eq!(active("all"), active("cpu") + active("gpu"));
    assert_eq!(active("all"), active("large_pool") + active("small_pool"));
    assert_eq!(get_active_memory(), active("all"));
    // Reserved bytes are live, cached (idle buffers) or inactive (free ranges of buffers
    // that live blocks also use).
    assert_eq!(
        get_cache_memory(),
        stat("reserved_bytes.all.current")
            - active("all")
            - stat("inactive_split_bytes.all.current")
    );
}

/// 10,000 random int32 ops on both streams with random disposes. Integer ops are exact on
/// both devices, so every held array is checked against values computed here; the final
/// active memory must equal the bytes of the held arrays' copies.
#[wasm_bindgen_test]
async fn ten_thousand_random_ops_keep_exact_accounts_and_correct_data() {
    runtime_info().await;
    let keys = memory_stats();
    for key in [
        "num_alloc_retries",
        "num_ooms",
        "num_sync_all_streams",
        "num_device_alloc",
        "num_device_free",
        "num_cache_hits",
        "num_cache_misses",
        "transfer_bytes.cpu_to_gpu",
        "transfer_bytes.gpu_to_cpu",
        "allocation.all.current",
        "requested_bytes.small_pool.peak",
    ] {
        assert!(get(&keys, key).as_f64().is_some(), "{key}");
    }
    collect_garbage().await;
    let base = get_active_memory();
    let start = drift();
    let mut seed = 12345u32;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    let mut held: Vec<(JsValue, Vec<i32>)> = Vec::new();
    for step in 0..10_000 {
        let stream = if next() % 2 == 0 { cpu() } else { gpu() };
        if held.len() < 2 || next() % 8 == 0 {
            let n = [1usize, 5, 64, 3000][next() as usize % 4];
            let values: Vec<i32> = (0..n).map(|_| (next() % 200) as i32 - 100).collect();
            let typed = js_sys::Int32Array::from(&values[..]);
            let array = tandem::js::functions::array(typed.into(), JsValue::UNDEFINED).unwrap();
            held.push((array.into(), values));
        } else {
            let (i, j) = (next() as usize % held.len(), next() as usize % held.len());
            if held[i].1.len() == held[j].1.len() {
                let (a, b) = (held[i].0.clone(), held[j].0.clone());
                let (out, f): (NdArray, fn(i32, i32) -> i32) = match next() % 3 {
                    0 => (add(a, b, stream).unwrap(), i32::wrapping_add),
                    1 => (subtract(a, b, stream).unwrap(), i32::wrapping_sub),
                    _ => (maximum(a, b, stream).unwrap(), i32::max),
                };
                let values = held[i]
                    .1
                    .iter()
                    .zip(&held[j].1)
                    .map(|(&x, &y)| f(x, y))
                    .collect();
                held.push((out.into(), values));
            }
        }
        if held.len() > 40 || next() % 5 == 0 {
            let k = next() as usize % held.len();
            dispose(&held.swap_remove(k).0);
        }
        if step % 101 == 0 {
            eval(&held.iter().map(|(a, _)| a.clone()).collect::<Vec<_>>()).await;
            assert_consistent(&start);
        }
    }
    eval(&held.iter().map(|(a, _)| a.clone()).collect::<Vec<_>>()).await;
    assert_consistent(&start);
    let rounded = |bytes: u64| tandem::memory::policy::rounded(bytes) as f64;
    let mut seen = std::collections::HashSet::new();
    let held_bytes: f64 = held
        .iter()
        .filter_map(|(a, _)| NdArray::from_js("test", a).unwrap().storage())
        .filter(|s| seen.insert(std::rc::Rc::as_ptr(s)))
        .map(|s| {
            let bytes = (s.len() * 4) as u64;
            f64::from(u8::from(s.on_gpu())) * rounded(bytes.max(4))
                + f64::from(u8::from(s.on_host())) * rounded(bytes)
        })
        .sum();
    assert_eq!(
        get_active_memory(),
        base + held_bytes,
        "active is exactly the held arrays"
    );
    for (array, expected) in &held {
        assert_eq!(read_i32(array).await, *expected);
    }
    for (array, _) in &held {
        dispose(array);
    }
}

/// Creation ops are lazy nodes on their stream: nothing is allocated until they run, and then
/// on the device their stream names.
#[wasm_bindgen_test]
async fn creation_ops_allocate_when_evaluated_on_their_stream() {
    runtime_info().await;
    let base = get_active_memory();
    let z: JsValue = tandem::js::functions::zeros(floats(&[1048576.0]), gpu())
        .unwrap()
        .into();
    assert_eq!(
        get_active_memory(),
        base,
        "4 MiB of zeros, not yet evaluated"
    );
    eval(std::slice::from_ref(&z)).await;
    assert_eq!(get_active_memory(), base + 4.0 * MIB);
    assert!(stat("active_bytes.gpu.current") >= 4.0 * MIB, "on the GPU");
    dispose(&z);
    assert_eq!(get_active_memory(), base);
}

#[wasm_bindgen_test]
async fn a_disposed_array_throws_disposed_array_error() {
    runtime_info().await;
    let base = get_active_memory();
    let a: JsValue = host_zeros(1024.0).unwrap().into();
    assert_eq!(get_active_memory(), base + 4096.0);
    call(&a, "dispose").unwrap();
    assert_eq!(get_active_memory(), base);
    assert_eq!(
        js_sys::Reflect::get(&a, &"isDisposed".into()).unwrap(),
        JsValue::TRUE
    );
    call(&a, "dispose").expect("disposing twice does nothing");
    let shape = js_sys::Reflect::get(&a, &"shape".into());
    assert_eq!(error_kind(shape.unwrap_err()), "DisposedArrayError");
    let err = add(a.clone(), 1.into(), cpu()).err().unwrap();
    assert_eq!(error_kind(err), "DisposedArrayError");
    let read = JsFuture::from(js_sys::Promise::from(call(&a, "toArray").unwrap())).await;
    assert_eq!(error_kind(read.unwrap_err()), "DisposedArrayError");
    assert_eq!(
        call(&a, "toString").unwrap().as_string().unwrap(),
        "NDArray(disposed)"
    );

    let b: JsValue = host_zeros(256.0).unwrap().into();
    let symbol = js_sys::Reflect::get(&js_sys::global(), &"Symbol".into()).unwrap();
    let dispose_key = js_sys::Reflect::get(&symbol, &"dispose".into()).unwrap();
    let method: js_sys::Function = js_sys::Reflect::get(&b, &dispose_key).unwrap().into();
    method.call0(&b).unwrap();
    assert_eq!(get_active_memory(), base, "[Symbol.dispose] disposes");
    let disposed = js_sys::Reflect::get(&b, &"isDisposed".into()).unwrap();
    assert_eq!(
        disposed,
        JsValue::TRUE,
        "and keeps the object, so later use is a typed error"
    );
}

#[wasm_bindgen_test]
async fn tidy_disposes_what_the_function_made_except_what_it_returns() {
    runtime_info().await;
    collect_garbage().await;
    let base = get_active_memory();
    let kept = Closure::once_into_js(move || {
        let a = host_zeros(256.0).unwrap();
        let b = add(JsValue::from(a), 1.into(), cpu()).unwrap();
        let inner = Closure::once_into_js(move || host_zeros(512.0).unwrap());
        let from_inner = tidy(inner.unchecked_ref()).unwrap();
        js_sys::Array::of2(&JsValue::from(b), &from_inner)
    });
    let result = tidy(kept.unchecked_ref()).unwrap();
    let result = js_sys::Array::from(&result);
    assert_eq!(result.length(), 2);
    // b is lazy, so its graph still holds a's data (1024 bytes) and the scalar 1 (one
    // 256-byte unit); the inner tidy's array (2048 bytes) was returned through both tidies.
    assert_eq!(get_active_memory(), base + 1024.0 + 256.0 + 2048.0);
    let thrower = Closure::once_into_js(move || -> Result<JsValue, JsValue> {
        let _leaked = host_zeros(4096.0).unwrap();
        Err(js_sys::Error::new("boom").into())
    });
    let err = tidy(thrower.unchecked_ref()).unwrap_err();
    assert_eq!(
        String::from(err.dyn_into::<js_sys::Error>().unwrap().message()),
        "boom"
    );
    assert_eq!(
        get_active_memory(),
        base + 3328.0,
        "a throwing fn keeps nothing it made"
    );
    let promise = Closure::once_into_js(move || js_sys::Promise::resolve(&JsValue::NULL));
    assert_eq!(
        error_kind(tidy(promise.unchecked_ref()).unwrap_err()),
        "ValueError"
    );
    for item in result.iter() {
        call(&item, "dispose").unwrap();
    }
    assert_eq!(get_active_memory(), base);
}

/// Arrays that JS forgot are freed by wasm-bindgen's FinalizationRegistry once collected.
#[wasm_bindgen_test]
async fn forgotten_arrays_are_freed_after_garbage_collection() {
    runtime_info().await;
    collect_garbage().await;
    let base = get_active_memory();
    make_and_forget(200);
    assert_eq!(get_active_memory(), base + 200.0 * 65536.0);
    collect_garbage().await;
    assert_eq!(get_active_memory(), base, "every forgotten array was freed");
}

/// Makes arrays and hands them to JS, which drops them at once.
#[inline(never)]
fn make_and_forget(count: usize) {
    let holder = js_sys::Array::new();
    for _ in 0..count {
        holder.push(&host_zeros(16384.0).unwrap().into());
    }
    holder.set_length(0);
}

#[wasm_bindgen_test]
async fn init_runtime_limits_summary_snapshot_and_resets() {
    let opts = options(&[
        ("memoryLimit", (256.0 * MIB).into()),
        ("cacheLimit", (32.0 * MIB).into()),
    ]);
    JsFuture::from(tandem::js::runtime::init_runtime(opts).unwrap())
        .await
        .unwrap();
    assert_eq!(
        get_memory_limit(),
        256.0 * MIB,
        "applied though the runtime had started"
    );
    assert_eq!(set_cache_limit(16.0 * MIB).unwrap(), 32.0 * MIB);
    assert_eq!(
        error_kind(set_memory_limit(-1.0).unwrap_err()),
        "ValueError"
    );

    let a: JsValue = full(floats(&[1000.0]), 3.into(), JsValue::UNDEFINED)
        .unwrap()
        .into();
    let b: JsValue = add(a.clone(), a.clone(), gpu()).unwrap().into();
    eval(std::slice::from_ref(&b)).await;
    let snapshot = memory_snapshot();
    let ops: Vec<String> = snapshot
        .iter()
        .filter(|e| get(e, "state").as_string().as_deref() == Some("active"))
        .map(|e| get(&e, "op").as_string().unwrap())
        .collect();
    assert!(
        ops.iter().any(|op| op == "add"),
        "b's buffer names its op: {ops:?}"
    );
    let b_block = snapshot
        .iter()
        .find(|e| get(e, "op").as_string().as_deref() == Some("add"))
        .unwrap();
    assert_eq!(get(&b_block, "requestedSize").as_f64(), Some(4000.0));
    assert_eq!(get(&b_block, "size").as_f64(), Some(4096.0));
    assert_eq!(get(&b_block, "device").as_string().as_deref(), Some("gpu"));
    assert!(
        get(&b_block, "stream")
            .as_string()
            .unwrap()
            .starts_with("gpu:")
    );

    let info = get_memory_info();
    let (free, total) = (
        get(&info, "free").as_f64().unwrap(),
        get(&info, "total").as_f64().unwrap(),
    );
    assert_eq!(total, 256.0 * MIB);
    assert_eq!(free, total - get_active_memory());

    let text = memory_summary();
    assert!(
        text.contains("Active memory") && text.contains("memory limit: 256 MiB"),
        "{text}"
    );

    reset_accumulated_memory_stats();
    assert_eq!(stat("num_device_alloc"), 0.0);
    assert_eq!(stat("active_bytes.all.allocated"), 0.0);
    assert_eq!(
        stat("active_bytes.all.current"),
        get_active_memory(),
        "current values stay"
    );
    dispose(&a);
    dispose(&b);
    set_memory_limit(f64::INFINITY).unwrap();
}
