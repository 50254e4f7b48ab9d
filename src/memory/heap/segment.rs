//! A segment: one GPU buffer that the allocator carves blocks from, shared by those blocks.

use std::cell::Cell;

use crate::memory::policy::Pool;

/// What a GPU buffer is for; blocks are only carved from a segment of the same usage.
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

    /// Whether several blocks may share one buffer. Only storage: a mapped buffer cannot be
    /// used by a submit, so a readback's staging buffer serves one block at a time, and the
    /// runtime's uniform and query buffers are its own.
    pub(crate) fn splits(self) -> bool {
        self == Usage::Storage
    }
}

/// One GPU buffer and what is known of it. The allocator and every block carved from it hold
/// it; the buffer is destroyed when the allocator lets the segment go, never while a block
/// lives. Blocks are carved from it before the GPU confirms that it created the buffer: no
/// work is submitted until it does (`device_errors`), and if it could not, every block of it
/// is lost together.
#[derive(Debug)]
pub struct Segment {
    /// Names the buffer for as long as it exists; never reused, so it keys caches of bind
    /// groups.
    pub(crate) serial: u64,
    pub(crate) buffer: wgpu::Buffer,
    pub(crate) device: wgpu::Device,
    pub(crate) usage: Usage,
    pub(crate) pool: Pool,
    pub(crate) size: u64,
    /// Set when the GPU reported that it could not create the buffer.
    lost: Cell<bool>,
    /// Set when the buffer must not be reused (a readback abandoned while mapped).
    discard: Cell<bool>,
}

impl Segment {
    pub(crate) fn new(
        serial: u64,
        buffer: wgpu::Buffer,
        device: wgpu::Device,
        usage: Usage,
        pool: Pool,
        size: u64,
    ) -> Segment {
        Segment {
            serial,
            buffer,
            device,
            usage,
            pool,
            size,
            lost: Cell::new(false),
            discard: Cell::new(false),
        }
    }

    /// The GPU reported that it could not create the buffer: no block of it may be used.
    pub(crate) fn mark_lost(&self) {
        self.lost.set(true);
    }

    pub(crate) fn is_lost(&self) -> bool {
        self.lost.get()
    }

    pub(crate) fn discard(&self) {
        self.discard.set(true);
    }

    /// Whether the buffer may serve no more blocks: lost, or to be discarded.
    pub(crate) fn is_spent(&self) -> bool {
        self.lost.get() || self.discard.get()
    }
}
