//! The memory tools of the seeds in the browser: the allocator's history, raw blocks from the
//! cache (with a page's own WGSL on their `GPUBuffer`), and `smi()`'s nvidia-smi text with a
//! measured `utilization.gpu`.
#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

#[path = "web/common/mod.rs"]
mod common;

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

use tandem::js::block::{caching_allocator_alloc, caching_allocator_delete, gpu_device};
use tandem::js::functions::{add, array};
use tandem::js::history::{memory_history, record_memory_history};
use tandem::js::memory::set_memory_limit;
use tandem::js::ndarray::NdArray;
use tandem::js::smi::smi;
use tandem::js::torch::{empty_cache, memory_allocated, memory_reserved};
use tandem::memory::allocator::SMALL_SEGMENT;
use tandem::memory::policy::rounded;

use crate::common::*;

async fn synchronize() {
    JsFuture::from(tandem::js::stream::synchronize(JsValue::UNDEFINED).unwrap())
        .await
        .unwrap();
}

async fn evaluated(a: &NdArray) {
    JsFuture::from(start_evaluate(&[a])).await.unwrap();
}

/// The recorded events of the blocks allocated while recording (and OOMs), as `action
/// device bytes op`, in order. Blocks of earlier tests that are freed meanwhile are left out.
fn recorded() -> Vec<String> {
    let events: Vec<JsValue> = memory_history().iter().collect();
    let text = |e: &JsValue, k| get(e, k).as_string().unwrap_or_default();
    let id = |e: &JsValue| get(e, "id").as_f64().unwrap();
    let made: std::collections::HashSet<u64> = events
        .iter()
        .filter(|e| ["alloc", "segment_alloc", "cache_hit"].contains(&text(e, "action").as_str()))
        .map(|e| id(e) as u64)
        .collect();
    events
        .iter()
        .filter(|e| text(e, "action") == "oom" || made.contains(&(id(e) as u64)))
        .map(|e| {
            format!(
                "{} {} {} {}",
                text(e, "action"),
                text(e, "device"),
                get(e, "bytes").as_f64().unwrap(),
                text(e, "op")
            )
        })
        .collect()
}

#[wasm_bindgen_test]
async fn a_scripted_sequence_records_exactly_the_expected_events_in_order() {
    runtime_info().await;
    synchronize().await;
    empty_cache();
    record_memory_history(options(&[("stacks", true.into())])).unwrap();
    let size = rounded(4096) as f64;
    let word = rounded(4) as f64;
    let segment = SMALL_SEGMENT as f64;

    // A host array, then an add on the GPU: a's upload and the result are new buffers.
    let a = array(floats(&[1.5; 1024]), JsValue::UNDEFINED).unwrap();
    let b = add(js_value(&a), js_value(&a), gpu()).unwrap();
    evaluated(&b).await;
    // Disposing the result returns its buffer to the cache; the same add reuses it.
    b.dispose();
    synchronize().await;
    let c = add(js_value(&a), js_value(&a), gpu()).unwrap();
    evaluated(&c).await;
    // An add past the limit is refused; its scalar operand is a one-word host array.
    let active = tandem::js::memory::get_active_memory();
    set_memory_limit(active + 1024.0).unwrap();
    let refused = add(js_value(&a), 1.into(), gpu()).unwrap();
    assert!(JsFuture::from(start_evaluate(&[&refused])).await.is_err());
    set_memory_limit(f64::INFINITY).unwrap();
    drop(refused);
    record_memory_history(options(&[("enabled", false.into())])).unwrap();
    // Nothing is recorded once recording stops.
    let after = add(js_value(&a), js_value(&a), gpu()).unwrap();
    evaluated(&after).await;

    // GPU blocks under 1 MiB are carved from 2 MiB buffers; an op's output never shares a
    // buffer with its inputs, so b needs a second one.
    let expected = [
        format!("segment_alloc cpu {size} data"),
        format!("alloc cpu {size} data"),
        format!("segment_alloc gpu {segment} add"),
        format!("alloc gpu {size} add"),
        format!("segment_alloc gpu {segment} add"),
        format!("alloc gpu {size} add"),
        format!("free_requested gpu {size} add"),
        format!("free_completed gpu {size} add"),
        format!("cache_hit gpu {size} add"),
        format!("alloc gpu {size} add"),
        // The refused add: its scalar operand becomes a host array.
        format!("segment_alloc cpu {word} data"),
        format!("alloc cpu {word} data"),
        // Past the limit, the runtime lets go of a's GPU copy (a has a host copy), and its
        // buffer, idle now, is destroyed to make room ...
        format!("free_requested gpu {size} add"),
        format!("free_completed gpu {size} add"),
        format!("segment_free gpu {segment} add"),
        // ... so the retry's first buffer comes from the cache, but its second does not fit:
        // the work is discarded, its buffer freed, and the request fails for good.
        format!("cache_hit gpu {size} add"),
        format!("alloc gpu {size} add"),
        format!("free_requested gpu {size} add"),
        format!("free_completed gpu {size} add"),
        format!("oom gpu {size} add"),
        // Dropping the refused array frees its scalar operand.
        format!("free_requested cpu {word} data"),
        format!("free_completed cpu {word} data"),
        format!("segment_free cpu {word} data"),
    ];
    let events = recorded();
    assert_eq!(events, expected, "got {events:#?}");
    let history = memory_history();
    let first = history.get(0);
    let stack = get(&first, "stack").as_string().unwrap_or_default();
    assert!(!stack.is_empty(), "stacks were asked for");
    let times: Vec<f64> = history
        .iter()
        .map(|e| get(&e, "timeMs").as_f64().unwrap())
        .collect();
    assert!(times.windows(2).all(|t| t[0] <= t[1]), "{times:?}");
    drop((a, c, after));
}

#[wasm_bindgen_test]
async fn a_bounded_history_keeps_the_newest_events_and_bad_options_are_errors() {
    runtime_info().await;
    record_memory_history(options(&[("maxEntries", 3.into())])).unwrap();
    let arrays: Vec<NdArray> = (0..4)
        .map(|i| array(floats(&[f64::from(i); 64]), JsValue::UNDEFINED).unwrap())
        .collect();
    // Each host array records a segment_alloc and an alloc: the last three events remain.
    let events = recorded();
    assert_eq!(events.len(), 3, "{events:?}");
    assert!(events[2].starts_with("alloc cpu"), "{events:?}");
    record_memory_history(options(&[("enabled", false.into())])).unwrap();
    drop(arrays);
    for bad in [
        options(&[("maxEntries", (-1).into())]),
        options(&[("enabled", "yes".into())]),
        options(&[("stack", true.into())]),
        true.into(),
        options(&[("maxEntries", 1.5.into())]),
    ] {
        let err = record_memory_history(bad).unwrap_err();
        assert!(
            describe(&err).starts_with("ValueError"),
            "{}",
            describe(&err)
        );
    }
}

/// Doubles `count` floats of `buffer`'s `(offset, size)` range in place with the page's own
/// WGSL on tandem's device.
async fn double_in_place(device: &JsValue, buffer: &JsValue, range: (f64, f64), count: u32) {
    let code = "@group(0) @binding(0) var<storage, read_write> data: array<f32>;
        @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
            if (id.x < arrayLength(&data)) { data[id.x] = data[id.x] * 2.0; }
        }";
    let call = |target: &JsValue, name: &str, args: &[JsValue]| -> JsValue {
        let f: js_sys::Function = get(target, name).unchecked_into();
        f.apply(target, &args.iter().collect::<js_sys::Array>())
            .unwrap()
    };
    let module = call(
        device,
        "createShaderModule",
        &[options(&[("code", code.into())])],
    );
    let compute = options(&[("module", module), ("entryPoint", "main".into())]);
    let pipeline = call(
        device,
        "createComputePipeline",
        &[options(&[("layout", "auto".into()), ("compute", compute)])],
    );
    let layout = call(&pipeline, "getBindGroupLayout", &[0.into()]);
    let resource = options(&[
        ("buffer", buffer.clone()),
        ("offset", range.0.into()),
        ("size", range.1.into()),
    ]);
    let entry = options(&[("binding", 0.into()), ("resource", resource)]);
    let entries: js_sys::Array = [entry].into_iter().collect();
    let group = call(
        device,
        "createBindGroup",
        &[options(&[("layout", layout), ("entries", entries.into())])],
    );
    let encoder = call(device, "createCommandEncoder", &[]);
    let pass = call(&encoder, "beginComputePass", &[]);
    call(&pass, "setPipeline", &[pipeline]);
    call(&pass, "setBindGroup", &[0.into(), group]);
    call(&pass, "dispatchWorkgroups", &[count.div_ceil(64).into()]);
    call(&pass, "end", &[]);
    let commands = call(&encoder, "finish", &[]);
    let queue = get(device, "queue");
    let list: js_sys::Array = [commands].into_iter().collect();
    call(&queue, "submit", &[list.into()]);
    JsFuture::from(js_sys::Promise::from(call(
        &queue,
        "onSubmittedWorkDone",
        &[],
    )))
    .await
    .unwrap();
}

#[wasm_bindgen_test]
async fn raw_blocks_are_counted_reused_and_run_a_pages_own_wgsl() {
    let info = runtime_info().await;
    synchronize().await;
    empty_cache();
    let allocated = memory_allocated("gpu".into()).unwrap();
    let reserved = memory_reserved("gpu".into()).unwrap();
    let block = caching_allocator_alloc(4000.into(), on("gpu")).unwrap();
    // WebGPU reports a buffer's creation asynchronously; the next flush confirms it, and a
    // freed buffer is handed out again only once confirmed.
    synchronize().await;
    assert_eq!(block.bytes(), 4000.0);
    assert_eq!(block.size(), rounded(4000) as f64);
    let has_gpu = get(&info, "gpu").as_bool().unwrap();
    assert_eq!(block.device(), if has_gpu { "gpu" } else { "cpu" });
    if has_gpu {
        assert_eq!(
            memory_allocated("gpu".into()).unwrap(),
            allocated + block.size()
        );
        // Carved from a new 2 MiB buffer, the first storage block after emptying the cache.
        assert_eq!(
            memory_reserved("gpu".into()).unwrap(),
            reserved + SMALL_SEGMENT as f64
        );
        // The page writes its range of the buffer, runs its own kernel on it and reads it
        // back.
        let device = gpu_device();
        let buffer = block.buffer();
        let offset = block.offset();
        assert!(!device.is_null() && !buffer.is_null());
        assert_eq!(offset % 256.0, 0.0, "a storage binding's offset");
        let data: Vec<f32> = (0..1000).map(|i| i as f32).collect();
        let queue = get(&device, "queue");
        let write: js_sys::Function = get(&queue, "writeBuffer").unchecked_into();
        let bytes = js_sys::Float32Array::from(&data[..]);
        write
            .call3(&queue, &buffer, &offset.into(), &bytes)
            .unwrap();
        let range = (offset, block.size());
        double_in_place(&device, &buffer, range, 1000).await;
        // The block is raw memory: the page reads it with its own staging buffer.
        let doubled = read_back(&device, &buffer, offset, 4000).await;
        let expected: Vec<f32> = data.iter().map(|x| x * 2.0).collect();
        assert_eq!(doubled, expected);
    } else {
        assert!(block.buffer().is_null());
    }
    let id = block.id();
    let block_value: JsValue = block.into();
    caching_allocator_delete(block_value.clone()).unwrap();
    assert_eq!(memory_allocated("gpu".into()).unwrap(), allocated);
    let err = caching_allocator_delete(block_value).unwrap_err();
    assert!(
        describe(&err).contains("already deleted"),
        "{}",
        describe(&err)
    );
    // The freed block serves the next request of its size from the cache.
    if has_gpu {
        let hits = stat("num_cache_hits");
        let again = caching_allocator_alloc(4000.into(), on("gpu")).unwrap();
        assert_eq!(stat("num_cache_hits"), hits + 1.0);
        assert_ne!(again.id(), id);
        drop(again); // as `block.free()` does from JS
        assert_eq!(memory_allocated("gpu".into()).unwrap(), allocated);
    }
    for (bad, kind) in [
        (JsValue::from(-1), "ValueError"),
        (JsValue::from(1.5), "ValueError"),
        (JsValue::from("4 KiB"), "ValueError"),
        (JsValue::from(2f64.powi(52)), "MemoryLimitError"),
    ] {
        let err = caching_allocator_alloc(bad.clone(), on("gpu")).err();
        let err = err.unwrap_or_else(|| panic!("{bad:?} was accepted"));
        assert!(
            describe(&err).starts_with(kind),
            "{bad:?}: {}",
            describe(&err)
        );
    }
    let err = caching_allocator_alloc(16.into(), options(&[("steam", "gpu".into())])).err();
    assert!(describe(&err.unwrap()).contains("steam"));
    let err = caching_allocator_delete(3.into()).unwrap_err();
    assert!(
        describe(&err).starts_with("ValueError"),
        "{}",
        describe(&err)
    );
    // Zero bytes is a valid request for the smallest block; options first is not.
    let empty = caching_allocator_alloc(0.into(), on("gpu")).unwrap();
    assert_eq!((empty.bytes(), empty.size()), (0.0, rounded(0) as f64));
    let empty: JsValue = empty.into();
    caching_allocator_delete(empty.clone()).unwrap();
    assert_eq!(get(&empty, "deleted").as_bool(), Some(true));
    assert!(
        get(&empty, "buffer").is_null(),
        "a deleted block has no buffer"
    );
    let err = caching_allocator_alloc(on("gpu"), JsValue::UNDEFINED)
        .err()
        .unwrap();
    assert!(
        describe(&err).contains("bytes must be a number"),
        "{}",
        describe(&err)
    );
    let err = caching_allocator_alloc(16.into(), "gpu".into())
        .err()
        .unwrap();
    assert!(
        describe(&err).starts_with("ValueError"),
        "{}",
        describe(&err)
    );
    let host = caching_allocator_alloc(10.into(), on("cpu")).unwrap();
    assert_eq!(host.device(), "cpu");
    assert!(host.buffer().is_null());
    caching_allocator_delete(host.into()).unwrap();
}

async fn read_back(device: &JsValue, buffer: &JsValue, offset: f64, bytes: u32) -> Vec<f32> {
    let call = |target: &JsValue, name: &str, args: &[JsValue]| -> JsValue {
        let f: js_sys::Function = get(target, name).unchecked_into();
        f.apply(target, &args.iter().collect::<js_sys::Array>())
            .unwrap()
    };
    // GPUBufferUsage.MAP_READ | COPY_DST.
    let usage = 0x0001 | 0x0008;
    let staging = call(
        device,
        "createBuffer",
        &[options(&[("size", bytes.into()), ("usage", usage.into())])],
    );
    let encoder = call(device, "createCommandEncoder", &[]);
    call(
        &encoder,
        "copyBufferToBuffer",
        &[
            buffer.clone(),
            offset.into(),
            staging.clone(),
            0.into(),
            bytes.into(),
        ],
    );
    let list: js_sys::Array = [call(&encoder, "finish", &[])].into_iter().collect();
    call(&get(device, "queue"), "submit", &[list.into()]);
    // GPUMapMode.READ.
    JsFuture::from(js_sys::Promise::from(call(
        &staging,
        "mapAsync",
        &[1.into()],
    )))
    .await
    .unwrap();
    let range = call(&staging, "getMappedRange", &[]);
    let floats = js_sys::Float32Array::new(&range).to_vec();
    call(&staging, "destroy", &[]);
    floats
}

fn sleep(ms: i32) -> JsFuture {
    JsFuture::from(js_sys::Promise::new(&mut |resolve, _| {
        let set_timeout: js_sys::Function = get(&js_sys::global(), "setTimeout").unchecked_into();
        set_timeout
            .call2(&JsValue::NULL, &resolve, &ms.into())
            .unwrap();
    }))
}

#[wasm_bindgen_test]
async fn smi_prints_nvidia_smis_csv_and_measures_utilization() {
    let info = runtime_info().await;
    let query = "name,memory.used,memory.total,utilization.gpu";
    let text = smi(options(&[
        ("query", query.into()),
        ("format", "csv".into()),
    ]))
    .unwrap()
    .as_string()
    .unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(
        lines[0],
        "name, memory.used [MiB], memory.total [MiB], utilization.gpu [%]"
    );
    let values: Vec<&str> = lines[1].split(", ").collect();
    assert_eq!(values.len(), 4, "{text}");
    assert!(
        values[1].ends_with(" MiB") && values[2].ends_with(" MiB"),
        "{text}"
    );
    let bare = smi(options(&[
        ("query", query.into()),
        ("format", "csv,noheader,nounits".into()),
    ]))
    .unwrap()
    .as_string()
    .unwrap();
    assert_eq!(bare.lines().count(), 1, "{bare}");
    assert!(!bare.contains("MiB"), "{bare}");
    let object = smi(JsValue::UNDEFINED).unwrap();
    assert_eq!(
        get(&object, "pci.bus_id").as_string().as_deref(),
        Some("[N/A]")
    );
    let timestamp = get(&object, "timestamp").as_string().unwrap();
    assert_eq!(
        timestamp.len(),
        "2026/11/25 10:00:00.123".len(),
        "{timestamp}"
    );
    for bad in [
        options(&[("query", "name,power.draw".into())]),
        options(&[("format", "json".into())]),
        options(&[("periodMs", 0.into())]),
        options(&[("querry", "name".into())]),
        options(&[("periodMs", f64::NAN.into())]),
        options(&[("periodMs", 120_000.into())]),
        options(&[("query", "".into())]),
        "csv".into(),
    ] {
        let err = smi(bad).unwrap_err();
        assert!(
            describe(&err).starts_with("ValueError"),
            "{}",
            describe(&err)
        );
    }
    if !get(&info, "gpu").as_bool().unwrap() {
        assert_eq!(
            get(&object, "utilization.gpu").as_string().as_deref(),
            Some("[N/A]")
        );
        return;
    }

    // Idle: nothing submitted in the last 500 ms.
    synchronize().await;
    sleep(600).await.unwrap();
    let utilization = |period: i32| {
        get(
            &smi(options(&[("periodMs", period.into())])).unwrap(),
            "utilization.gpu",
        )
        .as_f64()
        .unwrap()
    };
    let idle = utilization(500);
    assert!(idle < 10.0, "idle utilization {idle}");

    // Busy: a long chain of GPU work fills the sample window.
    let x = tandem::js::random::random_uniform(
        floats(&[512.0, 512.0]),
        options(&[("stream", "gpu".into())]),
    )
    .unwrap();
    let start = tandem::observe::clock::now_ms();
    let mut y = x;
    while tandem::observe::clock::now_ms() - start < 800.0 {
        let next =
            tandem::js::functions::exported::matmul(js_value(&y), js_value(&y), gpu()).unwrap();
        evaluated(&next).await;
        y = next;
    }
    let busy = utilization(500);
    assert!(busy > 50.0, "busy utilization {busy}");
    // Where the adapter has timestamp-query (SwiftShader does), GPU timestamps timed the
    // submits, and getDeviceProperties says which measure is in use.
    let timed = tandem::js::runtime::with_started(|rt| {
        let gpu = rt.unwrap().gpu().unwrap();
        (gpu.timestamps.is_some(), gpu.monitor.gpu.timed_spans())
    });
    let props = tandem::js::torch::get_device_properties(JsValue::UNDEFINED).unwrap();
    let from = get(&props, "utilizationFrom").as_string().unwrap();
    if timed.0 {
        assert!(timed.1 > 0, "no submit was timed by timestamps");
        assert_eq!(from, "timestamp-query");
    } else {
        assert_eq!(from, "submit-to-done");
    }
    drop(y);
}

#[wasm_bindgen_test]
async fn freed_raw_blocks_release_their_memory_without_other_gpu_work() {
    let info = runtime_info().await;
    if !get(&info, "gpu").as_bool().unwrap() {
        return;
    }
    // The browser frees a destroyed buffer only once the queue moves past it. Before tandem
    // moved the queue itself, 16 GB of freed blocks grew Chromium's GPU process past 12 GB
    // and the device was lost; now memory stays bounded and the device usable.
    let previous = tandem::js::memory::set_cache_limit(0.0).unwrap();
    for _ in 0..1000 {
        let block = caching_allocator_alloc((16u32 << 20).into(), on("gpu")).unwrap();
        caching_allocator_delete(block.into()).unwrap();
    }
    tandem::js::memory::set_cache_limit(previous).unwrap();
    let a = float_array(&[1.0, 2.0]);
    let b = add(js_value(&a), js_value(&a), gpu()).unwrap();
    assert_eq!(to_vec(&b).await, vec![2.0, 4.0]);
}
