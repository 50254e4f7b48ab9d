//! Command batching, uploads and readback.
//!
//! Dispatches are recorded into one command encoder and submitted together: on WebGPU a submit
//! costs several times a dispatch, so batching is what keeps small ops cheap.

use futures_channel::oneshot;

use crate::error::{Error, Result};
use crate::gpu::GpuContext;

/// Bytes of a buffer that holds `words` elements. WebGPU cannot bind an empty buffer, so an
/// empty array still gets one word.
pub fn buffer_bytes(words: usize) -> u64 {
    (words.max(1) * 4) as u64
}

/// Bytes copied between host and GPU memory, as `memoryStats()` reports them under
/// `transfer_bytes.cpu_to_gpu` and `transfer_bytes.gpu_to_cpu`.
#[derive(Debug, Default)]
pub struct Transfers {
    to_gpu: std::cell::Cell<u64>,
    to_host: std::cell::Cell<u64>,
}

impl Transfers {
    /// Bytes uploaded so far.
    pub fn cpu_to_gpu(&self) -> u64 {
        self.to_gpu.get()
    }

    /// Bytes read back so far.
    pub fn gpu_to_cpu(&self) -> u64 {
        self.to_host.get()
    }
}

/// Bytes per parameter block: 256 is a multiple of every adapter's
/// `minUniformBufferOffsetAlignment`, and more than any kernel's parameters need.
const PARAM_SLOT: u64 = 256;
/// Parameter blocks in the ring; a batch that needs more is submitted and the ring reused.
const PARAM_SLOTS: usize = 1024;

/// One uniform buffer that holds every dispatch's parameters, read at a dynamic offset, so no
/// dispatch creates a buffer of its own. A batch stages its blocks on the host and writes them
/// with one `writeBuffer` (two when they wrap) just before it submits; the queue orders that
/// write after all earlier submits, so a block can be reused once its batch is submitted.
#[derive(Debug)]
pub struct ParamRing {
    buffer: wgpu::Buffer,
    next: std::cell::Cell<usize>,
}

impl ParamRing {
    pub fn new(device: &wgpu::Device) -> ParamRing {
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("tandem params"),
            size: PARAM_SLOT * PARAM_SLOTS as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        ParamRing {
            buffer,
            next: std::cell::Cell::new(0),
        }
    }

    /// The next block.
    fn take_slot(&self) -> usize {
        let slot = self.next.get();
        self.next.set((slot + 1) % PARAM_SLOTS);
        slot
    }

    /// Writes the staged blocks, which start at block `first` and may wrap past the end.
    fn write(&self, queue: &wgpu::Queue, first: usize, staged: &[u32]) {
        let words_per_slot = (PARAM_SLOT / 4) as usize;
        let until_end = (PARAM_SLOTS - first) * words_per_slot;
        let (head, tail) = staged.split_at(staged.len().min(until_end));
        queue.write_buffer(
            &self.buffer,
            first as u64 * PARAM_SLOT,
            bytemuck::cast_slice(head),
        );
        if !tail.is_empty() {
            queue.write_buffer(&self.buffer, 0, bytemuck::cast_slice(tail));
        }
    }
}

/// Dispatches recorded but not yet submitted. Its parameter blocks are consecutive in the ring
/// because the scheduler submits before every await, so no other batch takes blocks while this
/// one holds staged ones.
pub struct CommandBatch<'a> {
    gpu: &'a GpuContext,
    encoder: Option<wgpu::CommandEncoder>,
    /// This batch's parameter blocks, padded to a block each, from ring block `first_slot`.
    staged: Vec<u32>,
    first_slot: usize,
}

impl<'a> CommandBatch<'a> {
    pub fn new(gpu: &'a GpuContext) -> CommandBatch<'a> {
        CommandBatch {
            gpu,
            encoder: None,
            staged: Vec::new(),
            first_slot: 0,
        }
    }

    /// The open encoder, started on first use.
    fn encoder(&mut self) -> &mut wgpu::CommandEncoder {
        self.encoder.get_or_insert_with(|| {
            self.gpu
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("tandem batch"),
                })
        })
    }

    /// Records one dispatch of `pipeline` with `params` as its parameter block and `buffers`
    /// (inputs, then the output) as bindings 1, 2, …
    pub fn dispatch(
        &mut self,
        pipeline: &wgpu::ComputePipeline,
        label: &str,
        params: &[u32],
        buffers: &[&wgpu::Buffer],
        grid: (u32, u32, u32),
    ) {
        let words_per_slot = (PARAM_SLOT / 4) as usize;
        if self.staged.len() == PARAM_SLOTS * words_per_slot {
            self.submit();
        }
        let ring = &self.gpu.params;
        let slot = ring.take_slot();
        if self.staged.is_empty() {
            self.first_slot = slot;
        }
        let start = self.staged.len();
        self.staged.extend_from_slice(params);
        self.staged.resize(start + words_per_slot, 0);
        let offset = (slot as u64 * PARAM_SLOT) as u32;
        let mut entries = vec![wgpu::BindGroupEntry {
            binding: 0,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: &ring.buffer,
                offset: 0,
                size: std::num::NonZeroU64::new(PARAM_SLOT),
            }),
        }];
        entries.extend(
            buffers
                .iter()
                .enumerate()
                .map(|(i, b)| wgpu::BindGroupEntry {
                    binding: i as u32 + 1,
                    resource: b.as_entire_binding(),
                }),
        );
        let bind_group = self
            .gpu
            .device
            .create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(label),
                layout: &pipeline.get_bind_group_layout(0),
                entries: &entries,
            });
        let mut pass = self
            .encoder()
            .begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(label),
                timestamp_writes: None,
            });
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, &bind_group, &[offset]);
        pass.dispatch_workgroups(grid.0, grid.1, grid.2);
    }

    /// Submits what was recorded; nothing happens when the batch is empty.
    pub fn submit(&mut self) {
        if !self.staged.is_empty() {
            self.gpu
                .params
                .write(&self.gpu.queue, self.first_slot, &self.staged);
            self.staged.clear();
        }
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
    let moved = &gpu.transfers.to_gpu;
    moved.set(moved.get() + (words.len() * 4) as u64);
    if !words.is_empty() {
        gpu.queue
            .write_buffer(&buffer, 0, bytemuck::cast_slice(words));
    }
    Ok(buffer)
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
    let moved = &gpu.transfers.to_host;
    moved.set(moved.get() + size);
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

/// Resolves once every submitted command buffer has finished.
pub async fn wait_idle(gpu: &GpuContext) -> Result<()> {
    let (sender, receiver) = oneshot::channel();
    gpu.queue.on_submitted_work_done(move || {
        // The receiver is only dropped if the waiting future is, and then no one cares.
        let _ = sender.send(());
    });
    wait_for_callbacks(gpu);
    receiver
        .await
        .map_err(|_| Error::Device("synchronize: the device was lost".into()))
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
