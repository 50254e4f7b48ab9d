//! The PyTorch and torch_npu memory names in the browser: a scripted sequence of allocations,
//! frees, cache hits, a limit failure and resets, with the exact value of every PyTorch-named
//! function after each step, on both devices and in total, and the torch invariants for every
//! key of `memoryStats()`.
#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

#[path = "web/common/mod.rs"]
mod common;

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

use tandem::js::functions::{add, array};
use tandem::js::memory::{memory_stats, set_memory_limit};
use tandem::js::ndarray::NdArray;
use tandem::js::torch::*;
use tandem::memory::policy::rounded;

use crate::common::*;

/// The PyTorch-named byte counts of one scope: allocated, max allocated, reserved, max reserved.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Counts {
    allocated: f64,
    max_allocated: f64,
    reserved: f64,
    max_reserved: f64,
}

const SCOPES: [&str; 3] = ["all", "cpu", "gpu"];

fn device_value(scope: &str) -> JsValue {
    match scope {
        "all" => JsValue::UNDEFINED,
        device => device.into(),
    }
}

/// Every PyTorch-named function for `scope`, checked against the statistics it views.
fn counts(scope: &str) -> Counts {
    let d = || device_value(scope);
    let counts = Counts {
        allocated: memory_allocated(d()).unwrap(),
        max_allocated: max_memory_allocated(d()).unwrap(),
        reserved: memory_reserved(d()).unwrap(),
        max_reserved: max_memory_reserved(d()).unwrap(),
    };
    assert_eq!(memory_cached(d()).unwrap(), counts.reserved);
    assert_eq!(max_memory_cached(d()).unwrap(), counts.max_reserved);
    assert_eq!(
        counts.allocated,
        stat(&format!("allocated_bytes.{scope}.current"))
    );
    assert_eq!(
        counts.max_allocated,
        stat(&format!("allocated_bytes.{scope}.peak"))
    );
    assert_eq!(
        counts.reserved,
        stat(&format!("reserved_bytes.{scope}.current"))
    );
    assert_eq!(
        counts.max_reserved,
        stat(&format!("reserved_bytes.{scope}.peak"))
    );
    counts
}

fn all_counts() -> [Counts; 3] {
    SCOPES.map(counts)
}

/// The torch invariants for every key: current moves with allocated less freed (it equals
/// it on a page that never reset them with memory held: `base`, from [`gauge_offsets`]), the
/// peak is at least the current value, and active bytes are at most reserved bytes.
fn assert_invariants(base: &std::collections::BTreeMap<String, f64>) {
    let stats = memory_stats();
    let value = |key: &str| get(&stats, key).as_f64().unwrap();
    assert_eq!(&gauge_offsets(), base, "current less (allocated - freed)");
    for prefix in base.keys() {
        let current = value(&format!("{prefix}.current"));
        assert!(value(&format!("{prefix}.peak")) >= current, "{prefix}");
    }
    for scope in ["all", "large_pool", "small_pool", "cpu", "gpu"] {
        let active = value(&format!("active_bytes.{scope}.current"));
        let reserved = value(&format!("reserved_bytes.{scope}.current"));
        assert!(
            active <= reserved,
            "{scope}: active {active} > reserved {reserved}"
        );
    }
}

/// `expected` with `delta` bytes added to the current values of `scopes` (peaks follow when
/// they are passed).
fn grow(expected: &mut [Counts; 3], scopes: &[&str], allocated: f64, reserved: f64) {
    for (i, scope) in SCOPES.iter().enumerate() {
        if scopes.contains(scope) {
            let c = &mut expected[i];
            c.allocated += allocated;
            c.reserved += reserved;
            c.max_allocated = c.max_allocated.max(c.allocated);
            c.max_reserved = c.max_reserved.max(c.reserved);
        }
    }
}

async fn evaluated(a: &NdArray) {
    JsFuture::from(start_evaluate(&[a])).await.unwrap();
}

#[wasm_bindgen_test]
async fn a_scripted_sequence_gives_exact_pytorch_figures_after_every_step() {
    runtime_info().await;
    JsFuture::from(tandem::js::stream::synchronize(JsValue::UNDEFINED).unwrap())
        .await
        .unwrap();
    empty_cache();
    reset_max_memory_allocated(JsValue::UNDEFINED).unwrap();
    reset_max_memory_cached(JsValue::UNDEFINED).unwrap();
    let base = gauge_offsets();
    let mut expected = all_counts();
    for c in &expected {
        assert_eq!(c.allocated, c.max_allocated);
        assert_eq!(c.reserved, c.max_reserved);
    }
    assert_invariants(&base);

    // A host array of 1,024 floats: a host block on the cpu.
    let size = rounded(4096) as f64;
    let data = js_sys::Float32Array::from(&[1.5f32; 1024][..]);
    let a = array(data.into(), JsValue::UNDEFINED).unwrap();
    grow(&mut expected, &["all", "cpu"], size, size);
    assert_eq!(all_counts(), expected, "after array()");
    assert_invariants(&base);

    // An add on the GPU: a's upload and the result, each carved from a new 2 MiB buffer (the
    // cache is empty, and an op's output never shares a buffer with its inputs).
    let b = add(js_value(&a), js_value(&a), gpu()).unwrap();
    evaluated(&b).await;
    let segment = tandem::memory::allocator::SMALL_SEGMENT as f64;
    grow(&mut expected, &["all", "gpu"], 2.0 * size, 2.0 * segment);
    assert_eq!(all_counts(), expected, "after add on the gpu");
    assert_invariants(&base);

    // Disposing the result returns its buffer to the cache: allocated falls, reserved stays.
    b.dispose();
    JsFuture::from(tandem::js::stream::synchronize(JsValue::UNDEFINED).unwrap())
        .await
        .unwrap();
    grow(&mut expected, &["all", "gpu"], -size, 0.0);
    assert_eq!(all_counts(), expected, "after dispose");
    assert_invariants(&base);

    // The same add again is served from the cache: reserved does not move.
    let hits = stat("num_cache_hits");
    let c = add(js_value(&a), js_value(&a), gpu()).unwrap();
    evaluated(&c).await;
    assert_eq!(stat("num_cache_hits"), hits + 1.0);
    grow(&mut expected, &["all", "gpu"], size, 0.0);
    assert_eq!(all_counts(), expected, "after a cache hit");
    assert_invariants(&base);

    // A limit failure changes no figure but the OOM count.
    let ooms = stat("num_ooms");
    let active = tandem::js::memory::get_active_memory();
    set_memory_limit(active + 1024.0).unwrap();
    let big = add(js_value(&a), 1.into(), gpu()).unwrap();
    // The number operand is a one-element host array until `big` goes.
    let word = rounded(4) as f64;
    grow(&mut expected, &["all", "cpu"], word, word);
    let refused = JsFuture::from(start_evaluate(&[&big])).await;
    assert!(describe(&refused.expect_err("past the limit")).starts_with("MemoryLimitError"));
    set_memory_limit(f64::INFINITY).unwrap();
    drop(big);
    grow(&mut expected, &["all", "cpu"], -word, -word);
    assert_eq!(stat("num_ooms"), ooms + 1.0);
    // Before refusing, the runtime dropped a's GPU copy, which its host copy can re-derive:
    // allocated falls by one block on the gpu. Reserved depends on what the trim destroyed.
    grow(&mut expected, &["all", "gpu"], -size, 0.0);
    let now = all_counts();
    for (i, scope) in SCOPES.iter().enumerate() {
        assert_eq!(
            now[i].allocated, expected[i].allocated,
            "{scope} after the refusal"
        );
        assert_eq!(
            now[i].max_allocated, expected[i].max_allocated,
            "{scope} after the refusal"
        );
    }
    expected = now;
    assert_invariants(&base);

    // Resets: one peak at a time, per device.
    c.dispose();
    JsFuture::from(tandem::js::stream::synchronize(JsValue::UNDEFINED).unwrap())
        .await
        .unwrap();
    grow(&mut expected, &["all", "gpu"], -size, 0.0);
    assert_eq!(all_counts(), expected, "after the second dispose");
    reset_max_memory_allocated("gpu".into()).unwrap();
    expected[2].max_allocated = expected[2].allocated;
    assert_eq!(
        all_counts(),
        expected,
        "after resetMaxMemoryAllocated('gpu')"
    );
    reset_max_memory_cached(JsValue::UNDEFINED).unwrap();
    for c in &mut expected {
        c.max_reserved = c.reserved;
    }
    assert_eq!(all_counts(), expected, "after resetMaxMemoryCached()");
    empty_cache();
    let gpu_cached = expected[2].reserved - expected[2].allocated;
    grow(&mut expected, &["all", "gpu"], 0.0, -gpu_cached);
    assert_eq!(all_counts(), expected, "after emptyCache()");
    assert_eq!(expected[2].reserved, expected[2].allocated);
    assert_invariants(&base);
    drop(a);
}

#[wasm_bindgen_test]
async fn the_nested_dict_flattens_back_to_memory_stats() {
    runtime_info().await;
    let nested = memory_stats_as_nested_dict(JsValue::UNDEFINED).unwrap();
    let flat = memory_stats();
    let mut count = 0;
    fn walk(node: &JsValue, prefix: &str, out: &mut Vec<(String, f64)>) {
        for key in js_sys::Object::keys(node.unchecked_ref::<js_sys::Object>()).iter() {
            let key = key.as_string().unwrap();
            let child = get(node, &key);
            let path = if prefix.is_empty() {
                key
            } else {
                format!("{prefix}.{key}")
            };
            match child.as_f64() {
                Some(v) => out.push((path, v)),
                None => walk(&child, &path, out),
            }
        }
    }
    let mut leaves = Vec::new();
    walk(&nested, "", &mut leaves);
    for (key, value) in &leaves {
        assert_eq!(get(&flat, key).as_f64(), Some(*value), "{key}");
        count += 1;
    }
    assert_eq!(
        count,
        js_sys::Object::keys(flat.unchecked_ref::<js_sys::Object>()).length() as usize
    );
    let gpu_only = memory_stats_as_nested_dict("gpu".into()).unwrap();
    let allocated = get(&get(&get(&gpu_only, "allocated_bytes"), "gpu"), "current");
    assert_eq!(
        allocated.as_f64(),
        Some(stat("allocated_bytes.gpu.current"))
    );
    assert!(get(&get(&gpu_only, "allocated_bytes"), "cpu").is_undefined());
}

#[wasm_bindgen_test]
async fn device_properties_fraction_wired_limit_and_allocator_policy() {
    let info = runtime_info().await;
    let props = get_device_properties(JsValue::UNDEFINED).unwrap();
    let total = get(&props, "totalMemory").as_f64().unwrap();
    assert!(total > 0.0);
    let limits = get(&info, "limits");
    assert_eq!(get(&props, "maxBufferSize"), get(&limits, "maxBufferSize"));
    assert!(!get(&props, "name").as_string().unwrap().is_empty());
    let cpu_props = get_device_properties("cpu".into()).unwrap();
    assert!(get(&cpu_props, "totalMemory").as_f64().unwrap() <= 4.0 * 1024.0 * 1024.0 * 1024.0);
    assert!(get(&cpu_props, "maxBufferSize").is_null());

    set_per_process_memory_fraction(0.5.into(), JsValue::UNDEFINED).unwrap();
    assert_eq!(
        tandem::js::memory::get_memory_limit(),
        (0.5 * total).floor()
    );
    let memory_info = tandem::js::memory::get_memory_info();
    assert_eq!(
        get(&memory_info, "total").as_f64(),
        Some((0.5 * total).floor())
    );
    set_memory_limit(f64::INFINITY).unwrap();
    let memory_info = tandem::js::memory::get_memory_info();
    assert_eq!(
        get(&memory_info, "total").as_f64(),
        Some(total),
        "totalMemory without a limit"
    );
    for bad in [
        JsValue::from(0),
        1.5.into(),
        "half".into(),
        JsValue::UNDEFINED,
    ] {
        let err = set_per_process_memory_fraction(bad, JsValue::UNDEFINED).unwrap_err();
        assert!(
            describe(&err).starts_with("ValueError"),
            "{}",
            describe(&err)
        );
    }
    let err = memory_allocated("tpu".into()).unwrap_err();
    assert!(
        describe(&err).starts_with("ValueError"),
        "{}",
        describe(&err)
    );

    assert_eq!(set_wired_limit(1024.into()).unwrap(), 0.0);
    assert_eq!(set_wired_limit(0.into()).unwrap(), 1024.0);
    assert!(set_wired_limit((-1).into()).is_err());

    // Arrays are alive in this page, so the policy cannot change; naming the current one is
    // no change.
    let held = array(floats(&[1.0]), JsValue::UNDEFINED).unwrap();
    let err = change_current_allocator("exact".into()).unwrap_err();
    assert!(describe(&err).contains("allocated"), "{}", describe(&err));
    change_current_allocator("best-fit".into()).unwrap();
    let err = change_current_allocator("lru".into()).unwrap_err();
    assert!(
        describe(&err).starts_with("ValueError"),
        "{}",
        describe(&err)
    );
    drop(held);
}
