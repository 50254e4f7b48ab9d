//! The memory calls of PyTorch (`torch.accelerator`, `torch.cuda`) and torch_npu under their
//! own names (`docs/memory-api-map.md`). Each is a thin view over the allocator's
//! statistics: there is no second bookkeeping.
//!
//! **`totalMemory`.** WebGPU reports no memory size for a GPU. A page can know two bounds: the
//! device's RAM (`navigator.deviceMemory`, in GiB, which browsers round and cap, Chromium at 8)
//! and, for the `cpu` device, the 4 GiB that wasm32 can address. `totalMemory` is the smaller
//! of those that apply: for `gpu`, the device's RAM when the browser tells it (integrated GPUs
//! share it; a discrete GPU's own memory is not visible), else the adapter's `maxBufferSize`;
//! for `cpu`, the device's RAM capped at 4 GiB. `getMemoryInfo().total` (without a limit) and
//! `setPerProcessMemoryFraction` use the same figure.

use std::cell::Cell;

use wasm_bindgen::prelude::*;

use crate::error::{Error, Result};
use crate::js::error::{JsResult, js};
use crate::js::options::{byte_count, describe};
use crate::js::set_property as set;
use crate::memory::allocator::{self, BytePeak};
use crate::memory::policy::Policy;
use crate::memory::{Scope, stats};
use crate::stream::Device;

/// What wasm32 can address.
const WASM32_BYTES: u64 = 4 << 30;

thread_local! {
    /// `setWiredLimit`'s value: kept and returned, with no other effect in a browser.
    static WIRED_LIMIT: Cell<u64> = const { Cell::new(0) };
}

/// The optional device argument: `"cpu"`, `"gpu"` or a `Stream` (its device); `undefined` or
/// `null` means both devices.
fn device_arg(op: &str, value: &JsValue) -> Result<Option<Device>> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    let name = value.as_string().or_else(|| {
        js_sys::Reflect::get(value, &"device".into())
            .ok()
            .and_then(|d| d.as_string())
    });
    match name.as_deref().map(Device::parse) {
        Some(Ok(device)) => Ok(Some(device)),
        _ => Err(Error::Value(format!(
            "{op}: the device must be \"cpu\", \"gpu\" or a Stream, got {}",
            describe(value)
        ))),
    }
}

fn scope_of(device: Option<Device>) -> Scope {
    device.map_or(Scope::All, Scope::device)
}

fn bytes(op: &str, device: &JsValue, read: impl Fn(Scope) -> u64) -> JsResult<f64> {
    let scope = scope_of(js(device_arg(op, device))?);
    Ok(read(scope) as f64)
}

/// Bytes held by live arrays and blocks (PyTorch's `memory_allocated`).
#[wasm_bindgen(js_name = memoryAllocated)]
pub fn memory_allocated(device: JsValue) -> JsResult<f64> {
    bytes("memoryAllocated", &device, |s| {
        stats().allocated_bytes.get(s).current
    })
}

/// The peak of [`memory_allocated`] (PyTorch's `max_memory_allocated`).
#[wasm_bindgen(js_name = maxMemoryAllocated)]
pub fn max_memory_allocated(device: JsValue) -> JsResult<f64> {
    bytes("maxMemoryAllocated", &device, |s| {
        stats().allocated_bytes.get(s).peak
    })
}

/// Bytes of live and cached buffers (PyTorch's `memory_reserved`).
#[wasm_bindgen(js_name = memoryReserved)]
pub fn memory_reserved(device: JsValue) -> JsResult<f64> {
    bytes("memoryReserved", &device, |s| {
        stats().reserved_bytes.get(s).current
    })
}

/// The peak of [`memory_reserved`] (PyTorch's `max_memory_reserved`).
#[wasm_bindgen(js_name = maxMemoryReserved)]
pub fn max_memory_reserved(device: JsValue) -> JsResult<f64> {
    bytes("maxMemoryReserved", &device, |s| {
        stats().reserved_bytes.get(s).peak
    })
}

/// PyTorch's older name of [`memory_reserved`].
#[wasm_bindgen(js_name = memoryCached)]
pub fn memory_cached(device: JsValue) -> JsResult<f64> {
    bytes("memoryCached", &device, |s| {
        stats().reserved_bytes.get(s).current
    })
}

/// PyTorch's older name of [`max_memory_reserved`].
#[wasm_bindgen(js_name = maxMemoryCached)]
pub fn max_memory_cached(device: JsValue) -> JsResult<f64> {
    bytes("maxMemoryCached", &device, |s| {
        stats().reserved_bytes.get(s).peak
    })
}

/// Destroys every cached buffer (PyTorch's `empty_cache`; the same as `clearCache`).
#[wasm_bindgen(js_name = emptyCache)]
pub fn empty_cache() {
    allocator::clear_cache();
    crate::js::runtime::release_destroyed_buffers();
}

/// The peak of [`memory_allocated`] becomes its current value, for the device or in every
/// scope; other peaks stay.
#[wasm_bindgen(js_name = resetMaxMemoryAllocated)]
pub fn reset_max_memory_allocated(device: JsValue) -> JsResult<()> {
    let device = js(device_arg("resetMaxMemoryAllocated", &device))?;
    allocator::reset_byte_peak(BytePeak::Allocated, device);
    Ok(())
}

/// The peak of [`memory_reserved`] becomes its current value, for the device or in every
/// scope; other peaks stay.
#[wasm_bindgen(js_name = resetMaxMemoryCached)]
pub fn reset_max_memory_cached(device: JsValue) -> JsResult<()> {
    let device = js(device_arg("resetMaxMemoryCached", &device))?;
    allocator::reset_byte_peak(BytePeak::Reserved, device);
    Ok(())
}

/// `memoryStats()` nested at its dots (PyTorch's `memory_stats_as_nested_dict`). With a device,
/// the gauges of the other scopes are left out.
#[wasm_bindgen(js_name = memoryStatsAsNestedDict, unchecked_return_type = "Record<string, any>")]
pub fn memory_stats_as_nested_dict(device: JsValue) -> JsResult<JsValue> {
    let device = js(device_arg("memoryStatsAsNestedDict", &device))?;
    let root = js_sys::Object::new();
    for (key, value) in stats().flat() {
        let parts: Vec<&str> = key.split('.').collect();
        if let (Some(device), [_, scope, _]) = (device, parts.as_slice())
            && *scope != device.name()
        {
            continue;
        }
        let (last, path) = parts.split_last().expect("a key has a name");
        let mut node = root.clone();
        for part in path {
            let child = js_sys::Reflect::get(&node, &(*part).into()).unwrap_or_default();
            node = if child.is_object() {
                child.into()
            } else {
                let fresh = js_sys::Object::new();
                set(&node, part, fresh.clone().into());
                fresh
            };
        }
        set(&node, last, JsValue::from_f64(value as f64));
    }
    Ok(root.into())
}

/// The device's RAM in bytes, when the browser tells it (`navigator.deviceMemory`).
fn device_memory() -> Option<u64> {
    let navigator = js_sys::Reflect::get(&js_sys::global(), &"navigator".into()).ok()?;
    let gib = js_sys::Reflect::get(&navigator, &"deviceMemory".into())
        .ok()?
        .as_f64()?;
    (gib > 0.0 && gib.is_finite()).then_some((gib * (1u64 << 30) as f64) as u64)
}

/// `totalMemory` of a device, as the module documentation explains.
pub fn total_memory(device: Device) -> u64 {
    match device {
        Device::Cpu => device_memory().map_or(WASM32_BYTES, |ram| ram.min(WASM32_BYTES)),
        Device::Gpu => device_memory()
            .or_else(crate::js::runtime::max_buffer_size)
            .unwrap_or(WASM32_BYTES),
    }
}

/// Sets the memory limit to `fraction` of the device's `totalMemory` (the `gpu`'s without a
/// device). The limit is the page's one budget for active memory.
#[wasm_bindgen(js_name = setPerProcessMemoryFraction)]
pub fn set_per_process_memory_fraction(fraction: JsValue, device: JsValue) -> JsResult<()> {
    let op = "setPerProcessMemoryFraction";
    let device = js(device_arg(op, &device))?.unwrap_or(Device::Gpu);
    let fraction = match fraction.as_f64() {
        Some(f) if f > 0.0 && f <= 1.0 => f,
        _ => {
            return js(Err(Error::Value(format!(
                "{op}: the fraction must be a number in (0, 1], got {}",
                describe(&fraction)
            ))));
        }
    };
    let limit = (fraction * total_memory(device) as f64).floor() as u64;
    allocator::set_memory_limit(Some(limit));
    Ok(())
}

/// The name, vendor and architecture of `device`: the adapter's for the `gpu` on WebGPU.
pub(crate) fn adapter_names(device: Device) -> (String, String, String) {
    let adapter = crate::js::runtime::started_info()
        .and_then(|info| js_sys::Reflect::get(&info, &"adapter".into()).ok())
        .filter(JsValue::is_object);
    let field = |key: &str| {
        adapter
            .as_ref()
            .and_then(|a| js_sys::Reflect::get(a, &key.into()).ok())
            .and_then(|v| v.as_string())
            .unwrap_or_default()
    };
    if device == Device::Gpu && adapter.is_some() {
        let name = [field("description"), field("device")]
            .into_iter()
            .find(|n| !n.is_empty())
            .unwrap_or_else(|| "WebGPU adapter".into());
        (name, field("vendor"), field("architecture"))
    } else if device == Device::Gpu {
        ("the CPU (no WebGPU)".into(), String::new(), "wasm32".into())
    } else {
        (
            "the CPU (Rust kernels in wasm)".into(),
            String::new(),
            "wasm32".into(),
        )
    }
}

/// The device's name, memory and compute limits (PyTorch's `get_device_properties`); the `gpu`
/// device's without an argument.
#[wasm_bindgen(js_name = getDeviceProperties)]
pub fn get_device_properties(device: JsValue) -> JsResult<JsValue> {
    let device = js(device_arg("getDeviceProperties", &device))?.unwrap_or(Device::Gpu);
    let object = js_sys::Object::new();
    let (name, vendor, architecture) = adapter_names(device);
    set(&object, "name", name.into());
    set(&object, "vendor", vendor.into());
    set(&object, "architecture", architecture.into());
    let timestamps = crate::js::runtime::with_started(|rt| {
        rt.and_then(|rt| rt.gpu())
            .is_some_and(|gpu| gpu.timestamps.is_some())
    });
    let utilization_from = match (device, timestamps) {
        (Device::Gpu, true) => JsValue::from("timestamp-query"),
        (Device::Gpu, false) if crate::js::runtime::max_buffer_size().is_some() => {
            JsValue::from("submit-to-done")
        }
        _ => JsValue::NULL,
    };
    set(&object, "utilizationFrom", utilization_from);
    set(
        &object,
        "totalMemory",
        JsValue::from_f64(total_memory(device) as f64),
    );
    let limits = crate::js::runtime::with_started(|rt| {
        rt.and_then(|rt| rt.gpu())
            .filter(|_| device == Device::Gpu)
            .map(|gpu| (gpu.limits().clone(), gpu.feature_names()))
    });
    let limit = |f: fn(&wgpu::Limits) -> f64| match &limits {
        Some((l, _)) => JsValue::from_f64(f(l)),
        None => JsValue::NULL,
    };
    set(
        &object,
        "maxBufferSize",
        limit(|l| l.max_buffer_size as f64),
    );
    set(
        &object,
        "maxStorageBufferBindingSize",
        limit(|l| l.max_storage_buffer_binding_size as f64),
    );
    set(
        &object,
        "maxComputeWorkgroupSizeX",
        limit(|l| f64::from(l.max_compute_workgroup_size_x)),
    );
    set(
        &object,
        "maxComputeInvocationsPerWorkgroup",
        limit(|l| f64::from(l.max_compute_invocations_per_workgroup)),
    );
    let features: js_sys::Array = limits
        .map(|(_, f)| f.into_iter().map(JsValue::from_str).collect())
        .unwrap_or_default();
    set(&object, "features", features.into());
    Ok(object.into())
}

/// torch_npu's pluggable allocator, reduced to the policies a page can use safely:
/// `"best-fit"` (the default), `"exact"` or `"none"`. Only while nothing is allocated.
#[wasm_bindgen(js_name = changeCurrentAllocator)]
pub fn change_current_allocator(policy: JsValue) -> JsResult<()> {
    let op = "changeCurrentAllocator";
    let policy = policy
        .as_string()
        .as_deref()
        .and_then(Policy::parse)
        .ok_or_else(|| {
            Error::Value(format!(
                "{op}: the policy must be one of {}, got {}",
                Policy::names(),
                describe(&policy)
            ))
        });
    let changed = policy.and_then(allocator::set_policy);
    crate::js::runtime::release_destroyed_buffers();
    js(changed)
}

/// MLX's `set_wired_limit`: the value is kept and the previous one returned. A browser gives a
/// page no control over residency, so it has no other effect (as in MLX on backends without
/// one).
#[wasm_bindgen(js_name = setWiredLimit)]
pub fn set_wired_limit(bytes: JsValue) -> JsResult<f64> {
    let limit = match bytes.as_f64() {
        Some(x) => js(byte_count("setWiredLimit: the limit", x))?,
        None => {
            return js(Err(Error::Value(format!(
                "setWiredLimit: the limit must be a number of bytes, got {}",
                describe(&bytes)
            ))));
        }
    };
    Ok(WIRED_LIMIT.with(|w| w.replace(limit)) as f64)
}
