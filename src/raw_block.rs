//! Raw blocks (PyTorch's `caching_allocator_alloc` and `caching_allocator_delete`): storage
//! taken from the allocator's cache without an array, counted in every statistic like an
//! array's, and returned to the cache when dropped.

use crate::error::{Error, Result};
use crate::gpu::device::buffers::create_storage;
use crate::memory::allocator::{self, GpuBuffer, HostBlock, host_block};
use crate::memory::policy::rounded;
use crate::runtime::Runtime;
use crate::stream::{Device, Stream};

/// The op name the allocator's history and snapshots give a raw block.
const OP: &str = "cachingAllocatorAlloc";

/// Where a raw block's bytes are.
#[derive(Debug)]
enum Memory {
    Gpu(GpuBuffer),
    Host(HostBlock),
}

/// Storage of at least `bytes` bytes on one device, from the cache when one fits. Its contents
/// are whatever the buffer last held (as in PyTorch). Dropping it frees it.
#[derive(Debug)]
pub struct RawBlock {
    bytes: u64,
    stream: Stream,
    memory: Memory,
}

impl RawBlock {
    /// The bytes asked for.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The bytes held: the request rounded to its pool's granularity, or more when the rest
    /// of a free range was too small to keep apart.
    pub fn size(&self) -> u64 {
        match &self.memory {
            Memory::Gpu(buffer) => buffer.size,
            Memory::Host(block) => block.size,
        }
    }

    /// The allocator's id of the block, as its history and snapshots name it.
    pub fn id(&self) -> u64 {
        match &self.memory {
            Memory::Gpu(buffer) => buffer.id,
            Memory::Host(block) => block.id,
        }
    }

    pub fn stream(&self) -> Stream {
        self.stream
    }

    /// Where its memory is: the stream's device, or the CPU for a gpu stream without a GPU.
    pub fn device(&self) -> Device {
        match self.memory {
            Memory::Gpu(_) => Device::Gpu,
            Memory::Host(_) => Device::Cpu,
        }
    }

    /// The GPU buffer the block is carved from, for a block on the GPU. Usable as storage,
    /// copy source and copy destination, on the runtime's device, until the block is dropped;
    /// other blocks may share it, so only the block's own range ([`RawBlock::offset`],
    /// [`RawBlock::size`]) is the owner's.
    pub fn gpu_buffer(&self) -> Option<&wgpu::Buffer> {
        match &self.memory {
            Memory::Gpu(buffer) => Some(buffer.buffer()),
            Memory::Host(_) => None,
        }
    }

    /// Where the block starts in its GPU buffer, in bytes (a multiple of 256); 0 on the host.
    pub fn offset(&self) -> u64 {
        match &self.memory {
            Memory::Gpu(buffer) => buffer.offset(),
            Memory::Host(_) => 0,
        }
    }
}

impl Drop for RawBlock {
    /// The owner lets go: the history records the request, and the memory is freed as the
    /// fields drop.
    fn drop(&mut self) {
        allocator::note_free_request(self.id(), self.size(), self.device());
    }
}

impl Runtime {
    /// A raw block of at least `bytes` bytes on `stream`'s device, within the memory limit
    /// (trimming the cache and dropping re-derivable copies first, as arrays do).
    pub fn raw_block(&self, bytes: u64, stream: Stream) -> Result<RawBlock> {
        let memory = allocator::in_context(stream, OP, || match (stream.device, self.gpu()) {
            (Device::Gpu, Some(gpu)) => {
                let words = usize::try_from(bytes.div_ceil(4)).map_err(|_| too_big(bytes))?;
                create_storage(gpu, words).map(Memory::Gpu)
            }
            // Without WebGPU the gpu device runs on the CPU, and so do its blocks.
            _ => host_memory(bytes).map(Memory::Host),
        })?;
        self.release_destroyed();
        Ok(RawBlock {
            bytes,
            stream,
            memory,
        })
    }
}

fn host_memory(bytes: u64) -> Result<HostBlock> {
    let words = usize::try_from(bytes.div_ceil(4)).map_err(|_| too_big(bytes))?;
    // Checked before the words exist: wasm memory, once grown, never shrinks.
    allocator::ensure_room(OP, rounded(bytes), Device::Cpu)?;
    let mut storage = Vec::new();
    storage
        .try_reserve_exact(words)
        .map_err(|_| too_big(bytes))?;
    storage.resize(words, 0);
    host_block(storage)
}

fn too_big(bytes: u64) -> Error {
    Error::MemoryLimit(format!(
        "{OP}: {bytes} bytes cannot be allocated in this address space"
    ))
}
