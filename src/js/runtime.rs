//! `initRuntime` and the page's one runtime.
//!
//! The runtime lives in a thread-local: each JS realm (the page, or each worker) has its own
//! module instance and so its own runtime. The first `initRuntime` call (or the first
//! evaluation, which starts a runtime with default options) stores its promise; later calls
//! return the same promise and so the same runtime.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, future_to_promise};

use crate::error::{Error, Result};
use crate::js::error::{JsResult, to_js};
use crate::js::options::{Options, byte_count};
use crate::js::set_property as set;
use crate::runtime::{Runtime, RuntimeInfo, RuntimeOptions};
use crate::startup::settle::Remember;
use crate::stream::Device;

thread_local! {
    static RUNTIME: RefCell<Option<Rc<Runtime>>> = const { RefCell::new(None) };
    static STARTING: RefCell<Option<js_sys::Promise>> = const { RefCell::new(None) };
    static INFO: RefCell<Option<JsValue>> = const { RefCell::new(None) };
}

/// Requests a WebGPU adapter and device and resolves to the `RuntimeInfo`.
///
/// Options: `powerPreference` (`"low-power"` or `"high-performance"`), `requireGpu` (reject
/// when there is no WebGPU instead of running the `gpu` device on the CPU), `defaultDevice`
/// (`"cpu"` or `"gpu"`: skip choosing one by measurement on a fallback adapter), and
/// `memoryLimit` and `cacheLimit` in bytes (as `setMemoryLimit` and `setCacheLimit`).
#[wasm_bindgen(js_name = initRuntime)]
pub fn init_runtime(opts: JsValue) -> JsResult<js_sys::Promise> {
    let options = runtime_options(&opts).map_err(to_js)?;
    let threads = crate::js::threads::parse(
        Options::parse("initRuntime", &opts, &KEYS)
            .and_then(|o| o.number("threads"))
            .map_err(to_js)?,
    )
    .map_err(to_js)?;
    crate::js::threads::lower(threads);
    // The limits belong to the allocator, not the device: they apply on every call, even
    // when the runtime has already started.
    if let Some(limit) = options.memory_limit {
        crate::memory::allocator::set_memory_limit(Some(limit));
    }
    if let Some(limit) = options.cache_limit {
        crate::memory::allocator::set_cache_limit(limit);
    }
    let require_gpu = options.require_gpu;
    let started = start(options, threads);
    if !require_gpu {
        return Ok(started);
    }
    // The page's runtime may already run without a GPU (an earlier call did not require one):
    // requireGpu still means what it says.
    Ok(future_to_promise(async move {
        let info = JsFuture::from(started).await?;
        match js_sys::Reflect::get(&info, &"gpu".into()) {
            Ok(gpu) if gpu.is_truthy() => Ok(info),
            _ => Err(to_js(Error::Device(
                "initRuntime: requireGpu is set but the page's runtime has no GPU (WebGPU is \
                 unavailable, or an earlier initRuntime started without one)"
                    .into(),
            ))),
        }
    }))
}

/// A runtime whose GPU device was lost is let go, so that `initRuntime()` starts a new one
/// with a new device. Arrays keep their host copies; their GPU copies were distrusted when
/// the loss was found, so they upload again to the new device.
fn forget_a_lost_device() {
    let lost = RUNTIME.with(|r| {
        r.borrow()
            .as_ref()
            .is_some_and(|runtime| runtime.device_lost().is_some())
    });
    if lost {
        crate::memory::allocator::distrust_gpu_blocks();
        RUNTIME.with(|r| *r.borrow_mut() = None);
        STARTING.with(|s| *s.borrow_mut() = None);
    }
}

/// The runtime, starting one with default options if the page has not.
pub async fn current() -> Result<Rc<Runtime>> {
    if let Some(runtime) = RUNTIME.with(|r| r.borrow().clone()) {
        return Ok(runtime);
    }
    JsFuture::from(start(RuntimeOptions::default(), None))
        .await
        .map_err(|e| Error::Device(format!("the runtime failed to start: {}", describe(&e))))?;
    RUNTIME
        .with(|r| r.borrow().clone())
        .ok_or_else(|| Error::Device("the runtime failed to start".into()))
}

/// The runtime's default device once it has started, and `gpu` before (which runs on the CPU
/// if no GPU turns up).
pub fn runtime_default_device() -> Device {
    RUNTIME.with(|r| {
        r.borrow()
            .as_ref()
            .map_or(Device::Gpu, |rt| rt.default_device())
    })
}

/// The adapter's `maxBufferSize`, once a runtime with a GPU has started.
pub fn max_buffer_size() -> Option<u64> {
    with_started(|rt| rt.and_then(|rt| rt.gpu().map(|gpu| gpu.limits().max_buffer_size)))
}

/// Lets the GPU release buffers that a JS call destroyed (see `Runtime::release_destroyed`).
pub fn release_destroyed_buffers() {
    with_started(|rt| {
        if let Some(rt) = rt {
            rt.release_destroyed();
        }
    });
}

/// Runs `f` with the page's runtime, if it has started.
pub fn with_started<T>(f: impl FnOnce(Option<&Runtime>) -> T) -> T {
    RUNTIME.with(|r| f(r.borrow().as_deref()))
}

/// The `RuntimeInfo` object `initRuntime` resolved with (its adapter fields come from the
/// browser's `GPUAdapterInfo`), once the runtime has started.
pub fn started_info() -> Option<JsValue> {
    INFO.with(|i| i.borrow().clone())
}

fn start(options: RuntimeOptions, threads: Option<usize>) -> js_sys::Promise {
    forget_a_lost_device();
    if let Some(promise) = STARTING.with(|s| s.borrow().clone()) {
        return promise;
    }
    let power_preference = options.power_preference;
    let promise = future_to_promise(async move {
        // The CPU pool first, so that start-up's measurements of the CPU already use it.
        crate::js::threads::start(threads).await;
        let options = RuntimeOptions {
            remembered: crate::js::store::read_all().await,
            remember: Some(Remember(Rc::new(crate::js::store::write))),
            ..options
        };
        match Runtime::new(options).await {
            Ok(runtime) => {
                let info = info_to_js(&runtime.info(), power_preference).await;
                RUNTIME.with(|r| *r.borrow_mut() = Some(Rc::new(runtime)));
                INFO.with(|i| *i.borrow_mut() = Some(info.clone()));
                Ok(info)
            }
            Err(err) => {
                // Let a later call try again, perhaps with other options.
                STARTING.with(|s| *s.borrow_mut() = None);
                Err(to_js(err))
            }
        }
    });
    STARTING.with(|s| *s.borrow_mut() = Some(promise.clone()));
    promise
}

/// `initRuntime`'s option keys.
const KEYS: [&str; 6] = [
    "powerPreference",
    "requireGpu",
    "memoryLimit",
    "cacheLimit",
    "defaultDevice",
    "threads",
];

fn runtime_options(opts: &JsValue) -> Result<RuntimeOptions> {
    let opts = Options::parse("initRuntime", opts, &KEYS)?;
    let power_preference = match opts.string("powerPreference")?.as_deref() {
        None => wgpu::PowerPreference::None,
        Some("low-power") => wgpu::PowerPreference::LowPower,
        Some("high-performance") => wgpu::PowerPreference::HighPerformance,
        Some(other) => {
            return Err(Error::Value(format!(
                "initRuntime: powerPreference \"{other}\" is neither \"low-power\" nor \"high-performance\""
            )));
        }
    };
    let default_device = opts
        .string("defaultDevice")?
        .map(|name| {
            Device::parse(&name).map_err(|e| Error::Value(format!("initRuntime: {}", e.message())))
        })
        .transpose()?;
    Ok(RuntimeOptions {
        power_preference,
        require_gpu: opts.flag("requireGpu")?,
        default_device,
        memory_limit: byte_option(&opts, "memoryLimit")?,
        cache_limit: byte_option(&opts, "cacheLimit")?,
        remembered: Vec::new(),
        remember: None,
    })
}

/// A byte count option: a whole number from 0.
fn byte_option(opts: &Options, key: &'static str) -> Result<Option<u64>> {
    opts.number(key)?
        .map(|value| byte_count(&format!("initRuntime: {key}"), value))
        .transpose()
}

fn describe(value: &JsValue) -> String {
    crate::js::error::message_of(value).unwrap_or_else(|| "unknown error".into())
}

/// `RuntimeInfo` as the plain object the types (`npm/index.d.ts`) describe.
async fn info_to_js(info: &RuntimeInfo, power_preference: wgpu::PowerPreference) -> JsValue {
    let object = js_sys::Object::new();
    set(&object, "gpu", info.gpu.into());
    let adapter = match &info.adapter {
        Some(summary) => {
            let adapter = js_sys::Object::new();
            set(&adapter, "vendor", summary.vendor.as_str().into());
            set(
                &adapter,
                "architecture",
                summary.architecture.as_str().into(),
            );
            set(&adapter, "device", summary.device.as_str().into());
            set(&adapter, "description", summary.description.as_str().into());
            set(
                &adapter,
                "isFallbackAdapter",
                summary.is_fallback_adapter.into(),
            );
            fill_from_browser(&adapter, power_preference).await;
            adapter.into()
        }
        None => JsValue::NULL,
    };
    set(&object, "adapter", adapter);
    let limits = js_sys::Object::new();
    for (name, value) in &info.limits {
        set(&limits, name, JsValue::from_f64(*value as f64));
    }
    set(&object, "limits", limits.into());
    let features: js_sys::Array = info.features.iter().map(|f| JsValue::from_str(f)).collect();
    set(&object, "features", features.into());
    let default_device = js_sys::Object::new();
    set(&default_device, "device", info.default_device.name().into());
    set(
        &default_device,
        "reason",
        info.default_device_reason.as_str().into(),
    );
    set(
        &default_device,
        "source",
        info.default_device_source.name().into(),
    );
    set(&object, "defaultDevice", default_device.into());
    set(&object, "math", math_to_js(info));
    if info.gpu {
        live_property(&object, "matmul", || {
            with_started(|rt| rt.map_or(JsValue::NULL, |rt| matmul_to_js(&rt.info())))
        });
    } else {
        set(&object, "matmul", JsValue::NULL);
    }
    live_property(&object, "threads", || {
        crate::js::threads::current().map_or(JsValue::NULL, |t| crate::js::threads::to_js(&t))
    });
    let startup = js_sys::Object::new();
    for (step, ms) in &info.startup_ms {
        set(&startup, step, (*ms).into());
    }
    set(&object, "startupMs", startup.into());
    object.into()
}

/// Which `exp` the GPU kernels use, why and where the choice came from; null without a GPU.
fn math_to_js(info: &RuntimeInfo) -> JsValue {
    match &info.exp {
        Some(choice) => {
            let math = js_sys::Object::new();
            let exp = if choice.builtin {
                "builtin"
            } else {
                "accurate"
            };
            set(&math, "exp", exp.into());
            set(&math, "reason", choice.reason.as_str().into());
            let source = if choice.remembered {
                "remembered"
            } else {
                "measured"
            };
            set(&math, "source", source.into());
            math.into()
        }
        None => JsValue::NULL,
    }
}

/// The matmul kernel and where it came from; `source` is "not yet needed" until the first GPU
/// matmul.
fn matmul_to_js(info: &RuntimeInfo) -> JsValue {
    let matmul = js_sys::Object::new();
    match &info.matmul {
        Some(tuning) => {
            set(&matmul, "kernel", tuning.kernel.name().into());
            set(&matmul, "reason", tuning.reason.as_str().into());
            set(&matmul, "source", tuning.source.name().into());
        }
        None => {
            set(&matmul, "kernel", JsValue::NULL);
            let why = "chosen by measurement at the first GPU matmul";
            set(&matmul, "reason", why.into());
            set(&matmul, "source", "not yet needed".into());
        }
    }
    matmul.into()
}

/// An enumerable property of `object` whose value `get` computes on each read.
fn live_property(object: &js_sys::Object, key: &str, get: impl Fn() -> JsValue + 'static) {
    let getter = Closure::wrap(Box::new(get) as Box<dyn Fn() -> JsValue>).into_js_value();
    let descriptor = js_sys::Object::new();
    set(&descriptor, "get", getter);
    set(&descriptor, "enumerable", true.into());
    js_sys::Object::define_property(object, &key.into(), &descriptor);
}

/// wgpu forwards only the adapter's description; the page's own `GPUAdapterInfo` has vendor,
/// architecture and device too. Asking for the adapter again is cheap and changes nothing.
async fn fill_from_browser(adapter: &js_sys::Object, power_preference: wgpu::PowerPreference) {
    let Some(info) = browser_adapter_info(power_preference).await else {
        return;
    };
    for (js_name, ours) in [
        ("vendor", "vendor"),
        ("architecture", "architecture"),
        ("device", "device"),
        ("description", "description"),
        ("isFallbackAdapter", "isFallbackAdapter"),
    ] {
        if let Ok(value) = js_sys::Reflect::get(&info, &js_name.into())
            && !value.is_undefined()
        {
            set(adapter, ours, value);
        }
    }
}

async fn browser_adapter_info(power_preference: wgpu::PowerPreference) -> Option<JsValue> {
    let navigator = js_sys::Reflect::get(&js_sys::global(), &"navigator".into()).ok()?;
    let gpu = js_sys::Reflect::get(&navigator, &"gpu".into()).ok()?;
    let request: js_sys::Function = js_sys::Reflect::get(&gpu, &"requestAdapter".into())
        .ok()?
        .dyn_into()
        .ok()?;
    let options = js_sys::Object::new();
    match power_preference {
        wgpu::PowerPreference::LowPower => set(&options, "powerPreference", "low-power".into()),
        wgpu::PowerPreference::HighPerformance => {
            set(&options, "powerPreference", "high-performance".into())
        }
        wgpu::PowerPreference::None => {}
    }
    let promise: js_sys::Promise = request.call1(&gpu, &options).ok()?.dyn_into().ok()?;
    let adapter = JsFuture::from(promise).await.ok()?;
    if adapter.is_null() {
        return None;
    }
    js_sys::Reflect::get(&adapter, &"info".into()).ok()
}
