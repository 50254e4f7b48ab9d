//! `cachingAllocatorAlloc` and `cachingAllocatorDelete` (PyTorch's `caching_allocator_alloc`
//! and `caching_allocator_delete`): raw blocks from the allocator's cache, with the
//! `GPUBuffer` behind a GPU block and the runtime's `GPUDevice`, so that a page can run its own
//! WGSL on tandem's memory.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use wasm_bindgen::prelude::*;

use crate::error::Error;
use crate::js::error::{JsResult, js, to_js};
use crate::js::options::{Options, byte_count, describe};
use crate::js::property;
use crate::js::runtime::{release_destroyed_buffers, with_started};
use crate::js::stream::stream_in;
use crate::raw_block::RawBlock;

thread_local! {
    /// The blocks the page holds, by handle; deleting one drops it back to the cache.
    static BLOCKS: RefCell<HashMap<u32, RawBlock>> = RefCell::new(HashMap::new());
    static NEXT_HANDLE: Cell<u32> = const { Cell::new(1) };
}

/// A raw block. Its memory stays the page's until `cachingAllocatorDelete(block)` or
/// `block.free()`; after that its range must not be used, because the cache hands it out
/// again.
///
/// A GPU block is a range of a `GPUBuffer` that other blocks and arrays may share, as a
/// PyTorch block is a range of a segment: bind `{buffer: block.buffer, offset: block.offset,
/// size: block.size}`. WebGPU rejects a buffer bound both `read-only-storage` and `storage`
/// in one dispatch, so bind blocks that may share a buffer all as `storage` (`read_write` in
/// WGSL), or write only into a block of its own (`setCacheLimit(0)` gives every block a
/// buffer of its own).
#[wasm_bindgen(js_name = Block)]
pub struct Block {
    handle: u32,
    bytes: u64,
    size: u64,
    offset: u64,
    id: u64,
    stream: crate::stream::Stream,
    device: crate::stream::Device,
}

#[wasm_bindgen(js_class = Block)]
impl Block {
    /// The bytes asked for.
    #[wasm_bindgen(getter)]
    pub fn bytes(&self) -> f64 {
        self.bytes as f64
    }

    /// The bytes held: the request rounded to its pool's granularity, or more.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> f64 {
        self.size as f64
    }

    /// Where the block starts in `buffer`, in bytes: a multiple of 256, as WebGPU requires
    /// of a storage binding's offset. 0 for a CPU block.
    #[wasm_bindgen(getter)]
    pub fn offset(&self) -> f64 {
        self.offset as f64
    }

    /// The allocator's id of the block, as `memoryHistory()` and `memorySnapshot()` name it.
    #[wasm_bindgen(getter)]
    pub fn id(&self) -> f64 {
        self.id as f64
    }

    /// Where its memory is, `"cpu"` or `"gpu"`: a gpu stream's block is on the CPU when there
    /// is no WebGPU, as the gpu device's work is.
    #[wasm_bindgen(getter)]
    pub fn device(&self) -> String {
        self.device.name().to_string()
    }

    /// The stream it was allocated for.
    #[wasm_bindgen(getter)]
    pub fn stream(&self) -> crate::js::stream::JsStream {
        self.stream.into()
    }

    /// Whether it has been deleted.
    #[wasm_bindgen(getter)]
    pub fn deleted(&self) -> bool {
        !BLOCKS.with(|b| b.borrow().contains_key(&self.handle))
    }

    /// The `GPUBuffer` a GPU block is carved from (usage `STORAGE | COPY_SRC | COPY_DST`, on
    /// the device `gpuDevice()` returns), or `null` for a CPU block or a deleted one. The
    /// block's bytes are `offset` to `offset + size` of it.
    #[wasm_bindgen(getter, unchecked_return_type = "GPUBuffer | null")]
    pub fn buffer(&self) -> JsValue {
        BLOCKS.with(|b| {
            b.borrow()
                .get(&self.handle)
                .and_then(RawBlock::gpu_buffer)
                .and_then(web_buffer)
                .unwrap_or(JsValue::NULL)
        })
    }

    /// Read by `cachingAllocatorDelete` to find the block a JS value names.
    #[wasm_bindgen(getter = __handle)]
    pub fn handle(&self) -> u32 {
        self.handle
    }
}

impl Drop for Block {
    /// `block.free()` (or the wrapper's finalization) deletes the block too: nothing leaks.
    fn drop(&mut self) {
        let block = BLOCKS.with(|b| b.borrow_mut().remove(&self.handle));
        drop(block);
        release_destroyed_buffers();
    }
}

fn web_buffer(buffer: &wgpu::Buffer) -> Option<JsValue> {
    buffer.as_webgpu().map(|b| JsValue::from(b.clone()))
}

/// A raw block of at least `bytes` bytes from the cache, on `opts.stream`'s device (the
/// default device's stream without one), counted in every statistic like an array's storage.
/// Its contents are whatever the buffer last held. Needs a started runtime (`initRuntime`).
#[wasm_bindgen(js_name = cachingAllocatorAlloc)]
pub fn caching_allocator_alloc(bytes: JsValue, opts: JsValue) -> JsResult<Block> {
    let op = "cachingAllocatorAlloc";
    let bytes = match bytes.as_f64() {
        Some(x) => js(byte_count(&format!("{op}: bytes"), x))?,
        None => {
            return Err(to_js(Error::Value(format!(
                "{op}: bytes must be a number, got {}",
                describe(&bytes)
            ))));
        }
    };
    let stream = js(Options::parse(op, &opts, &["stream"]).and_then(|o| stream_in(&o)))?;
    let raw = with_started(|runtime| {
        let runtime = runtime.ok_or_else(|| {
            Error::Device(format!(
                "{op}: the runtime has not started; await initRuntime() first"
            ))
        })?;
        runtime.raw_block(bytes, stream)
    });
    let raw = js(raw)?;
    let handle = NEXT_HANDLE.with(|n| n.replace(n.get().wrapping_add(1).max(1)));
    let block = Block {
        handle,
        bytes: raw.bytes(),
        size: raw.size(),
        offset: raw.offset(),
        id: raw.id(),
        stream,
        device: raw.device(),
    };
    BLOCKS.with(|b| b.borrow_mut().insert(handle, raw));
    Ok(block)
}

/// Returns a block to the cache. Deleting a block twice, or anything but a block, is a
/// `ValueError`.
#[wasm_bindgen(js_name = cachingAllocatorDelete)]
pub fn caching_allocator_delete(
    #[wasm_bindgen(unchecked_param_type = "Block")] block: JsValue,
) -> JsResult<()> {
    let op = "cachingAllocatorDelete";
    let handle = js_sys::Reflect::get(&block, &property("__handle"))
        .ok()
        .and_then(|h| h.as_f64())
        .filter(|_| block.is_object())
        .ok_or_else(|| {
            to_js(Error::Value(format!(
                "{op}: expected a Block from cachingAllocatorAlloc, got {}",
                describe(&block)
            )))
        })?;
    let raw = BLOCKS.with(|b| b.borrow_mut().remove(&(handle as u32)));
    match raw {
        Some(raw) => {
            drop(raw);
            release_destroyed_buffers();
            Ok(())
        }
        None => Err(to_js(Error::Value(format!(
            "{op}: this block was already deleted"
        )))),
    }
}

/// The runtime's `GPUDevice`, for a page's own WGSL on the buffers of raw blocks; `null`
/// before `initRuntime` has resolved or without WebGPU.
#[wasm_bindgen(js_name = gpuDevice, unchecked_return_type = "GPUDevice | null")]
pub fn gpu_device() -> JsValue {
    with_started(|runtime| {
        runtime
            .and_then(|r| r.gpu())
            .and_then(|gpu| web_device(&gpu.device))
    })
    .unwrap_or(JsValue::NULL)
}

fn web_device(device: &wgpu::Device) -> Option<JsValue> {
    device.as_webgpu().map(|d| JsValue::from(d.clone()))
}
