//! `load`, `saveSafetensors` and `save`: weights files in and out of the page (the formats are
//! `crate::weights`'). A load reads its source as a stream (a `fetch`'s body, a `Blob`'s
//! stream, or bytes in memory) and feeds the parser chunk by chunk.

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, future_to_promise};

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::js::error::to_js;
use crate::js::ndarray::NdArray;
use crate::js::options::{Options, describe};
use crate::js::runtime::{current, with_started};
use crate::js::stream::stream_of;
use crate::stream::Device;
use crate::weights::loader::{self, Loaded, Loader};
use crate::weights::{Format, file_bytes, npy, safetensors};

/// `load(source, {stream?, dtype?, onProgress?})`: a safetensors file as a record of arrays,
/// or a `.npy` file as one array, told apart by content.
#[wasm_bindgen(unchecked_return_type = "Promise<NDArray | Record<string, NDArray>>")]
pub fn load(source: JsValue, opts: JsValue) -> js_sys::Promise {
    future_to_promise(async move { load_file(source, opts).await.map_err(to_js) })
}

/// What `load`'s options ask for.
struct Request {
    device: Option<Device>,
    dtype: Option<DType>,
    on_progress: Option<js_sys::Function>,
}

fn request(opts: &JsValue) -> Result<Request> {
    let opts = Options::parse("load", opts, &["stream", "dtype", "onProgress"])?;
    let device = match opts.get("stream") {
        Some(s) => Some(stream_of("load", &s)?.device),
        None => None,
    };
    let dtype = opts.dtype()?;
    if let Some(d) = dtype.filter(|d| !d.is_float()) {
        return Err(Error::DType(format!(
            "load: opts.dtype converts the file's float tensors, so it must be a float type \
             (float32, float16, bfloat16), got {}",
            d.name()
        )));
    }
    let on_progress = match opts.get("onProgress") {
        None => None,
        Some(f) => Some(f.dyn_into::<js_sys::Function>().map_err(|f| {
            Error::Value(format!(
                "load: opts.onProgress must be a function, got {}",
                describe(&f)
            ))
        })?),
    };
    Ok(Request {
        device,
        dtype,
        on_progress,
    })
}

async fn load_file(source: JsValue, opts: JsValue) -> Result<JsValue> {
    let request = request(&opts)?;
    let mut input = Source::open(&source).await?;
    let mut loader = Loader::new(loader::Options {
        dtype: request.dtype,
        device: request.device.unwrap_or(Device::Cpu),
        total: input.total,
    });
    let result = read_all(&mut input, &mut loader, &request).await;
    if result.is_err() {
        input.cancel();
    }
    let loaded = result?;
    let format = loader
        .format()
        .expect("a finished load has read its header");
    Ok(match format {
        Format::Npy => NdArray::new(loaded.into_iter().next().expect("one array").array).into(),
        Format::Safetensors => {
            let record = js_sys::Object::new();
            for t in loaded {
                js_sys::Reflect::set(&record, &t.name.into(), &NdArray::new(t.array).into())
                    .map_err(|e| Error::Value(format!("load: {}", describe(&e))))?;
            }
            record.into()
        }
    })
}

/// Feeds every chunk to the loader, placing tensors as they complete and reporting progress.
/// On an error the arrays made so far are dropped, so nothing stays allocated.
async fn read_all(
    input: &mut Source,
    loader: &mut Loader,
    request: &Request,
) -> Result<Vec<Loaded>> {
    let mut loaded = Vec::new();
    while let Some(chunk) = input.next().await? {
        let done = loader.feed(&chunk)?;
        place(&done, request.device).await?;
        loaded.extend(done);
        progress(request, loader.received(), loader.total().or(input.total))?;
    }
    let done = loader.finish()?;
    place(&done, request.device).await?;
    loaded.extend(done);
    let total = loader.total().unwrap_or(loader.received());
    progress(request, total, Some(total))?;
    Ok(loaded)
}

/// Moves finished tensors to the requested device, once a runtime has started (before one
/// has, data arrays move to a device at their first use there).
async fn place(done: &[Loaded], device: Option<Device>) -> Result<()> {
    let Some(device) = device.filter(|&d| d == Device::Gpu) else {
        return Ok(());
    };
    if !with_started(|rt| rt.is_some()) {
        return Ok(());
    }
    let runtime = current().await?;
    for t in done {
        runtime.place(&t.array, device).await?;
    }
    Ok(())
}

fn progress(request: &Request, read: u64, total: Option<u64>) -> Result<()> {
    let (Some(f), Some(total)) = (&request.on_progress, total) else {
        return Ok(());
    };
    f.call2(
        &JsValue::NULL,
        &(read as f64).into(),
        &(total as f64).into(),
    )
    .map(|_| ())
    .map_err(|e| Error::Value(format!("load: onProgress threw {}", describe(&e))))
}

/// A source of bytes: a stream reader, or bytes already in memory.
struct Source {
    reader: Option<js_sys::Object>,
    bytes: Option<Vec<u8>>,
    /// The file's size where the source tells it in advance.
    total: Option<u64>,
}

fn get(object: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(object, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

fn is_instance(value: &JsValue, class: &str) -> bool {
    // Looked up on the global, so that a page without the class (a worker without `Response`)
    // never meets a name that is not defined.
    let prototype = get(&get(&js_sys::global(), class), "prototype");
    prototype.is_object()
        && prototype
            .unchecked_ref::<js_sys::Object>()
            .is_prototype_of(value)
}

async fn call_async(object: &JsValue, method: &str, args: &[JsValue]) -> Result<JsValue> {
    let f: js_sys::Function = get(object, method)
        .dyn_into()
        .map_err(|_| Error::Value(format!("load: the source has no {method}() method")))?;
    let array: js_sys::Array = args.iter().collect();
    let promise = f
        .apply(object, &array)
        .map_err(|e| Error::Value(format!("load: {method}() threw {}", describe(&e))))?;
    JsFuture::from(js_sys::Promise::resolve(&promise))
        .await
        .map_err(|e| Error::Value(format!("load: {method}() failed: {}", describe(&e))))
}

impl Source {
    async fn open(source: &JsValue) -> Result<Source> {
        if let Some(url) = source.as_string() {
            let response = call_async(&js_sys::global(), "fetch", &[url.clone().into()]).await?;
            return Source::response(&response, &url);
        }
        if is_instance(source, "Response") {
            return Source::response(source, "the response");
        }
        if is_instance(source, "Blob") {
            let total = get(source, "size").as_f64().map(|s| s as u64);
            return Source::stream(&call_sync(source, "stream")?, total);
        }
        if source.is_instance_of::<js_sys::ArrayBuffer>()
            || source.is_instance_of::<js_sys::Uint8Array>()
        {
            let bytes = js_sys::Uint8Array::new(source).to_vec();
            let total = Some(bytes.len() as u64);
            return Ok(Source {
                reader: None,
                bytes: Some(bytes),
                total,
            });
        }
        Err(Error::Value(format!(
            "load: the source must be a URL string, a Response, a Blob, an ArrayBuffer or a \
             Uint8Array, got {}",
            describe(source)
        )))
    }

    fn response(response: &JsValue, what: &str) -> Result<Source> {
        if get(response, "ok").as_bool() != Some(true) {
            let status = get(response, "status").as_f64().unwrap_or(0.0);
            let text = get(response, "statusText").as_string().unwrap_or_default();
            return Err(Error::Value(format!(
                "load: {what} answered HTTP {status} {text}"
            )));
        }
        let headers = get(response, "headers");
        let header = |name: &str| {
            js_sys::Reflect::get(&headers, &"get".into())
                .ok()
                .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
                .and_then(|f| f.call1(&headers, &name.into()).ok())
                .and_then(|v| v.as_string())
        };
        // A compressed body's length is not the file's.
        let total = match header("content-encoding") {
            Some(_) => None,
            None => header("content-length").and_then(|n| n.parse().ok()),
        };
        let body = get(response, "body");
        if body.is_null() || body.is_undefined() {
            return Ok(Source {
                reader: None,
                bytes: Some(Vec::new()),
                total,
            });
        }
        Source::stream(&body, total)
    }

    fn stream(stream: &JsValue, total: Option<u64>) -> Result<Source> {
        let reader = call_sync(stream, "getReader")?;
        Ok(Source {
            reader: Some(reader.unchecked_into()),
            bytes: None,
            total,
        })
    }

    /// The next chunk, or `None` at the end.
    async fn next(&mut self) -> Result<Option<Vec<u8>>> {
        if let Some(bytes) = self.bytes.take() {
            return Ok(Some(bytes));
        }
        let Some(reader) = &self.reader else {
            return Ok(None);
        };
        let result = call_async(reader, "read", &[]).await?;
        if get(&result, "done").as_bool() == Some(true) {
            self.reader = None;
            return Ok(None);
        }
        let value = get(&result, "value");
        Ok(Some(js_sys::Uint8Array::new(&value).to_vec()))
    }

    /// Stops a stream that will not be read to its end (a failed load stops its download).
    fn cancel(&mut self) {
        if let Some(reader) = self.reader.take() {
            let _ = call_sync(&reader, "cancel");
        }
    }
}

fn call_sync(object: &JsValue, method: &str) -> Result<JsValue> {
    let f: js_sys::Function = get(object, method)
        .dyn_into()
        .map_err(|_| Error::Value(format!("load: the source has no {method}() method")))?;
    f.call0(object)
        .map_err(|e| Error::Value(format!("load: {method}() threw {}", describe(&e))))
}

/// `saveSafetensors(arrays, metadata?)`: the safetensors bytes of a record of arrays, with
/// string metadata.
#[wasm_bindgen(js_name = saveSafetensors, unchecked_return_type = "Promise<Uint8Array>")]
pub fn save_safetensors(arrays: JsValue, metadata: JsValue) -> js_sys::Promise {
    future_to_promise(async move { safetensors_file(arrays, metadata).await.map_err(to_js) })
}

async fn safetensors_file(arrays: JsValue, metadata: JsValue) -> Result<JsValue> {
    const OP: &str = "saveSafetensors";
    if !crate::js::options::is_options_object(&arrays) {
        return Err(Error::Value(format!(
            "{OP}: arrays must be a record of NDArrays by name, got {}",
            describe(&arrays)
        )));
    }
    let mut named: Vec<(String, Array)> = Vec::new();
    for entry in js_sys::Object::entries(&arrays.unchecked_into()).iter() {
        let pair: js_sys::Array = entry.unchecked_into();
        let name = pair.get(0).as_string().unwrap_or_default();
        let array = NdArray::from_js(OP, &pair.get(1)).map_err(|e| match e {
            Error::Value(m) => Error::Value(format!("{m} (for \"{name}\")")),
            other => other,
        })?;
        named.push((name, array));
    }
    let metadata = metadata_of(&metadata)?;
    let runtime = current().await?;
    let mut entries = Vec::with_capacity(named.len());
    for (name, array) in &named {
        let words = runtime.read_words(array).await?;
        entries.push(safetensors::Entry::of(name, array, &words));
    }
    let file = safetensors::write(&entries, &metadata)?;
    Ok(js_sys::Uint8Array::from(file.as_slice()).into())
}

fn metadata_of(value: &JsValue) -> Result<Vec<(String, String)>> {
    if value.is_undefined() || value.is_null() {
        return Ok(Vec::new());
    }
    if !crate::js::options::is_options_object(value) {
        return Err(Error::Value(format!(
            "saveSafetensors: metadata must be a record of strings, got {}",
            describe(value)
        )));
    }
    js_sys::Object::entries(&value.clone().unchecked_into())
        .iter()
        .map(|entry| {
            let pair: js_sys::Array = entry.unchecked_into();
            let key = pair.get(0).as_string().unwrap_or_default();
            let text = pair.get(1).as_string().ok_or_else(|| {
                Error::Value(format!(
                    "saveSafetensors: metadata \"{key}\" must be a string (safetensors keeps \
                     strings only), got {}",
                    describe(&pair.get(1))
                ))
            })?;
            Ok((key, text))
        })
        .collect()
}

/// `save(array)`: the `.npy` bytes (NumPy format 1.0) of one array.
#[wasm_bindgen(unchecked_return_type = "Promise<Uint8Array>")]
pub fn save(array: JsValue) -> js_sys::Promise {
    future_to_promise(async move { npy_file(array).await.map_err(to_js) })
}

async fn npy_file(array: JsValue) -> Result<JsValue> {
    let array = NdArray::from_js("save", &array)?;
    let runtime = current().await?;
    let words = runtime.read_words(&array).await?;
    let bytes = file_bytes(&words, array.dtype(), array.size());
    let file = npy::write(array.dtype(), array.shape(), &bytes)?;
    Ok(js_sys::Uint8Array::from(file.as_slice()).into())
}
