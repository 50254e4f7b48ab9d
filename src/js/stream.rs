//! `Stream`, `defaultStream`, `newStream`, `setDefaultDevice`, `defaultDevice`, `synchronize`
//! and `evaluate`, and how an op's `stream` option becomes a core [`Stream`].

use std::cell::Cell;

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::error::{Error, Result};
use crate::js::error::{JsResult, js, to_js};
use crate::js::options::{Options, count_of, describe};
use crate::js::runtime::current;
use crate::js::tree::{Numbers, Tree};
use crate::stream::{Device, Stream};

thread_local! {
    /// The device chosen by `setDefaultDevice`, which overrides the runtime's choice.
    static DEFAULT_DEVICE: Cell<Option<Device>> = const { Cell::new(None) };
    /// The index the next `newStream` gets (0 and 1 are the default streams).
    static NEXT_INDEX: Cell<u32> = const { Cell::new(2) };
}

/// An ordered lane of work on a device (MLX's `mx.Stream`). The streams of one device share
/// its queue (WebGPU) or the page's thread (wasm), so they order work but do not run it in
/// parallel with each other; streams of different devices do overlap.
#[wasm_bindgen(js_name = Stream)]
#[derive(Clone, Copy)]
pub struct JsStream {
    inner: Stream,
}

#[wasm_bindgen(js_class = Stream)]
impl JsStream {
    /// `"cpu"` or `"gpu"`.
    #[wasm_bindgen(getter)]
    pub fn device(&self) -> String {
        self.inner.device.name().into()
    }

    /// The stream's number; the default streams are 0 (`gpu`) and 1 (`cpu`).
    #[wasm_bindgen(getter)]
    pub fn index(&self) -> u32 {
        self.inner.index
    }

    /// `Stream(gpu, 0)`.
    #[wasm_bindgen(js_name = toString)]
    pub fn to_display_string(&self) -> String {
        format!("Stream({}, {})", self.inner.device.name(), self.inner.index)
    }
}

fn device_named(op: &str, name: &str) -> Result<Device> {
    Device::parse(name).map_err(|e| Error::Value(format!("{op}: {}", e.message())))
}

impl From<Stream> for JsStream {
    fn from(inner: Stream) -> JsStream {
        JsStream { inner }
    }
}

/// The default stream of `"cpu"` or `"gpu"`.
#[wasm_bindgen(js_name = defaultStream)]
pub fn default_stream(device: &str) -> JsResult<JsStream> {
    let device = js(device_named("defaultStream", device))?;
    Ok(JsStream {
        inner: Stream::default_for(device),
    })
}

/// A new stream on `"cpu"` or `"gpu"`.
#[wasm_bindgen(js_name = newStream)]
pub fn new_stream(device: &str) -> JsResult<JsStream> {
    let device = js(device_named("newStream", device))?;
    let index = NEXT_INDEX.with(|n| n.replace(n.get() + 1));
    Ok(JsStream {
        inner: Stream { device, index },
    })
}

/// Makes `device` the one ops use when they name no stream.
#[wasm_bindgen(js_name = setDefaultDevice)]
pub fn set_default_device(device: &str) -> JsResult<()> {
    let device = js(device_named("setDefaultDevice", device))?;
    DEFAULT_DEVICE.with(|d| d.set(Some(device)));
    Ok(())
}

/// The device ops use when they name no stream: `setDefaultDevice`'s, else the runtime's.
#[wasm_bindgen(js_name = defaultDevice)]
pub fn default_device_name() -> String {
    default_device().name().into()
}

/// The device ops use when they name no stream.
pub fn default_device() -> Device {
    DEFAULT_DEVICE
        .with(Cell::get)
        .unwrap_or_else(crate::js::runtime::runtime_default_device)
}

/// The stream of an op that names none: the default device's default stream.
pub fn default_op_stream() -> Stream {
    Stream::default_for(default_device())
}

/// The stream `opts.stream` names (a `Stream`, or `"cpu"`/`"gpu"` for that device's default
/// stream), else the default device's default stream.
pub fn stream_in(opts: &Options) -> Result<Stream> {
    match opts.get("stream") {
        Some(value) => stream_of(opts.op(), &value),
        None => Ok(default_op_stream()),
    }
}

/// The stream an op's `stream` option names: a `Stream`, or `"cpu"`/`"gpu"` for that
/// device's default stream.
pub fn stream_of(op: &str, value: &JsValue) -> Result<Stream> {
    if let Some(name) = value.as_string() {
        return device_named(op, &name).map(Stream::default_for);
    }
    let field = |key: &str| js_sys::Reflect::get(value, &key.into()).ok();
    let device = field("device").and_then(|d| d.as_string());
    let index = field("index").filter(|i| i.as_f64().is_some());
    match (device, index) {
        (Some(device), Some(index)) => {
            let index = count_of(op, "opts.stream.index", &index)?;
            Ok(Stream {
                device: device_named(op, &device)?,
                index: u32::try_from(index).map_err(|_| {
                    Error::Value(format!("{op}: opts.stream.index {index} is not a stream's"))
                })?,
            })
        }
        _ => Err(Error::Value(format!(
            "{op}: opts.stream must be a Stream, \"cpu\" or \"gpu\", got {}",
            describe(value)
        ))),
    }
}

/// Resolves once the work queued on `stream` (or on every stream, without one) has finished.
/// CPU work runs to completion inside `evaluate`, so only the GPU queue can be busy; waiting
/// for it includes submitting recorded work and finishing readbacks in flight.
#[wasm_bindgen(unchecked_return_type = "Promise<void>")]
pub fn synchronize(stream: JsValue) -> JsResult<js_sys::Promise> {
    let all_streams = stream.is_undefined();
    let on_gpu = all_streams || js(stream_of("synchronize", &stream))?.device == Device::Gpu;
    if all_streams {
        crate::memory::allocator::record_sync_all_streams();
    }
    Ok(future_to_promise(async move {
        let runtime = current().await.map_err(to_js)?;
        if on_gpu {
            runtime.synchronize().await.map_err(to_js)?;
        }
        Ok(JsValue::UNDEFINED)
    }))
}

/// `evaluate(...trees)`: runs the graphs that produce the arrays (MLX's `mx.eval`), and
/// resolves once their results are computed on every device. Each argument is an array or a
/// tree of them (JS arrays and plain objects); numbers and `null` in a tree are skipped, as
/// MLX skips leaves that are not arrays.
#[wasm_bindgen(variadic, unchecked_return_type = "Promise<void>")]
pub fn evaluate(
    #[wasm_bindgen(unchecked_param_type = "Tree[]")] trees: Vec<JsValue>,
) -> JsResult<js_sys::Promise> {
    let mut arrays = Vec::new();
    let what = |i| format!("evaluate: argument {i}");
    js(Tree::split_each(trees, what, Numbers::Keep, &mut arrays))?;
    Ok(future_to_promise(async move {
        let runtime = current().await.map_err(to_js)?;
        runtime.evaluate(&arrays).await.map_err(to_js)?;
        Ok(JsValue::UNDEFINED)
    }))
}

/// Tuning: the most GPU dispatches one submit carries, 1 to 1024. Fewer start the GPU sooner;
/// more cost fewer submits. The default was chosen with `cargo xtask bench batching`.
#[wasm_bindgen(js_name = setDispatchesPerSubmit)]
pub fn set_dispatches_per_submit(count: f64) -> JsResult<()> {
    if !(count.fract() == 0.0 && (1.0..=1024.0).contains(&count)) {
        return Err(to_js(Error::Value(format!(
            "setDispatchesPerSubmit: need a whole number from 1 to 1024, got {count}"
        ))));
    }
    crate::runtime::set_dispatches_per_submit(count as usize);
    Ok(())
}

/// The most GPU dispatches one submit carries.
#[wasm_bindgen(js_name = dispatchesPerSubmit)]
pub fn dispatches_per_submit() -> u32 {
    crate::runtime::dispatches_per_submit() as u32
}
