//! The parameter ring: one uniform buffer for every dispatch's parameters.

use crate::error::Result;
use crate::memory::allocator::{GpuBuffer, Usage, alloc_gpu};

/// Bytes per parameter block: 256 is a multiple of every adapter's
/// `minUniformBufferOffsetAlignment`, and more than any kernel's parameters need.
pub(crate) const PARAM_SLOT: u64 = 256;
/// Parameter blocks in the ring; a batch that needs more is submitted and the ring reused.
pub(crate) const PARAM_SLOTS: usize = 1024;

/// One uniform buffer that holds every dispatch's parameters, read at a dynamic offset, so no
/// dispatch creates a buffer of its own. A batch stages its blocks on the host and writes them
/// with one `writeBuffer` (two when they wrap) just before it submits; the queue orders that
/// write after all earlier submits, so a block can be reused once its batch is submitted.
#[derive(Debug)]
pub struct ParamRing {
    pub(crate) buffer: GpuBuffer,
    next: std::cell::Cell<usize>,
}

impl ParamRing {
    pub fn new(device: &wgpu::Device, max_buffer_size: u64) -> Result<ParamRing> {
        let bytes = PARAM_SLOT * PARAM_SLOTS as u64;
        let buffer = alloc_gpu(device, max_buffer_size, Usage::Uniform, bytes)?;
        Ok(ParamRing {
            buffer,
            next: std::cell::Cell::new(0),
        })
    }

    /// The next block.
    pub(crate) fn take_slot(&self) -> usize {
        let slot = self.next.get();
        self.next.set((slot + 1) % PARAM_SLOTS);
        slot
    }

    /// Writes the staged blocks, which start at block `first` and may wrap past the end.
    pub(crate) fn write(&self, queue: &wgpu::Queue, first: usize, staged: &[u32]) {
        let words_per_slot = (PARAM_SLOT / 4) as usize;
        let until_end = (PARAM_SLOTS - first) * words_per_slot;
        let (head, tail) = staged.split_at(staged.len().min(until_end));
        queue.write_buffer(
            self.buffer.buffer(),
            first as u64 * PARAM_SLOT,
            bytemuck::cast_slice(head),
        );
        if !tail.is_empty() {
            queue.write_buffer(self.buffer.buffer(), 0, bytemuck::cast_slice(tail));
        }
    }
}
