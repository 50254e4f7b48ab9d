//! The allocator: every buffer the runtime holds comes from here and returns here.
//!
//! - GPU buffers (array storage, readback staging, uniforms, timestamp resolves) are rounded
//!   to their pool's granularity and, when freed, kept in a least-recently-used cache for reuse
//!   under the [`Policy`]. The cache is bounded by the cache limit.
//! - Host (wasm) copies are counted the same way but not cached: wasm's own allocator already
//!   reuses freed memory at no cost, and a cache would only hide memory from it.
//! - A GPU buffer that unsubmitted work still references is not freed until that work is
//!   submitted: the command batch holds it (see `CommandBatch`), so no later upload or
//!   dispatch can reuse it too early.
//! - The memory limit bounds active bytes (live copies on both devices). A request past it
//!   first trims the cache and drops copies that the other device can re-derive; the scheduler
//!   then flushes and waits for in-flight work and retries once; only then does the request
//!   fail with `MemoryLimitError`. Cached buffers do not count as active, but the cache is
//!   trimmed so that active plus cached bytes stay within the limit as well.

use rustc_hash::FxHashMap as HashMap;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::error::{Error, Result};
use crate::memory::block::Cached;
pub use crate::memory::block::{GpuBlock, GpuBuffer, HostBlock, LiveBlock, SnapshotEntry, Usage};
use crate::memory::device_errors::create_watched;
use crate::memory::history::{Action, Event, History, Recording};
use crate::memory::policy::{Policy, Pool, rounded};
use crate::memory::stats::{Scope, Stats};
use crate::stream::{Device, Stream};

/// The cache limit when none is set: a page that never sets one still has a bound.
pub const DEFAULT_CACHE_LIMIT: u64 = 1 << 30;

struct Allocator {
    policy: Policy,
    /// Oldest first.
    cache: Vec<Cached>,
    cache_bytes: u64,
    cache_limit: u64,
    memory_limit: Option<u64>,
    stats: Stats,
    live: HashMap<u64, LiveBlock>,
    next_id: u64,
    /// The node being evaluated, for snapshots.
    context: Option<Context>,
    /// Where the page made the node being evaluated (see [`with_origin`]).
    origin: Option<Rc<str>>,
    /// Set while the scheduler can still flush and retry, so a failure is not yet an OOM.
    retry_pending: bool,
    /// The last request refused while a retry was pending: the OOM's, if the retry fails.
    refused: Option<(u64, Device, Option<Context>)>,
    /// Whether a GPU buffer was destroyed since the queue last moved: see
    /// [`take_destroyed`].
    destroyed: bool,
    history: History,
}

/// The stream and op of the node being evaluated.
type Context = (Stream, &'static str);

/// Returns a dropped GPU block to the cache, or destroys it.
pub(crate) fn release_gpu(block: Cached, discard: bool) {
    // At thread exit the allocator may be gone; the buffer is then freed with the device.
    let _ = ALLOCATOR.try_with(|a| a.borrow_mut().release_gpu(block, discard));
}

/// Accounts for a dropped host block.
pub(crate) fn release_host(id: u64, pool: Pool, size: u64, requested: u64) {
    let _ = ALLOCATOR.try_with(|a| a.borrow_mut().release_host(id, pool, size, requested));
}

impl Drop for Allocator {
    /// Cached buffers still here at thread exit are leaked rather than dropped: wgpu's own
    /// thread-locals may already be gone. Contexts empty their share of the cache when they
    /// drop ([`release_device`]), so this only happens to buffers of contexts still alive.
    fn drop(&mut self) {
        for cached in self.cache.drain(..) {
            std::mem::forget(cached);
        }
    }
}

thread_local! {
    static ALLOCATOR: RefCell<Allocator> = RefCell::new(Allocator {
        policy: Policy::BEST_FIT,
        cache: Vec::new(),
        cache_bytes: 0,
        cache_limit: DEFAULT_CACHE_LIMIT,
        memory_limit: None,
        stats: Stats::default(),
        live: HashMap::default(),
        next_id: 1,
        context: None,
        origin: None,
        retry_pending: false,
        refused: None,
        destroyed: false,
        history: History::default(),
    });
}

fn with<T>(f: impl FnOnce(&mut Allocator) -> T) -> T {
    ALLOCATOR.with(|a| f(&mut a.borrow_mut()))
}

impl Allocator {
    fn active(&self) -> u64 {
        self.stats.active_bytes.get(Scope::All).current
    }

    /// Whether `size` more active bytes fit under the limit.
    fn fits_limit(&self, size: u64) -> bool {
        self.memory_limit
            .is_none_or(|limit| self.active() + size <= limit)
    }

    fn new_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Records an event of block `id`, with the stream and op of the node that made it
    /// (or of the node being evaluated, for a block that is not live).
    fn note(&mut self, action: Action, id: u64, bytes: u64, device: Device) {
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

    fn live_block(
        &self,
        id: u64,
        device: Device,
        usage: Option<Usage>,
        size: u64,
        requested: u64,
    ) -> LiveBlock {
        LiveBlock {
            id,
            device,
            usage,
            size,
            requested,
            stream: self.context.map(|(s, _)| s),
            op: self.context.map_or("data", |(_, op)| op),
            origin: self.origin.clone(),
        }
    }

    /// The best cached buffer for a request, taken out of the cache.
    fn take_cached(
        &mut self,
        device: &wgpu::Device,
        usage: Usage,
        pool: Pool,
        size: u64,
    ) -> Option<Cached> {
        let policy = self.policy;
        let index = self
            .cache
            .iter()
            .enumerate()
            .filter(|(_, c)| {
                !c.unconfirmed
                    && c.usage == usage
                    && c.pool == pool
                    && &c.device == device
                    && policy.fits(c.size, size, pool)
                    && self.fits_limit(c.size)
            })
            // Of equal sizes, the most recently freed; see `State::submit` for why.
            .min_by_key(|&(i, c)| (c.size, std::cmp::Reverse(i)))
            .map(|(i, _)| i)?;
        let cached = self.cache.remove(index);
        self.cache_bytes -= cached.size;
        Some(cached)
    }

    /// Destroys the oldest cached buffers until `keep` holds.
    fn evict_while(&mut self, keep: impl Fn(&Allocator) -> bool) -> u64 {
        let mut freed = 0;
        while !self.cache.is_empty() && !keep(self) {
            let oldest = self.cache.remove(0);
            self.cache_bytes -= oldest.size;
            freed += oldest.size;
            self.note(Action::SegmentFree, oldest.id, oldest.size, Device::Gpu);
            self.stats
                .segment_free(Device::Gpu, oldest.pool, oldest.size);
            destroy_buffer(&mut self.destroyed, &oldest.buffer);
        }
        freed
    }

    fn release_gpu(&mut self, block: Cached, discard: bool) {
        self.note(Action::FreeCompleted, block.id, block.size, Device::Gpu);
        self.live.remove(&block.id);
        self.stats
            .deactivate(Device::Gpu, block.pool, block.size, block.requested);
        let cacheable = !discard && self.policy.caches() && block.usage != Usage::Uniform;
        if !cacheable || block.size > self.cache_limit {
            self.note(Action::SegmentFree, block.id, block.size, Device::Gpu);
            self.stats.segment_free(Device::Gpu, block.pool, block.size);
            destroy_buffer(&mut self.destroyed, &block.buffer);
            return;
        }
        self.cache_bytes += block.size;
        self.cache.push(block);
        self.evict_while(|a| a.cache_bytes <= a.cache_limit && a.within_limit_with_cache());
    }

    /// Whether active plus cached bytes stay within the memory limit.
    fn within_limit_with_cache(&self) -> bool {
        self.memory_limit
            .is_none_or(|limit| self.active() + self.cache_bytes <= limit)
    }

    fn release_host(&mut self, id: u64, pool: Pool, size: u64, requested: u64) {
        self.note(Action::FreeCompleted, id, size, Device::Cpu);
        self.note(Action::SegmentFree, id, size, Device::Cpu);
        self.live.remove(&id);
        self.stats.deactivate(Device::Cpu, pool, size, requested);
        self.stats.segment_free(Device::Cpu, pool, size);
    }

    fn limit_error(&mut self, what: &str, size: u64, device: Device) -> Error {
        if self.retry_pending {
            self.refused = Some((size, device, self.context));
        } else {
            self.stats.num_ooms += 1;
            self.note(Action::Oom, 0, size, device);
        }
        Error::MemoryLimit(format!(
            "{what}: {size} more bytes would exceed the memory limit: active {} bytes, cache {} bytes, limit {} bytes",
            self.active(),
            self.cache_bytes,
            self.memory_limit.unwrap_or(u64::MAX)
        ))
    }
}

/// Makes room for `size` active bytes: trims the cache, then drops copies that the other
/// device can re-derive. Fails if the limit still does not allow it.
pub(crate) fn ensure_room(what: &str, size: u64, device: Device) -> Result<()> {
    if with(|a| a.fits_limit(size)) {
        return Ok(());
    }
    with(|a| a.evict_while(|_| false));
    // Dropping copies returns their blocks here, so the allocator must not be borrowed.
    if let Some(reclaim) = RECLAIM.with(Cell::get) {
        reclaim();
    }
    with(|a| {
        if a.fits_limit(size) {
            Ok(())
        } else {
            Err(a.limit_error(what, size, device))
        }
    })
}

thread_local! {
    /// Lets go of copies that can be re-derived; set by the scheduler, which owns storages.
    static RECLAIM: Cell<Option<fn() -> usize>> = const { Cell::new(None) };
}

/// Sets what a request past the limit calls, after trimming the cache, to free memory that
/// can be re-derived (the scheduler drops GPU copies that have a host copy).
pub fn set_reclaim(reclaim: fn() -> usize) {
    RECLAIM.with(|r| r.set(Some(reclaim)));
}

/// A GPU buffer of at least `requested` bytes for `usage`, from the cache when one fits.
pub fn alloc_gpu(
    device: &wgpu::Device,
    max_buffer_size: u64,
    usage: Usage,
    requested: u64,
) -> Result<GpuBuffer> {
    let pool = Pool::of(requested);
    let size = rounded(requested);
    if size > max_buffer_size {
        with(|a| a.stats.num_ooms += 1);
        return Err(Error::MemoryLimit(format!(
            "a GPU buffer of {requested} bytes exceeds the adapter's maxBufferSize of {max_buffer_size} bytes"
        )));
    }
    ensure_room("allocating GPU memory", size, Device::Gpu)?;
    with(|a| {
        let cached = a.take_cached(device, usage, pool, size);
        let (buffer, size, serial, watch) = match cached {
            Some(cached) => {
                a.stats.num_cache_hits += 1;
                (cached.buffer, cached.size, cached.serial, None)
            }
            None => {
                a.stats.num_cache_misses += 1;
                a.evict_while(|a| {
                    a.memory_limit
                        .is_none_or(|l| a.active() + a.cache_bytes + size <= l)
                });
                let (buffer, watch) = create_watched(
                    device,
                    &wgpu::BufferDescriptor {
                        label: Some(usage.name()),
                        size,
                        usage: usage.wgpu(),
                        mapped_at_creation: false,
                    },
                );
                a.stats.segment_alloc(Device::Gpu, pool, size);
                (buffer, size, a.new_id(), Some(watch))
            }
        };
        a.stats.activate(Device::Gpu, pool, size, requested);
        let id = a.new_id();
        let live = a.live_block(id, Device::Gpu, Some(usage), size, requested);
        a.live.insert(id, live);
        let fresh = watch.is_some();
        a.note(
            if fresh {
                Action::SegmentAlloc
            } else {
                Action::CacheHit
            },
            id,
            size,
            Device::Gpu,
        );
        a.note(Action::Alloc, id, size, Device::Gpu);
        let block = Rc::new(GpuBlock {
            id,
            serial,
            buffer,
            device: device.clone(),
            usage,
            pool,
            size,
            requested,
            discard: std::cell::Cell::new(false),
            lost: std::cell::Cell::new(false),
            unconfirmed: std::cell::Cell::new(watch.is_some()),
        });
        if let Some(watch) = watch {
            watch(&block);
        }
        Ok(block)
    })
}

/// Counts `words` as a live host copy, within the memory limit.
pub fn host_block(words: Vec<u32>) -> Result<HostBlock> {
    let requested = words.len() as u64 * 4;
    let pool = Pool::of(requested);
    let size = rounded(requested);
    ensure_room("allocating host memory", size, Device::Cpu)?;
    Ok(with(|a| {
        a.stats.segment_alloc(Device::Cpu, pool, size);
        a.stats.activate(Device::Cpu, pool, size, requested);
        let id = a.new_id();
        let live = a.live_block(id, Device::Cpu, None, size, requested);
        a.live.insert(id, live);
        a.note(Action::SegmentAlloc, id, size, Device::Cpu);
        a.note(Action::Alloc, id, size, Device::Cpu);
        HostBlock {
            id,
            words,
            pool,
            size,
        }
    }))
}

/// Records `bytes` copied to `to` from the other device.
pub fn record_transfer(to: Device, bytes: u64) {
    with(|a| a.stats.transfer(to, bytes));
}

/// The statistics now.
pub fn stats() -> Stats {
    with(|a| a.stats)
}

/// Bytes of freed buffers kept for reuse.
pub fn cache_bytes() -> u64 {
    with(|a| a.cache_bytes)
}

/// Sets the memory limit (`None` removes it) and returns the previous one.
pub fn set_memory_limit(limit: Option<u64>) -> Option<u64> {
    with(|a| {
        let previous = std::mem::replace(&mut a.memory_limit, limit);
        a.evict_while(|a| a.within_limit_with_cache());
        previous
    })
}

pub fn memory_limit() -> Option<u64> {
    with(|a| a.memory_limit)
}

/// Sets the cache limit and returns the previous one; `0` disables caching.
pub fn set_cache_limit(limit: u64) -> u64 {
    with(|a| {
        let previous = std::mem::replace(&mut a.cache_limit, limit);
        a.evict_while(|a| a.cache_bytes <= a.cache_limit);
        previous
    })
}

pub fn cache_limit() -> u64 {
    with(|a| a.cache_limit)
}

/// The GPU reported on a buffer that was freed before the report came: a created one may now
/// be handed out from the cache; one it could not create is destroyed.
pub(crate) fn settle_unconfirmed(serial: u64, created: bool) {
    with(|a| {
        let Some(index) = a
            .cache
            .iter()
            .position(|c| c.serial == serial && c.unconfirmed)
        else {
            return;
        };
        if created {
            a.cache[index].unconfirmed = false;
            return;
        }
        let cached = a.cache.remove(index);
        a.cache_bytes -= cached.size;
        a.note(Action::SegmentFree, cached.id, cached.size, Device::Gpu);
        a.stats.segment_free(Device::Gpu, cached.pool, cached.size);
        destroy_buffer(&mut a.destroyed, &cached.buffer);
    });
}

/// Destroys `buffer`, noting that the queue must move for its memory to be released.
fn destroy_buffer(destroyed: &mut bool, buffer: &wgpu::Buffer) {
    buffer.destroy();
    *destroyed = true;
}

/// Whether a GPU buffer was destroyed since the last call. The browser's WebGPU frees a
/// destroyed buffer's memory only once the queue moves past it; without a submit, a page
/// that only allocates and frees (raw blocks, cache trims) grows the GPU process without
/// bound (measured: 12 GB, then the device was lost). Whoever holds the queue submits an
/// empty batch when this is true.
pub fn take_destroyed() -> bool {
    with(|a| std::mem::take(&mut a.destroyed))
}

/// Destroys the cached buffers of `device`, which is going away.
pub fn release_device(device: &wgpu::Device) {
    with(|a| {
        let (gone, kept): (Vec<Cached>, Vec<Cached>) = std::mem::take(&mut a.cache)
            .into_iter()
            .partition(|c| &c.device == device);
        a.cache = kept;
        for cached in gone {
            a.cache_bytes -= cached.size;
            a.stats.segment_free(Device::Gpu, cached.pool, cached.size);
            destroy_buffer(&mut a.destroyed, &cached.buffer);
        }
    });
}

/// Destroys every cached buffer and returns the bytes freed.
pub fn clear_cache() -> u64 {
    with(|a| a.evict_while(|_| false))
}

/// Changes the reuse policy. Allowed only while nothing is allocated, as PyTorch requires
/// (the runtime's own uniform buffers aside).
pub fn set_policy(policy: Policy) -> Result<()> {
    with(|a| {
        // The runtime's own uniform buffers live as long as it does and are never cached,
        // so no policy applies to them: only the blocks of arrays and raw blocks count.
        let live = a
            .live
            .values()
            .filter(|b| b.usage != Some(Usage::Uniform))
            .count();
        if live > 0 && a.policy != policy {
            return Err(Error::Value(format!(
                "changeCurrentAllocator: {live} blocks are allocated; the policy can only change while no array or raw block holds memory"
            )));
        }
        a.evict_while(|_| false);
        a.policy = policy;
        Ok(())
    })
}

pub fn policy() -> Policy {
    with(|a| a.policy)
}

/// The GPU reported an error: the contents of every GPU block handed out so far are
/// distrusted (see `block::distrust_blocks_before`).
pub fn distrust_gpu_blocks() {
    let next = with(|a| a.next_id + 1);
    crate::memory::block::distrust_blocks_before(next);
}

/// Every peak becomes its current value.
pub fn reset_peak_stats() {
    with(|a| a.stats.reset_peaks());
}

/// Starts recording the history (clearing what was kept), or stops it with `None`.
pub fn record_history(recording: Option<Recording>) {
    with(|a| a.history.set(recording));
}

/// The events recorded, oldest first.
pub fn history() -> Vec<Event> {
    with(|a| a.history.events())
}

/// An owner let go of block `id` (an array's copy); the block is freed once nothing else, such
/// as unsubmitted work, holds it.
pub(crate) fn note_free_request(id: u64, bytes: u64, device: Device) {
    let _ = ALLOCATOR.try_with(|a| {
        a.borrow_mut()
            .note(Action::FreeRequested, id, bytes, device)
    });
}

/// Which byte count a PyTorch-style `reset_max_memory_*` call resets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BytePeak {
    Allocated,
    Reserved,
}

/// The peak of one byte count, for one device or (without one) in every scope, becomes its
/// current value; every other peak stays.
pub fn reset_byte_peak(which: BytePeak, device: Option<Device>) {
    with(|a| {
        let metric = match which {
            BytePeak::Allocated => &mut a.stats.allocated_bytes,
            BytePeak::Reserved => &mut a.stats.reserved_bytes,
        };
        metric.reset_peak(device.map(Scope::device));
    });
}

/// Totals and event counters restart from zero.
pub fn reset_accumulated_stats() {
    with(|a| a.stats.reset_accumulated());
}

/// Runs `f` with the node `(stream, op)` recorded as the owner of what it allocates.
pub fn in_context<T>(stream: Stream, op: &'static str, f: impl FnOnce() -> T) -> T {
    let previous = with(|a| a.context.replace((stream, op)));
    let result = f();
    with(|a| a.context = previous);
    result
}

/// Runs `f` with `origin` (where the page made the node being evaluated) given to the blocks
/// it allocates, for the history's stacks.
pub fn with_origin<T>(origin: Option<Rc<str>>, f: impl FnOnce() -> T) -> T {
    let previous = with(|a| std::mem::replace(&mut a.origin, origin));
    let result = f();
    with(|a| a.origin = previous);
    result
}

/// Whether the history records stacks: the JS layer then notes where each array is made.
pub fn history_wants_stacks() -> bool {
    with(|a| a.history.wants_stacks())
}

/// Runs `f` as an attempt that the scheduler may retry after flushing, so a limit failure
/// inside it is not yet counted as an OOM.
pub fn as_retryable<T>(f: impl FnOnce() -> T) -> T {
    let previous = with(|a| std::mem::replace(&mut a.retry_pending, true));
    let result = f();
    with(|a| a.retry_pending = previous);
    result
}

/// Counts a retry after flushing and waiting.
pub fn record_retry() {
    with(|a| a.stats.num_alloc_retries += 1);
}

/// Counts an allocation that failed for good after a retry.
pub fn record_oom() {
    with(|a| {
        a.stats.num_ooms += 1;
        let (size, device, context) = a.refused.take().unwrap_or((0, Device::Gpu, None));
        // Recorded as the refused request's, which ran in its node's context.
        let current = std::mem::replace(&mut a.context, context);
        a.note(Action::Oom, 0, size, device);
        a.context = current;
    });
}

/// Counts a wait for every stream (`synchronize()` with no stream).
pub fn record_sync_all_streams() {
    with(|a| a.stats.num_sync_all_streams += 1);
}

/// One record per live and cached block, live ones first, each in allocation order.
pub fn snapshot() -> Vec<SnapshotEntry> {
    with(|a| {
        let mut live: Vec<_> = a.live.values().cloned().collect();
        live.sort_by_key(|b| b.id);
        let active = live.into_iter().map(|block| SnapshotEntry {
            block,
            state: "active",
        });
        let cached = a.cache.iter().map(|c| SnapshotEntry {
            block: LiveBlock {
                id: c.id,
                device: Device::Gpu,
                usage: Some(c.usage),
                size: c.size,
                requested: c.requested,
                stream: None,
                op: "",
                origin: None,
            },
            state: "cached",
        });
        active.chain(cached).collect()
    })
}
