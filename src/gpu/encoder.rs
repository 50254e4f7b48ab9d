//! Command batching, uploads and readback.
//!
//! Dispatches are recorded into one command encoder and submitted together: on WebGPU a submit
//! costs several times a dispatch, so batching is what keeps small ops cheap.

use futures_channel::oneshot;
use wgpu::util::DeviceExt;

use crate::error::{Error, Result};
use crate::gpu::GpuContext;

/// Bytes of a buffer that holds `words` elements. WebGPU cannot bind an empty buffer, so an
/// empty array still gets one word.
pub fn buffer_bytes(words: usize) -> u64 {
    (words.max(1) * 4) as u64
}

/// Dispatches recorded but not yet submitted.
pub struct CommandBatch<'a> {
    gpu: &'a GpuContext,
    encoder: Option<wgpu::CommandEncoder>,
}

impl<'a> CommandBatch<'a> {
    pub fn new(gpu: &'a GpuContext) -> CommandBatch<'a> {
        CommandBatch { gpu, encoder: None }
    }

    /// The open encoder, started on first use.
    pub fn encoder(&mut self) -> &mut wgpu::CommandEncoder {
        self.encoder.get_or_insert_with(|| {
            self.gpu
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("tandem batch"),
                })
        })
    }

    /// Submits what was recorded; nothing happens when the batch is empty.
    pub fn submit(&mut self) {
        if let Some(encoder) = self.encoder.take() {
            self.gpu.queue.submit([encoder.finish()]);
        }
    }
}

/// A storage buffer for `words` elements that kernels write and readback copies from.
pub fn create_storage(gpu: &GpuContext, words: usize) -> Result<wgpu::Buffer> {
    let size = buffer_bytes(words);
    check_binding_size(gpu, size)?;
    Ok(gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("tandem storage"),
        size,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    }))
}

/// A storage buffer holding `words`, uploaded with `writeBuffer` (the fastest upload path on
/// the browsers measured, see PERFORMANCE.md).
pub fn upload_words(gpu: &GpuContext, words: &[u32]) -> Result<wgpu::Buffer> {
    let buffer = create_storage(gpu, words.len())?;
    if !words.is_empty() {
        gpu.queue
            .write_buffer(&buffer, 0, bytemuck::cast_slice(words));
    }
    Ok(buffer)
}

/// A small uniform buffer holding `words`, for a kernel's shape and stride parameters.
pub fn uniform_words(gpu: &GpuContext, words: &[u32]) -> wgpu::Buffer {
    gpu.device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("tandem params"),
            contents: bytemuck::cast_slice(words),
            usage: wgpu::BufferUsages::UNIFORM,
        })
}

/// Copies the first `words` elements of `buffer` back to the host. All work that writes the
/// buffer must already be submitted. Natively this polls the device; in the browser it awaits
/// the `mapAsync` promise and never blocks the thread.
pub async fn read_buffer(
    gpu: &GpuContext,
    buffer: &wgpu::Buffer,
    words: usize,
) -> Result<Vec<u32>> {
    if words == 0 {
        return Ok(Vec::new());
    }
    let size = (words * 4) as u64;
    let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("tandem readback"),
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("tandem readback"),
        });
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, size);
    gpu.queue.submit([encoder.finish()]);

    let (sender, receiver) = oneshot::channel();
    staging
        .slice(..)
        .map_async(wgpu::MapMode::Read, move |result| {
            // The receiver is only dropped if the reading future is, and then no one cares.
            let _ = sender.send(result);
        });
    wait_for_callbacks(gpu);
    receiver
        .await
        .map_err(|_| Error::Device("readback: the device was lost before mapping".into()))?
        .map_err(|e| Error::Device(format!("readback: mapping failed ({e})")))?;
    let words_out = {
        let view = staging
            .slice(..)
            .get_mapped_range()
            .map_err(|e| Error::Device(format!("readback: mapped range unavailable ({e})")))?;
        bytemuck::cast_slice(&view).to_vec()
    };
    staging.unmap();
    Ok(words_out)
}

#[cfg(not(target_arch = "wasm32"))]
fn wait_for_callbacks(gpu: &GpuContext) {
    // Natively nothing else drives the device, so block until the map callback has run.
    let _ = gpu.device.poll(wgpu::PollType::wait_indefinitely());
}

#[cfg(target_arch = "wasm32")]
fn wait_for_callbacks(_gpu: &GpuContext) {
    // The browser's event loop runs the callback once the mapAsync promise resolves.
}

fn check_binding_size(gpu: &GpuContext, size: u64) -> Result<()> {
    let max = gpu.limits().max_storage_buffer_binding_size;
    if size > max {
        return Err(Error::Value(format!(
            "a buffer of {size} bytes exceeds the adapter's maxStorageBufferBindingSize of {max} bytes"
        )));
    }
    Ok(())
}
