//! The blocks the allocator hands out: ranges of GPU buffers and host copies. Each returns to
//! the allocator's books when dropped.

use std::num::NonZeroU64;
use std::rc::Rc;

use crate::memory::heap::segment::Segment;
use crate::memory::heap::{Released, release_gpu, release_host};
use crate::memory::policy::Pool;

thread_local! {
    /// Blocks handed out before this id are distrusted: see [`distrust_blocks_before`].
    static SUSPECT_BELOW: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// After the GPU reports an error, the contents of every block handed out before `id` are
/// distrusted: a rejected command buffer runs none of its work, and which block it would have
/// written is not known. Their arrays read from a host copy if they have one, else fail.
pub(crate) fn distrust_blocks_before(id: u64) {
    SUSPECT_BELOW.with(|below| below.set(below.get().max(id)));
}

/// A live GPU block, shared by the storages and batches that use it.
pub type GpuBuffer = Rc<GpuBlock>;

/// A live range of a GPU buffer (a segment); it goes back to the allocator when dropped.
/// Other blocks may share the buffer: bind it with [`GpuBlock::binding`], copy at
/// [`GpuBlock::offset`].
#[derive(Debug)]
pub struct GpuBlock {
    pub(crate) id: u64,
    pub(crate) segment: Rc<Segment>,
    pub(crate) offset: u64,
    /// Bytes held: the request rounded to its pool's granularity, or more when the rest of
    /// a free range was too small to keep apart.
    pub(crate) size: u64,
    pub(crate) requested: u64,
}

impl GpuBlock {
    /// The buffer the block is carved from.
    pub fn buffer(&self) -> &wgpu::Buffer {
        &self.segment.buffer
    }

    /// Where the block starts in its buffer, in bytes: a multiple of 256, so it may be bound
    /// as a storage buffer.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The block as a binding: its buffer, offset and the request rounded up to 256 bytes,
    /// which covers every element a kernel touches (`vec4` loads included).
    pub fn binding(&self) -> wgpu::BufferBinding<'_> {
        let bytes = self.requested.max(4).next_multiple_of(256).min(self.size);
        wgpu::BufferBinding {
            buffer: &self.segment.buffer,
            offset: self.offset,
            size: NonZeroU64::new(bytes),
        }
    }

    /// The underlying buffer's serial, stable across reuses and never given to another.
    pub fn serial(&self) -> u64 {
        self.segment.serial
    }

    /// The bytes asked for (the block may be bigger).
    pub fn requested(&self) -> u64 {
        self.requested
    }

    /// Makes the allocator destroy the buffer instead of caching it (a readback abandoned
    /// while mapped: its staging buffer is never shared).
    pub fn discard(&self) {
        self.segment.discard();
    }

    /// Whether the block must not be read: the GPU failed to create its buffer, or reported
    /// an error after it was handed out, so work that wrote it may not have run.
    pub fn is_lost(&self) -> bool {
        self.segment.is_lost() || self.is_distrusted()
    }

    fn is_distrusted(&self) -> bool {
        SUSPECT_BELOW.with(|below| self.id < below.get())
    }
}

impl Drop for GpuBlock {
    fn drop(&mut self) {
        // A distrusted block may belong to a lost device, whose buffer ids a new device
        // reuses: its segment serves no more blocks.
        release_gpu(Released {
            id: self.id,
            segment: self.segment.clone(),
            offset: self.offset,
            size: self.size,
            requested: self.requested,
            distrusted: self.is_distrusted(),
        });
    }
}

/// A live host copy: an array's words in wasm (or native) memory, counted as CPU memory.
#[derive(Debug)]
pub struct HostBlock {
    pub(crate) id: u64,
    pub(crate) words: Vec<u32>,
    pub(crate) pool: Pool,
    pub(crate) size: u64,
    /// The bytes asked for: its words' once filled ([`HostBlock::fill`]).
    pub(crate) requested: u64,
}

impl HostBlock {
    /// Gives a block counted before its words existed (`allocator::reserve_host`) its words.
    pub fn fill(&mut self, words: Vec<u32>) {
        debug_assert_eq!(words.len() as u64 * 4, self.requested);
        self.words = words;
    }
}

impl std::ops::Deref for HostBlock {
    type Target = [u32];

    fn deref(&self) -> &[u32] {
        &self.words
    }
}

impl Drop for HostBlock {
    fn drop(&mut self) {
        release_host(self.id, self.pool, self.size, self.requested);
    }
}
