//! The allocator: every buffer the runtime holds comes from here and returns here.
//!
//! - GPU storage is carved out of larger buffers (segments) under the default policy: a
//!   request takes the smallest free range that holds it, and freed ranges merge with their
//!   free neighbours (PyTorch's caching allocator; see `Policy::BestFit`). Other GPU buffers
//!   (readback staging, uniforms, timestamp resolves) are whole segments. Idle segments are
//!   kept for reuse (the cache), least recently used first out, within the cache limit and,
//!   by default, within twice the peak of live GPU bytes. Free ranges of a segment that live
//!   blocks also use are reserved but not cached: PyTorch's inactive split memory, released
//!   with the segment once its last block goes.
//! - Host (wasm) copies are counted the same way but not cached: wasm's own allocator already
//!   reuses freed memory at no cost, and a cache would only hide memory from it.
//! - A GPU block that unsubmitted work still references is not freed until that work is
//!   submitted: the command batch holds it (see `CommandBatch`), so no later upload or
//!   dispatch can reuse its range too early.
//! - The memory limit bounds active bytes (live copies on both devices). A request past it
//!   first trims the cache and drops copies that the other device can re-derive; the scheduler
//!   then flushes and waits for in-flight work and retries once; only then does the request
//!   fail with `MemoryLimitError`. Cached bytes do not count as active, but the cache is
//!   trimmed so that active plus cached bytes stay within the limit as well.
//!
//! The books live in `heap`; this module is the interface the runtime calls.

use std::cell::Cell;
use std::rc::Rc;

use crate::error::{Error, Result};
pub use crate::memory::block::{GpuBlock, GpuBuffer, HostBlock};
use crate::memory::device_errors::create_watched;
pub use crate::memory::heap::carve::SMALL_SEGMENT;
use crate::memory::heap::segment::Segment;
pub use crate::memory::heap::segment::Usage;
pub use crate::memory::heap::{DEFAULT_CACHE_LIMIT, LiveBlock};
use crate::memory::heap::{Heap, with};
use crate::memory::history::{Action, Event, Recording};
use crate::memory::policy::{Policy, Pool, rounded};
use crate::memory::stats::{Scope, Stats};
use crate::stream::{Device, Stream};

/// One record of [`snapshot`].
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotEntry {
    pub block: LiveBlock,
    /// `"active"`, `"cached"` (an idle buffer) or `"inactive"` (a free range of a buffer in
    /// use: PyTorch's inactive split block).
    pub state: &'static str,
}

/// Makes room for `size` active bytes: trims the cache, then drops copies that the other
/// device can re-derive. Fails if the limit still does not allow it.
pub(crate) fn ensure_room(what: &str, size: u64, device: Device) -> Result<()> {
    if with(|h| h.fits_limit(size)) {
        return Ok(());
    }
    with(|h| h.evict_while(|_| false));
    // Dropping copies returns their blocks to the heap, so it must not be borrowed.
    if let Some(reclaim) = RECLAIM.with(Cell::get) {
        reclaim();
    }
    with(|h| {
        if h.fits_limit(size) {
            Ok(())
        } else {
            Err(h.limit_error(what, size, device))
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

/// A GPU block of at least `requested` bytes for `usage`, from the cache when a free range
/// fits.
pub fn alloc_gpu(
    device: &wgpu::Device,
    max_buffer_size: u64,
    usage: Usage,
    requested: u64,
) -> Result<GpuBuffer> {
    alloc_gpu_apart(device, max_buffer_size, usage, requested, &[])
}

/// [`alloc_gpu`], in a buffer that none of `apart` lives in. A dispatch's output must not
/// share a buffer with its inputs: WebGPU rejects a buffer bound both read-only and writable
/// in one dispatch.
pub fn alloc_gpu_apart(
    device: &wgpu::Device,
    max_buffer_size: u64,
    usage: Usage,
    requested: u64,
    apart: &[&GpuBuffer],
) -> Result<GpuBuffer> {
    let size = rounded(requested);
    if size > max_buffer_size {
        with(|h| h.stats.num_ooms += 1);
        return Err(Error::MemoryLimit(format!(
            "a GPU buffer of {requested} bytes exceeds the adapter's maxBufferSize of {max_buffer_size} bytes"
        )));
    }
    ensure_room("allocating GPU memory", size, Device::Gpu)?;
    let apart: Vec<u64> = apart.iter().map(|b| b.serial()).collect();
    with(|h| {
        let class = (usage, Pool::of(requested), h.device_number(device));
        let (range, fresh) = match h.find(class, size, &apart) {
            Some(range) => (range, false),
            None => {
                let segment_size = h.segment_size(class, size, max_buffer_size);
                h.make_room_for_segment(segment_size, size);
                let segment = new_segment(h, device, class, segment_size);
                let range = crate::memory::heap::segments::Range {
                    segment: segment.serial,
                    offset: 0,
                    len: segment_size,
                };
                h.add_segment(class, segment);
                (range, true)
            }
        };
        let len = h.take_len(&range, size, class);
        let (id, segment) = h.carve(range, len, requested, fresh);
        Ok(Rc::new(GpuBlock {
            id,
            segment,
            offset: range.offset,
            size: len,
            requested,
        }))
    })
}

/// Creates a buffer of `size` bytes, watched for the GPU's report of whether it could.
fn new_segment(
    h: &mut Heap,
    device: &wgpu::Device,
    (usage, pool, _): (Usage, Pool, u32),
    size: u64,
) -> Rc<Segment> {
    let serial = h.new_id();
    let (buffer, watch) = create_watched(
        device,
        &wgpu::BufferDescriptor {
            label: Some(usage.name()),
            size,
            usage: usage.wgpu(),
            mapped_at_creation: false,
        },
    );
    let segment = Rc::new(Segment::new(
        serial,
        buffer,
        device.clone(),
        usage,
        pool,
        size,
    ));
    watch(&segment);
    segment
}

/// Counts `words` as a live host copy, within the memory limit.
pub fn host_block(words: Vec<u32>) -> Result<HostBlock> {
    let mut block = reserve_host(words.len())?;
    block.fill(words);
    Ok(block)
}

/// A host block of `len` words counted now, whose words come later ([`HostBlock::fill`]): the
/// output of a kernel that a pool worker runs is counted, and meets the memory limit, when it
/// is queued, as the kernel run in place would be.
pub fn reserve_host(len: usize) -> Result<HostBlock> {
    let requested = len as u64 * 4;
    let pool = Pool::of(requested);
    let size = rounded(requested);
    ensure_room("allocating host memory", size, Device::Cpu)?;
    Ok(with(|h| {
        h.stats.segment_alloc(Device::Cpu, pool, size);
        h.stats.activate(Device::Cpu, pool, size, requested);
        let id = h.new_id();
        let live = h.live_block(id, Device::Cpu, size, requested);
        h.add_live(live);
        h.note(Action::SegmentAlloc, id, size, Device::Cpu);
        h.note(Action::Alloc, id, size, Device::Cpu);
        HostBlock {
            id,
            words: Vec::new(),
            pool,
            size,
            requested,
        }
    }))
}

/// Records `bytes` copied to `to` from the other device.
pub fn record_transfer(to: Device, bytes: u64) {
    with(|h| h.stats.transfer(to, bytes));
    crate::observe::transfers::note(to, bytes);
}

/// The statistics now.
pub fn stats() -> Stats {
    with(|h| h.stats)
}

/// Bytes of idle GPU buffers kept for reuse: what `clear_cache` releases. Free ranges of
/// buffers in use are reserved but not counted here (see `inactive_split_bytes`).
/// Live GPU bytes, and the total allocated since the last accumulated reset: a command batch
/// measures what it allocated by the difference.
pub fn gpu_bytes() -> (u64, u64) {
    with(|h| {
        let gauge = h.stats.allocated_bytes.get(Scope::Gpu);
        (gauge.current, gauge.allocated)
    })
}

pub fn cache_bytes() -> u64 {
    with(|h| h.cache_bytes())
}

/// Sets the memory limit (`None` removes it) and returns the previous one.
pub fn set_memory_limit(limit: Option<u64>) -> Option<u64> {
    with(|h| {
        let previous = std::mem::replace(&mut h.memory_limit, limit);
        h.trim();
        previous
    })
}

pub fn memory_limit() -> Option<u64> {
    with(|h| h.memory_limit)
}

/// Sets the cache limit and returns the previous one; `0` disables caching (and carving:
/// new blocks get buffers of their own, destroyed when freed).
pub fn set_cache_limit(limit: u64) -> u64 {
    with(|h| {
        let previous = std::mem::replace(&mut h.cache_limit, limit);
        h.trim();
        previous
    })
}

pub fn cache_limit() -> u64 {
    with(|h| h.cache_limit)
}

/// Whether a GPU buffer was destroyed since the last call. The browser's WebGPU frees a
/// destroyed buffer's memory only once the queue moves past it; without a submit, a page
/// that only allocates and frees (raw blocks, cache trims) grows the GPU process without
/// bound (measured: 12 GB, then the device was lost). Whoever holds the queue submits an
/// empty batch when this is true.
pub fn take_destroyed() -> bool {
    with(|h| std::mem::take(&mut h.destroyed))
}

/// Destroys the idle buffers of `device`, which is going away; the rest are destroyed as
/// their last blocks go.
pub fn release_device(device: &wgpu::Device) {
    with(|h| h.release_device(device));
}

/// Destroys every idle buffer and returns the bytes freed. The default policy's bound on
/// reserved memory starts again from the live bytes now.
pub fn clear_cache() -> u64 {
    with(|h| {
        let freed = h.evict_while(|_| false);
        h.high_water = h.stats.allocated_bytes.get(Scope::Gpu).current;
        freed
    })
}

/// Changes the reuse policy. Allowed only while nothing is allocated, as PyTorch requires
/// (the runtime's own uniform buffers aside).
pub fn set_policy(policy: Policy) -> Result<()> {
    with(|h| {
        // The runtime's own uniform buffers live as long as it does and are never cached,
        // so no policy applies to them: only the blocks of arrays and raw blocks count.
        let live = h
            .live
            .values()
            .filter(|b| b.usage != Some(Usage::Uniform))
            .count();
        if live > 0 && h.policy != policy {
            return Err(Error::Value(format!(
                "changeCurrentAllocator: {live} blocks are allocated; the policy can only change while no array or raw block holds memory"
            )));
        }
        h.evict_while(|_| false);
        h.policy = policy;
        Ok(())
    })
}

pub fn policy() -> Policy {
    with(|h| h.policy)
}

/// The GPU reported an error: the contents of every GPU block handed out so far are
/// distrusted (see `block::distrust_blocks_before`).
pub fn distrust_gpu_blocks() {
    let next = with(|h| h.last_id() + 1);
    crate::memory::block::distrust_blocks_before(next);
}

/// Every peak becomes its current value.
pub fn reset_peak_stats() {
    with(|h| h.stats.reset_peaks());
}

/// Starts recording the history (clearing what was kept), or stops it with `None`.
pub fn record_history(recording: Option<Recording>) {
    with(|h| h.history.set(recording));
}

/// The events recorded, oldest first.
pub fn history() -> Vec<Event> {
    with(|h| h.history.events())
}

/// An owner let go of block `id` (an array's copy); the block is freed once nothing else, such
/// as unsubmitted work, holds it.
pub(crate) fn note_free_request(id: u64, bytes: u64, device: Device) {
    let _ = crate::memory::heap::try_with(|h| h.note(Action::FreeRequested, id, bytes, device));
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
    with(|h| {
        let metric = match which {
            BytePeak::Allocated => &mut h.stats.allocated_bytes,
            BytePeak::Reserved => &mut h.stats.reserved_bytes,
        };
        metric.reset_peak(device.map(Scope::device));
    });
}

/// Totals and event counters restart from zero.
pub fn reset_accumulated_stats() {
    with(|h| h.stats.reset_accumulated());
}

/// Runs `f` with the node `(stream, op)` recorded as the owner of what it allocates.
pub fn in_context<T>(stream: Stream, op: &'static str, f: impl FnOnce() -> T) -> T {
    let previous = with(|h| h.context.replace((stream, op)));
    let result = f();
    with(|h| h.context = previous);
    result
}

/// Runs `f` with `origin` (where the page made the node being evaluated) given to the blocks
/// it allocates, for the history's stacks.
pub fn with_origin<T>(origin: Option<Rc<str>>, f: impl FnOnce() -> T) -> T {
    let previous = with(|h| std::mem::replace(&mut h.origin, origin));
    let result = f();
    with(|h| h.origin = previous);
    result
}

/// Whether the history records stacks: the JS layer then notes where each array is made.
pub fn history_wants_stacks() -> bool {
    with(|h| h.history.wants_stacks())
}

/// Runs `f` as an attempt that the scheduler may retry after flushing, so a limit failure
/// inside it is not yet counted as an OOM.
pub fn as_retryable<T>(f: impl FnOnce() -> T) -> T {
    let previous = with(|h| std::mem::replace(&mut h.retry_pending, true));
    let result = f();
    with(|h| h.retry_pending = previous);
    result
}

/// Counts a retry after flushing and waiting.
pub fn record_retry() {
    with(|h| h.stats.num_alloc_retries += 1);
}

/// Counts an allocation that failed for good after a retry.
pub fn record_oom() {
    with(|h| {
        h.stats.num_ooms += 1;
        let (size, device, context) = h.refused.take().unwrap_or((0, Device::Gpu, None));
        // Recorded as the refused request's, which ran in its node's context.
        let current = std::mem::replace(&mut h.context, context);
        h.note(Action::Oom, 0, size, device);
        h.context = current;
    });
}

/// Counts a wait for every stream (`synchronize()` with no stream).
pub fn record_sync_all_streams() {
    with(|h| h.stats.num_sync_all_streams += 1);
}

/// One record per live block, in allocation order, then one per free range of a GPU buffer:
/// `cached` for idle buffers, least recently used first, then `inactive` for the free ranges
/// of buffers that live blocks also use.
pub fn snapshot() -> Vec<SnapshotEntry> {
    with(|h| {
        let mut live: Vec<_> = h.live.values().cloned().collect();
        live.sort_by_key(|b| b.id);
        let active = live.into_iter().map(|block| SnapshotEntry {
            block,
            state: "active",
        });
        let free = h
            .free_ranges()
            .into_iter()
            .map(|(block, state)| SnapshotEntry { block, state });
        active.chain(free).collect()
    })
}
