//! The allocator's state: segments and their free space, limits, statistics, the live-block
//! table and the history. One per thread (see `memory`), reached through [`with`].
//!
//! This module keeps the books; `carve` and `cache` hold its methods for carving blocks and
//! for letting idle segments go, and `segment` and `segments` the buffers and their free
//! ranges (every `impl Heap` is in this folder); `allocator` decides what to ask of it, and blocks call
//! [`release_gpu`] and [`release_host`] when they drop. It knows segments, not blocks, so that
//! blocks can return here without a circle of imports.

mod cache;
pub(crate) mod carve;
pub mod segment;
pub mod segments;

use rustc_hash::FxHashMap as HashMap;
use std::cell::RefCell;
use std::rc::Rc;

use crate::error::Error;
use crate::memory::heap::segment::{Segment, Usage};
use crate::memory::heap::segments::Segments;
use crate::memory::history::{Action, History};
use crate::memory::policy::{Policy, Pool};
use crate::memory::stats::{Scope, Stats};
use crate::stream::{Device, Stream};

/// The cache limit when none is set: a page that never sets one still has a bound.
pub const DEFAULT_CACHE_LIMIT: u64 = 1 << 30;

/// Which segments a request may use: its usage, pool and device.
pub(crate) type Class = (Usage, Pool, u32);

/// The stream and op of the node being evaluated.
pub(crate) type Context = (Stream, &'static str);

/// What `memorySnapshot` reports of a block, or of a free range (whose `id` is 0).
#[derive(Debug, Clone, PartialEq)]
pub struct LiveBlock {
    pub id: u64,
    pub device: Device,
    pub usage: Option<Usage>,
    pub size: u64,
    pub requested: u64,
    /// The GPU buffer it is carved from (`None` for host copies) and where in it.
    pub segment: Option<u64>,
    pub offset: u64,
    pub stream: Option<Stream>,
    pub op: &'static str,
    /// Where the page made the array, when the history records stacks.
    pub origin: Option<Rc<str>>,
}

pub(crate) struct Heap {
    pub(crate) policy: Policy,
    pub(crate) segments: Segments<Class, Rc<Segment>>,
    pub(crate) cache_limit: u64,
    pub(crate) memory_limit: Option<u64>,
    pub(crate) stats: Stats,
    pub(crate) live: HashMap<u64, LiveBlock>,
    next_id: u64,
    /// Devices that own segments, each with the number its segments' class names.
    devices: Vec<(wgpu::Device, u32)>,
    next_device: u32,
    /// The most live GPU bytes since the cache was last emptied: the default policy keeps
    /// reserved memory within twice this.
    pub(crate) high_water: u64,
    /// The node being evaluated, for snapshots.
    pub(crate) context: Option<Context>,
    /// Where the page made the node being evaluated.
    pub(crate) origin: Option<Rc<str>>,
    /// Set while the scheduler can still flush and retry, so a failure is not yet an OOM.
    pub(crate) retry_pending: bool,
    /// The last request refused while a retry was pending: the OOM's, if the retry fails.
    pub(crate) refused: Option<(u64, Device, Option<Context>)>,
    /// Whether a GPU buffer was destroyed since the queue last moved.
    pub(crate) destroyed: bool,
    pub(crate) history: History,
}

impl Drop for Heap {
    /// Segments still here at thread exit are leaked rather than dropped: wgpu's own
    /// thread-locals may already be gone. Contexts let go of their segments when they drop
    /// (`release_device`), so this only happens to those of contexts still alive.
    fn drop(&mut self) {
        for (_, entry) in std::mem::take(&mut self.segments).iter() {
            std::mem::forget(entry.handle.clone());
        }
    }
}

thread_local! {
    static HEAP: RefCell<Heap> = RefCell::new(Heap {
        policy: Policy::BestFit,
        segments: Segments::default(),
        cache_limit: DEFAULT_CACHE_LIMIT,
        memory_limit: None,
        stats: Stats::default(),
        live: HashMap::default(),
        next_id: 1,
        devices: Vec::new(),
        next_device: 0,
        high_water: 0,
        context: None,
        origin: None,
        retry_pending: false,
        refused: None,
        destroyed: false,
        history: History::default(),
    });
}

pub(crate) fn with<T>(f: impl FnOnce(&mut Heap) -> T) -> T {
    HEAP.with(|h| f(&mut h.borrow_mut()))
}

/// [`with`], or `None` at thread exit, once the heap is gone.
pub(crate) fn try_with<T>(f: impl FnOnce(&mut Heap) -> T) -> Option<T> {
    HEAP.try_with(|h| f(&mut h.borrow_mut())).ok()
}

/// Returns a dropped GPU block's range to its segment.
pub(crate) fn release_gpu(block: Released) {
    // At thread exit the heap may be gone; the buffer is then freed with the device.
    try_with(|h| h.release_gpu(block));
}

/// Accounts for a dropped host block.
pub(crate) fn release_host(id: u64, pool: Pool, size: u64, requested: u64) {
    try_with(|h| h.release_host(id, pool, size, requested));
}

/// A GPU block on its way back: the range it held and what it was.
pub(crate) struct Released {
    pub(crate) id: u64,
    pub(crate) segment: Rc<Segment>,
    pub(crate) offset: u64,
    pub(crate) size: u64,
    pub(crate) requested: u64,
    /// Its contents are distrusted: the segment serves no more blocks.
    pub(crate) distrusted: bool,
}

impl Heap {
    pub(crate) fn active(&self) -> u64 {
        self.stats.active_bytes.get(Scope::All).current
    }

    pub(crate) fn gpu_live(&self) -> u64 {
        self.stats.allocated_bytes.get(Scope::Gpu).current
    }

    pub(crate) fn gpu_reserved(&self) -> u64 {
        self.stats.reserved_bytes.get(Scope::Gpu).current
    }

    /// Bytes of idle segments: what the cache could release now (MLX's cache memory). Free
    /// ranges of segments that live blocks also use are reserved too, but counted apart, as
    /// PyTorch's inactive split bytes: they can only be released with their segment.
    pub(crate) fn cache_bytes(&self) -> u64 {
        self.segments.idle_bytes()
    }

    /// Whether `size` more active bytes fit under the limit.
    pub(crate) fn fits_limit(&self, size: u64) -> bool {
        self.memory_limit
            .is_none_or(|limit| self.active() + size <= limit)
    }

    /// Whether active plus cached bytes stay within the memory limit.
    pub(crate) fn within_limit_with_cache(&self) -> bool {
        self.memory_limit
            .is_none_or(|limit| self.active() + self.cache_bytes() <= limit)
    }

    pub(crate) fn new_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// The ids blocks are given next are above this.
    pub(crate) fn last_id(&self) -> u64 {
        self.next_id
    }

    /// The number that names `device` in segment classes.
    pub(crate) fn device_number(&mut self, device: &wgpu::Device) -> u32 {
        if let Some((_, n)) = self.devices.iter().find(|(d, _)| d == device) {
            return *n;
        }
        self.next_device += 1;
        self.devices.push((device.clone(), self.next_device));
        self.next_device
    }

    /// Records an event of block or segment `id`, with the stream and op of the node that made
    /// it (or of the node being evaluated, for one that is not live).
    pub(crate) fn note(&mut self, action: Action, id: u64, bytes: u64, device: Device) {
        if !self.history.is_recording() {
            return;
        }
        let (context, origin) = match self.live.get(&id) {
            Some(live) => ((live.stream, live.op), live.origin.clone()),
            None => (
                (
                    self.context.map(|(s, _)| s),
                    self.context.map_or("data", |(_, op)| op),
                ),
                self.origin.clone(),
            ),
        };
        self.history
            .record(action, (id, bytes, device), context, origin);
    }

    /// Records a new live block for the snapshot.
    pub(crate) fn add_live(&mut self, block: LiveBlock) {
        self.live.insert(block.id, block);
    }

    pub(crate) fn live_block(
        &self,
        id: u64,
        device: Device,
        size: u64,
        requested: u64,
    ) -> LiveBlock {
        LiveBlock {
            id,
            device,
            usage: None,
            size,
            requested,
            segment: None,
            offset: 0,
            stream: self.context.map(|(s, _)| s),
            op: self.context.map_or("data", |(_, op)| op),
            origin: self.origin.clone(),
        }
    }

    fn release_host(&mut self, id: u64, pool: Pool, size: u64, requested: u64) {
        self.note(Action::FreeCompleted, id, size, Device::Cpu);
        self.note(Action::SegmentFree, id, size, Device::Cpu);
        self.live.remove(&id);
        self.stats.deactivate(Device::Cpu, pool, size, requested);
        self.stats.segment_free(Device::Cpu, pool, size);
    }

    /// Forgets `device`'s number: a new device gets a new one.
    pub(crate) fn forget_device(&mut self, device: &wgpu::Device) {
        self.devices.retain(|(d, _)| d != device);
    }

    /// The free ranges, each with its state: `cached` for idle segments, least recently used
    /// first, then `inactive` for the free ranges of segments in use, by segment and offset.
    pub(crate) fn free_ranges(&self) -> Vec<(LiveBlock, &'static str)> {
        let idle: Vec<u64> = self.segments.idle().collect();
        let mut busy: Vec<u64> = self
            .segments
            .iter()
            .filter(|(_, e)| !e.is_idle())
            .map(|(serial, _)| serial)
            .collect();
        busy.sort_unstable();
        idle.into_iter()
            .chain(busy)
            .filter_map(|serial| self.segments.get(serial).map(|e| (serial, e)))
            .flat_map(|(serial, entry)| {
                let segment = entry.handle.clone();
                let state = if entry.is_idle() {
                    "cached"
                } else {
                    "inactive"
                };
                entry.free_ranges().map(move |(offset, len)| {
                    let block = LiveBlock {
                        id: 0,
                        device: Device::Gpu,
                        usage: Some(segment.usage),
                        size: len,
                        requested: 0,
                        segment: Some(serial),
                        offset,
                        stream: None,
                        op: "",
                        origin: None,
                    };
                    (block, state)
                })
            })
            .collect()
    }
}

impl Heap {
    /// The `MemoryLimitError` for a request of `size` bytes on `device` that the limit refuses;
    /// while a retry is pending it is noted as the request a failed retry reports.
    pub(crate) fn limit_error(&mut self, what: &str, size: u64, device: Device) -> Error {
        if self.retry_pending {
            self.refused = Some((size, device, self.context));
        } else {
            self.stats.num_ooms += 1;
            self.note(Action::Oom, 0, size, device);
        }
        Error::MemoryLimit(format!(
            "{what}: {size} more bytes would exceed the memory limit: active {} bytes, cache {} bytes, limit {} bytes",
            self.active(),
            self.cache_bytes(),
            self.memory_limit.unwrap_or(u64::MAX)
        ))
    }
}
