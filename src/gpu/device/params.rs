//! The parameter ring: uniform buffers that hold every dispatch's parameters.

use std::cell::{Cell, RefCell};

use crate::error::Result;
use crate::memory::allocator::{GpuBuffer, Usage, alloc_gpu};

/// Bytes per parameter block: 256 is a multiple of every adapter's
/// `minUniformBufferOffsetAlignment`, and more than any kernel's parameters need.
pub(crate) const PARAM_SLOT: u64 = 256;
/// Parameter blocks per chunk of the ring.
pub(crate) const PARAM_SLOTS: usize = 1024;

/// Uniform buffers (chunks of [`PARAM_SLOTS`] blocks) that hold every dispatch's parameters,
/// read at a dynamic offset, so no dispatch creates a buffer of its own. A batch stages its
/// blocks on the host and writes them just before it submits; the queue orders those writes
/// after all earlier submits, so a block can be reused once its batch is submitted.
///
/// The runtime has one recording batch, so the blocks it holds are the ones taken since its
/// last submit. A batch that holds every block (one node that records more dispatches than
/// the ring has blocks, such as a `concatenate` of thousands of arrays) makes the ring grow by
/// a chunk instead of submitting on its own: only the scheduler submits, once the batch's
/// buffers are confirmed. Once that batch is submitted the ring goes back to one chunk, so
/// what it holds is bounded by the batch in flight, not by the largest batch ever.
#[derive(Debug)]
pub struct ParamRing {
    device: wgpu::Device,
    max_buffer_size: u64,
    chunks: RefCell<Vec<GpuBuffer>>,
    next: Cell<usize>,
}

/// Where a block is: its chunk and byte offset in it.
pub(crate) struct Place {
    pub(crate) chunk: GpuBuffer,
    pub(crate) offset: u32,
}

impl ParamRing {
    pub fn new(device: &wgpu::Device, max_buffer_size: u64) -> Result<ParamRing> {
        let ring = ParamRing {
            device: device.clone(),
            max_buffer_size,
            chunks: RefCell::new(Vec::new()),
            next: Cell::new(0),
        };
        ring.grow()?;
        Ok(ring)
    }

    fn grow(&self) -> Result<()> {
        let bytes = PARAM_SLOT * PARAM_SLOTS as u64;
        let chunk = alloc_gpu(&self.device, self.max_buffer_size, Usage::Uniform, bytes)?;
        self.chunks.borrow_mut().push(chunk);
        Ok(())
    }

    /// Blocks in the ring.
    pub(crate) fn slots(&self) -> usize {
        self.chunks.borrow().len() * PARAM_SLOTS
    }

    /// The next block, for a batch that holds `held` blocks already; the ring grows when
    /// the batch holds every block. Fails only past the memory limit.
    pub(crate) fn take_slot(&self, held: usize) -> Result<usize> {
        if held >= self.slots() {
            let first_new = self.slots();
            self.grow()?;
            self.next.set(first_new);
        }
        let slot = self.next.get();
        self.next.set((slot + 1) % self.slots());
        Ok(slot)
    }

    /// Lets go of the chunks a grown ring added, once the batch that needed them is submitted
    /// (the caller's promise): the queue orders the next batch's writes after that submit, as
    /// it does for any reused block, and the chunks go back to the allocator's cache.
    pub(crate) fn shrink(&self) {
        let mut chunks = self.chunks.borrow_mut();
        if chunks.len() > 1 {
            chunks.truncate(1);
            self.next.set(0);
        }
    }

    /// The chunk and offset of block `slot`.
    pub(crate) fn place(&self, slot: usize) -> Place {
        Place {
            chunk: self.chunks.borrow()[slot / PARAM_SLOTS].clone(),
            offset: ((slot % PARAM_SLOTS) as u64 * PARAM_SLOT) as u32,
        }
    }

    /// Writes `staged`, one padded block per entry of `slots`: one `writeBuffer` per run of
    /// consecutive blocks in a chunk.
    pub(crate) fn write(&self, queue: &wgpu::Queue, slots: &[usize], staged: &[u32]) {
        let words_per_slot = (PARAM_SLOT / 4) as usize;
        let chunks = self.chunks.borrow();
        let mut start = 0;
        while start < slots.len() {
            let mut end = start + 1;
            while end < slots.len()
                && slots[end] == slots[end - 1] + 1
                && !slots[end].is_multiple_of(PARAM_SLOTS)
            {
                end += 1;
            }
            let first = slots[start];
            queue.write_buffer(
                chunks[first / PARAM_SLOTS].buffer(),
                (first % PARAM_SLOTS) as u64 * PARAM_SLOT,
                bytemuck::cast_slice(&staged[start * words_per_slot..end * words_per_slot]),
            );
            start = end;
        }
    }
}
