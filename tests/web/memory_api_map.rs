//! Every tandem name in `docs/memory-api-map.md` is exported to JS and called here: the test
//! reads the page's tables, and fails on a row whose name it does not call.

use std::collections::BTreeSet;

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

use tandem::js::block::{caching_allocator_alloc, caching_allocator_delete};
use tandem::js::functions::add;
use tandem::js::functions::exported::{exp, matmul};
use tandem::js::history::{memory_history, record_memory_history};
use tandem::js::memory::*;
use tandem::js::random::{random_normal, random_uniform};
use tandem::js::smi::smi;
use tandem::js::stream::{default_stream, evaluate, new_stream};
use tandem::js::torch::*;

use crate::common::*;

const MAP: &str = include_str!("../../docs/memory-api-map.md");

/// The names in the tandem column (the third) of every table row.
fn mapped_names() -> BTreeSet<String> {
    MAP.lines()
        .filter(|line| line.starts_with("| ") && !line.starts_with("| seed |"))
        .filter_map(|line| line.split(" | ").nth(2))
        .map(|cell| cell.trim_matches('`').to_string())
        .collect()
}

fn number(value: f64) -> bool {
    value.is_finite() && value >= 0.0
}

#[wasm_bindgen_test]
async fn every_name_in_the_memory_api_map_is_exported_and_called() {
    runtime_info().await;
    let mut called = BTreeSet::new();
    let mut call = |name: &str, ok: bool| {
        assert!(ok, "{name} gave an unexpected result");
        called.insert(name.to_string());
    };

    // MLX's memory management.
    let a = random_uniform(floats(&[64.0]), on("gpu")).unwrap();
    call("randomUniform", a.shape().unwrap().length() == 1);
    let n = random_normal(floats(&[64.0]), on("cpu")).unwrap();
    call("randomNormal", n.shape().unwrap().length() == 1);
    let sum = add(js_value(&a), js_value(&n), on("gpu")).unwrap();
    call("add", true);
    let e = exp(js_value(&sum), on("cpu")).unwrap();
    call("exp", true);
    let square = random_uniform(floats(&[8.0, 8.0]), on("gpu")).unwrap();
    let product = matmul(js_value(&square), js_value(&square), on("gpu")).unwrap();
    call("matmul", true);
    let done = evaluate(vec![js_value(&e), js_value(&product)]).unwrap();
    JsFuture::from(done).await.unwrap();
    call("evaluate", true);
    call(
        "defaultStream",
        default_stream("gpu").unwrap().device() == "gpu",
    );
    call("newStream", new_stream("cpu").unwrap().device() == "cpu");
    call("getActiveMemory", get_active_memory() > 0.0);
    call("getPeakMemory", get_peak_memory() >= get_active_memory());
    reset_peak_memory();
    call("resetPeakMemory", get_peak_memory() == get_active_memory());
    call("getCacheMemory", number(get_cache_memory()));
    let limit = set_memory_limit(1e12).unwrap();
    call("setMemoryLimit", get_memory_limit() == 1e12);
    set_memory_limit(limit).unwrap();
    let cache = set_cache_limit(1e9).unwrap();
    call("setCacheLimit", set_cache_limit(cache).unwrap() == 1e9);
    let wired = set_wired_limit(4096.into()).unwrap();
    call(
        "setWiredLimit",
        set_wired_limit(wired.into()).unwrap() == 4096.0,
    );
    clear_cache();
    call("clearCache", get_cache_memory() == 0.0);

    // torch.accelerator, torch.cuda and torch_npu.
    let stats = memory_stats();
    call(
        "memoryStats",
        get(&stats, "num_sync_all_streams").as_f64().is_some(),
    );
    let nested = memory_stats_as_nested_dict(JsValue::UNDEFINED).unwrap();
    call(
        "memoryStatsAsNestedDict",
        get(&nested, "allocated_bytes").is_object(),
    );
    let allocated = memory_allocated(JsValue::UNDEFINED).unwrap();
    call("memoryAllocated", allocated > 0.0);
    call(
        "maxMemoryAllocated",
        max_memory_allocated(JsValue::UNDEFINED).unwrap() >= allocated,
    );
    let reserved = memory_reserved(JsValue::UNDEFINED).unwrap();
    call("memoryReserved", reserved >= allocated);
    call(
        "maxMemoryReserved",
        max_memory_reserved(JsValue::UNDEFINED).unwrap() >= reserved,
    );
    call("memoryCached", memory_cached("gpu".into()).unwrap() >= 0.0);
    call(
        "maxMemoryCached",
        max_memory_cached("gpu".into()).unwrap() >= 0.0,
    );
    reset_max_memory_allocated(JsValue::UNDEFINED).unwrap();
    call(
        "resetMaxMemoryAllocated",
        max_memory_allocated(JsValue::UNDEFINED).unwrap() == allocated,
    );
    reset_max_memory_cached(JsValue::UNDEFINED).unwrap();
    call(
        "resetMaxMemoryCached",
        max_memory_reserved(JsValue::UNDEFINED).unwrap() == reserved,
    );
    reset_peak_memory_stats();
    call(
        "resetPeakMemoryStats",
        get_peak_memory() == get_active_memory(),
    );
    reset_accumulated_memory_stats();
    call(
        "resetAccumulatedMemoryStats",
        stat("num_device_alloc") == 0.0,
    );
    empty_cache();
    call("emptyCache", get_cache_memory() == 0.0);
    let info = get_memory_info();
    call(
        "getMemoryInfo",
        get(&info, "total").as_f64().is_some_and(number),
    );
    let props = get_device_properties(JsValue::UNDEFINED).unwrap();
    call(
        "getDeviceProperties",
        get(&props, "totalMemory").as_f64().is_some_and(number),
    );
    set_per_process_memory_fraction(0.75.into(), JsValue::UNDEFINED).unwrap();
    call(
        "setPerProcessMemoryFraction",
        get_memory_limit() < f64::INFINITY,
    );
    set_memory_limit(f64::INFINITY).unwrap();
    call("memorySnapshot", memory_snapshot().length() > 0);
    call("memorySummary", memory_summary().contains("Allocated"));
    record_memory_history(JsValue::UNDEFINED).unwrap();
    let block = caching_allocator_alloc(1024.into(), on("gpu")).unwrap();
    call("cachingAllocatorAlloc", block.size() >= 1024.0);
    caching_allocator_delete(block.into()).unwrap();
    call("cachingAllocatorDelete", true);
    record_memory_history(options(&[("enabled", false.into())])).unwrap();
    call("recordMemoryHistory", true);
    call("memoryHistory", memory_history().length() >= 3);
    // Arrays are alive, so only naming the current policy is allowed.
    call(
        "changeCurrentAllocator",
        change_current_allocator("best-fit".into()).is_ok()
            && change_current_allocator("none".into()).is_err(),
    );
    let text = smi(options(&[
        ("query", "memory.used".into()),
        ("format", "csv".into()),
    ]))
    .unwrap()
    .as_string()
    .unwrap();
    call("smi", text.starts_with("memory.used [MiB]\n"));

    let mapped = mapped_names();
    assert!(
        mapped.len() >= 30,
        "the map's tables were not found: {mapped:?}"
    );
    let missing: Vec<&String> = mapped.difference(&called).collect();
    assert!(
        missing.is_empty(),
        "rows whose tandem name is not called: {missing:?}"
    );
    // The JS names themselves: each is an export of the wasm module.
    let exports = wasm_bindgen::exports();
    for name in &mapped {
        let export = js_sys::Reflect::get(&exports, &name.as_str().into()).unwrap();
        assert!(export.is_function(), "{name} is not exported");
    }
    drop((a, n, sum, e, square, product));
}
