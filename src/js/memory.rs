//! The memory API (`docs/managing-memory.md`): MLX's names and PyTorch's statistics.

use wasm_bindgen::prelude::*;

use crate::error::Error;
use crate::js::error::{JsResult, to_js};
use crate::js::options::byte_count;
use crate::js::runtime::release_destroyed_buffers;
use crate::js::set_property as set;
use crate::memory::allocator::{self, SnapshotEntry, Usage};
use crate::memory::summary::summary;
use crate::memory::{Scope, stats};

/// Bytes held by live arrays on both devices (a copy on each device counts twice), plus the
/// runtime's own live buffers.
#[wasm_bindgen(js_name = getActiveMemory)]
pub fn get_active_memory() -> f64 {
    stats().active_bytes.get(Scope::All).current as f64
}

/// The highest active bytes since start or the last reset.
#[wasm_bindgen(js_name = getPeakMemory)]
pub fn get_peak_memory() -> f64 {
    stats().active_bytes.get(Scope::All).peak as f64
}

/// Makes every peak its current value.
#[wasm_bindgen(js_name = resetPeakMemory)]
pub fn reset_peak_memory() {
    allocator::reset_peak_stats();
}

/// Bytes of idle GPU buffers kept for reuse (what `clearCache` frees). Free ranges inside
/// buffers that live arrays also use are not counted: `memoryStats()` reports them as
/// `inactive_split_bytes`.
#[wasm_bindgen(js_name = getCacheMemory)]
pub fn get_cache_memory() -> f64 {
    allocator::cache_bytes() as f64
}

/// A limit from JS: a byte count, or `Infinity` for none.
fn limit_arg(what: &str, value: f64) -> Result<Option<u64>, Error> {
    if value == f64::INFINITY {
        return Ok(None);
    }
    byte_count(&format!("{what}: the limit (or Infinity)"), value).map(Some)
}

fn limit_to_js(limit: Option<u64>) -> f64 {
    limit.map_or(f64::INFINITY, |l| l as f64)
}

/// Sets the budget for active memory (`Infinity` removes it) and returns the previous one.
/// An allocation past it trims the cache, drops copies the other device can re-derive,
/// flushes and waits for in-flight GPU work, retries once, and only then throws
/// `MemoryLimitError`. Live arrays are never lost or corrupted by a failed allocation.
#[wasm_bindgen(js_name = setMemoryLimit)]
pub fn set_memory_limit(bytes: f64) -> JsResult<f64> {
    let limit = limit_arg("setMemoryLimit", bytes).map_err(to_js)?;
    Ok(limit_to_js(allocator::set_memory_limit(limit)))
}

/// The memory limit, `Infinity` when none is set.
#[wasm_bindgen(js_name = getMemoryLimit)]
pub fn get_memory_limit() -> f64 {
    limit_to_js(allocator::memory_limit())
}

/// Bounds the bytes of cached buffers and returns the previous bound; `0` disables caching.
#[wasm_bindgen(js_name = setCacheLimit)]
pub fn set_cache_limit(bytes: f64) -> JsResult<f64> {
    // The allocator stores "no limit" as u64::MAX.
    let limit = limit_arg("setCacheLimit", bytes).map_err(to_js)?;
    let previous = allocator::set_cache_limit(limit.unwrap_or(u64::MAX));
    release_destroyed_buffers();
    Ok(limit_to_js(Some(previous).filter(|&l| l != u64::MAX)))
}

/// Destroys every cached buffer.
#[wasm_bindgen(js_name = clearCache)]
pub fn clear_cache() {
    allocator::clear_cache();
    release_destroyed_buffers();
}

/// Every statistic under PyTorch's flat key names, sorted.
#[wasm_bindgen(js_name = memoryStats, unchecked_return_type = "Record<string, number>")]
pub fn memory_stats() -> JsValue {
    let object = js_sys::Object::new();
    for (key, value) in stats().flat() {
        set(&object, &key, JsValue::from_f64(value as f64));
    }
    object.into()
}

/// The statistics as a table, like `torch.cuda.memory_summary()`.
#[wasm_bindgen(js_name = memorySummary)]
pub fn memory_summary() -> String {
    summary(
        &stats(),
        allocator::memory_limit(),
        allocator::cache_limit(),
    )
}

/// One record per live block and per free range of a GPU buffer: `{id, device, usage, size,
/// requestedSize, segment, offset, state, stream, op}`. A GPU block is a range (`offset`,
/// `size`) of a buffer (`segment`) that other blocks may share; `segment` is `null` for host
/// copies, as `usage` is. `state` is `active` (a live block), `cached` (an idle buffer) or
/// `inactive` (a free range of a buffer in use). Free ranges have no `id` (`null`) and no
/// `stream`; `stream` is also `null` for data made outside an evaluation. `owner` says what
/// keeps a block that no array of the page may hold: `"compile"` for an array a compiled
/// function's trace holds (one it closed over or made from data), `"runtime"` for the
/// runtime's own buffers (the parameter ring, timestamp resolves), else `null`.
#[wasm_bindgen(js_name = memorySnapshot)]
pub fn memory_snapshot() -> js_sys::Array {
    let compiled = crate::js::compile::held_blocks();
    allocator::snapshot()
        .iter()
        .map(|entry| {
            let object = snapshot_entry(entry);
            let owner = owner(entry, &compiled);
            set(&object, "owner", owner.map_or(JsValue::NULL, JsValue::from));
            JsValue::from(object)
        })
        .collect()
}

fn owner(entry: &SnapshotEntry, compiled: &rustc_hash::FxHashSet<u64>) -> Option<&'static str> {
    let block = &entry.block;
    if entry.state != "active" {
        return None;
    }
    match block.usage {
        Some(Usage::Uniform | Usage::QueryResolve) => Some("runtime"),
        _ if compiled.contains(&block.id) => Some("compile"),
        _ => None,
    }
}

fn snapshot_entry(entry: &SnapshotEntry) -> js_sys::Object {
    let block = &entry.block;
    let object = js_sys::Object::new();
    // A free range has no block, so no id.
    let id = if block.id == 0 {
        JsValue::NULL
    } else {
        JsValue::from_f64(block.id as f64)
    };
    set(&object, "id", id);
    set(&object, "device", block.device.name().into());
    set(
        &object,
        "usage",
        block.usage.map_or(JsValue::NULL, |u| u.name().into()),
    );
    set(&object, "size", JsValue::from_f64(block.size as f64));
    set(
        &object,
        "requestedSize",
        JsValue::from_f64(block.requested as f64),
    );
    set(
        &object,
        "segment",
        block
            .segment
            .map_or(JsValue::NULL, |s| JsValue::from_f64(s as f64)),
    );
    set(&object, "offset", JsValue::from_f64(block.offset as f64));
    set(&object, "state", entry.state.into());
    let stream = block.stream.map_or(JsValue::NULL, |s| {
        format!("{}:{}", s.device.name(), s.index).into()
    });
    set(&object, "stream", stream);
    set(&object, "op", block.op.into());
    object
}

/// `{free, total}`: `total` is the memory limit, or without one the `gpu` device's
/// `totalMemory` (WebGPU reports no memory size; see `js/torch.rs` for what a page can know);
/// `free` is `total` less active memory.
#[wasm_bindgen(js_name = getMemoryInfo, unchecked_return_type = "{free: number, total: number}")]
pub fn get_memory_info() -> JsValue {
    let total = allocator::memory_limit()
        .unwrap_or_else(|| crate::js::torch::total_memory(crate::stream::Device::Gpu));
    let active = stats().active_bytes.get(Scope::All).current;
    let object = js_sys::Object::new();
    set(
        &object,
        "free",
        JsValue::from_f64(total.saturating_sub(active) as f64),
    );
    set(&object, "total", JsValue::from_f64(total as f64));
    object.into()
}

/// Makes every peak its current value (PyTorch's `reset_peak_memory_stats`).
#[wasm_bindgen(js_name = resetPeakMemoryStats)]
pub fn reset_peak_memory_stats() {
    allocator::reset_peak_stats();
}

/// Restarts totals and event counters from zero (PyTorch's
/// `reset_accumulated_memory_stats`).
#[wasm_bindgen(js_name = resetAccumulatedMemoryStats)]
pub fn reset_accumulated_memory_stats() {
    allocator::reset_accumulated_stats();
}
