//! The blocks the allocator hands out: GPU buffers and host copies. Each returns to the
//! allocator when dropped.

use std::rc::Rc;

use crate::memory::allocator::{release_gpu, release_host};
use crate::memory::policy::Pool;
use crate::stream::{Device, Stream};

/// What a GPU buffer is for; the cache only reuses a buffer for the same purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Usage {
    Storage,
    Readback,
    Uniform,
    QueryResolve,
}

impl Usage {
    pub(crate) fn wgpu(self) -> wgpu::BufferUsages {
        use wgpu::BufferUsages as U;
        match self {
            Usage::Storage => U::STORAGE | U::COPY_SRC | U::COPY_DST,
            Usage::Readback => U::MAP_READ | U::COPY_DST,
            Usage::Uniform => U::UNIFORM | U::COPY_DST,
            Usage::QueryResolve => U::QUERY_RESOLVE | U::COPY_SRC,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Usage::Storage => "storage",
            Usage::Readback => "readback",
            Usage::Uniform => "uniform",
            Usage::QueryResolve => "query-resolve",
        }
    }
}

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

/// A live GPU buffer, shared by the storages and batches that use it.
pub type GpuBuffer = Rc<GpuBlock>;

/// A live GPU buffer; it goes back to the allocator when dropped.
#[derive(Debug)]
pub struct GpuBlock {
    pub(crate) id: u64,
    /// Names the underlying buffer for as long as it exists, across reuses from the cache
    /// (which give the block a new `id`); never reused, so it can key caches of bind groups.
    pub(crate) serial: u64,
    pub(crate) buffer: wgpu::Buffer,
    pub(crate) device: wgpu::Device,
    pub(crate) usage: Usage,
    pub(crate) pool: Pool,
    pub(crate) size: u64,
    pub(crate) requested: u64,
    /// Set when the buffer must not be reused (a readback abandoned while mapped).
    pub(crate) discard: std::cell::Cell<bool>,
    /// Set when the GPU reported that it could not create the buffer.
    pub(crate) lost: std::cell::Cell<bool>,
    /// Set while the GPU has yet to report whether it created the buffer. A buffer dropped
    /// in that state is cached but not handed out until its report confirms it.
    pub(crate) unconfirmed: std::cell::Cell<bool>,
}

impl GpuBlock {
    pub fn buffer(&self) -> &wgpu::Buffer {
        &self.buffer
    }

    /// The underlying buffer's serial, stable across reuses and never given to another.
    pub fn serial(&self) -> u64 {
        self.serial
    }

    /// The bytes asked for (the buffer may be bigger).
    pub fn requested(&self) -> u64 {
        self.requested
    }

    /// Makes the allocator destroy the buffer instead of caching it.
    pub fn discard(&self) {
        self.discard.set(true);
    }

    /// Marks the buffer as one the GPU failed to create: it must not be used or reused.
    pub fn mark_lost(&self) {
        self.lost.set(true);
        self.discard.set(true);
    }

    /// Whether the buffer must not be read: the GPU failed to create it, or reported an error
    /// after it was handed out, so work that wrote it may not have run.
    pub fn is_lost(&self) -> bool {
        self.lost.get() || SUSPECT_BELOW.with(|below| self.id < below.get())
    }

    /// Marks the buffer as one the GPU reported it created.
    pub fn confirm(&self) {
        self.unconfirmed.set(false);
    }
}

impl Drop for GpuBlock {
    fn drop(&mut self) {
        let cached = Cached {
            device: self.device.clone(),
            usage: self.usage,
            pool: self.pool,
            size: self.size,
            requested: self.requested,
            buffer: self.buffer.clone(),
            id: self.id,
            serial: self.serial,
            unconfirmed: self.unconfirmed.get(),
        };
        // A distrusted block may belong to a lost device, whose buffer ids a new device
        // reuses: it is destroyed, never cached.
        let discard = self.discard.get() || self.is_lost();
        release_gpu(cached, discard);
    }
}

/// A live host copy: an array's words in wasm (or native) memory, counted as CPU memory.
#[derive(Debug)]
pub struct HostBlock {
    pub(crate) id: u64,
    pub(crate) words: Vec<u32>,
    pub(crate) pool: Pool,
    pub(crate) size: u64,
}

impl std::ops::Deref for HostBlock {
    type Target = [u32];

    fn deref(&self) -> &[u32] {
        &self.words
    }
}

impl Drop for HostBlock {
    fn drop(&mut self) {
        release_host(self.id, self.pool, self.size, self.words.len() as u64 * 4);
    }
}

/// A freed GPU buffer kept for reuse.
#[derive(Debug)]
pub(crate) struct Cached {
    pub(crate) device: wgpu::Device,
    pub(crate) usage: Usage,
    pub(crate) pool: Pool,
    pub(crate) size: u64,
    pub(crate) requested: u64,
    pub(crate) buffer: wgpu::Buffer,
    pub(crate) id: u64,
    pub(crate) serial: u64,
    /// Freed before the GPU reported its creation: kept, but not handed out, until the
    /// report confirms it (see `device_errors::verify`).
    pub(crate) unconfirmed: bool,
}

/// What `memorySnapshot` reports of a live block.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveBlock {
    pub id: u64,
    pub device: Device,
    pub usage: Option<Usage>,
    pub size: u64,
    pub requested: u64,
    pub stream: Option<Stream>,
    pub op: &'static str,
    /// Where the page made the array, when the history records stacks.
    pub origin: Option<std::rc::Rc<str>>,
}

/// One record of [`snapshot`].
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotEntry {
    pub block: LiveBlock,
    /// `"active"` or `"cached"`.
    pub state: &'static str,
}
