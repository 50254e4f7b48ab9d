//! Carving: which free range serves a request, how much of it the request takes, new
//! segments, and ranges given back when blocks drop. Methods of the allocator's [`Heap`].

use std::rc::Rc;

use crate::memory::heap::segment::{Segment, Usage};
use crate::memory::heap::segments::Range;
use crate::memory::heap::{Class, Heap, Released};
use crate::memory::history::Action;
use crate::memory::policy::{Pool, SMALL_POOL_LIMIT, SMALL_ROUNDING};
use crate::stream::Device;

/// Storage requests under [`SMALL_POOL_LIMIT`] are carved out of buffers of this size.
pub const SMALL_SEGMENT: u64 = 2 << 20;

impl Heap {
    /// Whether storage requests of this usage are carved out of larger buffers now. With the
    /// cache off (`setCacheLimit(0)`) nothing is kept, so nothing is carved.
    pub(crate) fn splits(&self, usage: Usage) -> bool {
        self.policy.splits() && usage.splits() && self.cache_limit > 0
    }

    /// The free range that serves a request of `size` bytes of `class`, outside the segments
    /// in `avoid`; `None` when a new segment is needed.
    pub(crate) fn find(&self, class: Class, size: u64, avoid: &[u64]) -> Option<Range> {
        if !self.policy.caches() {
            return None;
        }
        let (usage, pool, _) = class;
        let splits = self.splits(usage);
        let policy = self.policy;
        self.segments.find(class, size, |range| {
            let whole_fits = splits || policy.fits(range.len, size, pool);
            let usable = self
                .segments
                .get(range.segment)
                .is_some_and(|e| !e.handle.is_spent());
            whole_fits
                && usable
                && !avoid.contains(&range.segment)
                && self.fits_limit(if splits { size } else { range.len })
        })
    }

    /// How much of `range` a request of `size` takes: all of it unless it splits, and then
    /// all of it when the rest would be too small to serve its pool (PyTorch keeps large
    /// buffers in pieces of at least 1 MiB), unless that would pass the memory limit.
    pub(crate) fn take_len(&self, range: &Range, size: u64, class: Class) -> u64 {
        let (usage, pool, _) = class;
        if !self.splits(usage) {
            return range.len;
        }
        let least_rest = match pool {
            Pool::Small => SMALL_ROUNDING,
            Pool::Large => SMALL_POOL_LIMIT,
        };
        let rest = range.len - size;
        if rest >= least_rest || !self.fits_limit(range.len) {
            size
        } else {
            range.len
        }
    }

    /// The size of a new segment for a request of `size` bytes.
    pub(crate) fn segment_size(&self, class: Class, size: u64, max_buffer_size: u64) -> u64 {
        let (usage, pool, _) = class;
        if self.splits(usage) && pool == Pool::Small {
            SMALL_SEGMENT.min(max_buffer_size).max(size)
        } else {
            size
        }
    }

    /// Adds a new, wholly free segment.
    pub(crate) fn add_segment(&mut self, class: Class, segment: Rc<Segment>) {
        self.stats.num_cache_misses += 1;
        self.stats
            .segment_alloc(Device::Gpu, segment.pool, segment.size);
        self.note(
            Action::SegmentAlloc,
            segment.serial,
            segment.size,
            Device::Gpu,
        );
        self.segments
            .add(segment.serial, class, segment.size, segment);
    }

    /// Carves `len` bytes from `range` for a request of `requested` bytes; returns the new
    /// block's id, its segment and offset.
    pub(crate) fn carve(
        &mut self,
        range: Range,
        len: u64,
        requested: u64,
        fresh: bool,
    ) -> (u64, Rc<Segment>) {
        let segment = self.segment(range.segment);
        let before = self.inactive(range.segment);
        self.segments.carve(range, len);
        self.inactive_changed(&segment, before);
        self.stats
            .activate(Device::Gpu, segment.pool, len, requested);
        self.high_water = self.high_water.max(self.gpu_live());
        if !fresh {
            self.stats.num_cache_hits += 1;
        }
        let id = self.new_id();
        let mut live = self.live_block(id, Device::Gpu, len, requested);
        live.usage = Some(segment.usage);
        live.segment = Some(segment.serial);
        live.offset = range.offset;
        self.add_live(live);
        if !fresh {
            self.note(Action::CacheHit, id, len, Device::Gpu);
        }
        self.note(Action::Alloc, id, len, Device::Gpu);
        (id, segment)
    }

    fn segment(&self, serial: u64) -> Rc<Segment> {
        let entry = self.segments.get(serial).expect("a known segment");
        entry.handle.clone()
    }

    fn inactive(&self, serial: u64) -> (u64, u64) {
        self.segments.get(serial).map_or((0, 0), |e| e.inactive())
    }

    fn inactive_changed(&mut self, segment: &Segment, before: (u64, u64)) {
        let after = self.inactive(segment.serial);
        self.stats
            .inactive_split_change(Device::Gpu, segment.pool, before, after);
    }

    pub(crate) fn release_gpu(&mut self, block: Released) {
        let Released {
            id,
            segment,
            offset,
            size,
            requested,
            distrusted,
        } = block;
        self.note(Action::FreeCompleted, id, size, Device::Gpu);
        self.live.remove(&id);
        self.stats
            .deactivate(Device::Gpu, segment.pool, size, requested);
        let serial = segment.serial;
        // A spent or distrusted segment serves no more blocks; a uniform buffer is the
        // runtime's own and is never cached.
        let keep = !segment.is_spent()
            && !distrusted
            && self.policy.caches()
            && segment.usage != Usage::Uniform;
        if !keep {
            self.segments.retire(serial);
        }
        let before = self.inactive(serial);
        let idle = self.segments.give_back(serial, offset, size);
        self.inactive_changed(&segment, before);
        let retired = self.segments.get(serial).is_some_and(|e| e.is_retired());
        if idle && retired {
            self.destroy(serial);
        } else if idle {
            self.trim();
        }
    }
}
