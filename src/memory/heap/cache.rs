//! The cache: idle segments, and when they are destroyed (least recently used first) to keep
//! the cache limit, the memory limit and the policy's bound on reserved memory; segments that
//! may serve no more blocks. Methods of the allocator's [`Heap`].

use crate::memory::heap::Heap;
use crate::memory::heap::segment::Segment;
use crate::memory::history::Action;
use crate::stream::Device;

impl Heap {
    /// Makes room for a new segment of `size` bytes that a request of `request` bytes needs:
    /// idle segments go, oldest first, while the memory limit or the policy's bound on reserved
    /// memory would be passed.
    pub(crate) fn make_room_for_segment(&mut self, size: u64, request: u64) {
        let peak = self.high_water.max(self.gpu_live() + request);
        let bound = self.policy.reserve_bound(peak);
        self.evict_while(|h| {
            let limit_ok = h
                .memory_limit
                .is_none_or(|l| h.active() + h.cache_bytes() + size <= l);
            let bound_ok = bound.is_none_or(|b| h.gpu_reserved() + size <= b);
            limit_ok && bound_ok
        });
    }

    /// Destroys idle segments, oldest first, while the cache is over its limit or active
    /// plus cached bytes are over the memory limit.
    pub(crate) fn trim(&mut self) {
        self.evict_while(|h| h.cache_bytes() <= h.cache_limit && h.within_limit_with_cache());
    }

    /// Destroys the oldest idle segments until `keep` holds; returns the bytes freed.
    pub(crate) fn evict_while(&mut self, keep: impl Fn(&Heap) -> bool) -> u64 {
        let mut freed = 0;
        while !keep(self) {
            let Some(oldest) = self.segments.idle().next() else {
                break;
            };
            freed += self.destroy(oldest);
        }
        freed
    }

    /// Destroys idle segment `serial`; returns its size.
    pub(crate) fn destroy(&mut self, serial: u64) -> u64 {
        let Some(entry) = self.segments.remove(serial) else {
            return 0;
        };
        let segment = entry.handle;
        self.note(Action::SegmentFree, serial, segment.size, Device::Gpu);
        self.stats
            .segment_free(Device::Gpu, segment.pool, segment.size);
        segment.buffer.destroy();
        self.destroyed = true;
        segment.size
    }

    /// Destroys the idle segments of `device`, which is going away, and retires the rest.
    pub(crate) fn release_device(&mut self, device: &wgpu::Device) {
        self.retire_where(|s| &s.device == device);
        self.forget_device(device);
    }

    /// Destroys idle segments that the GPU failed to create, and retires used ones.
    pub(crate) fn drop_spent(&mut self) {
        self.retire_where(Segment::is_spent);
    }

    /// Retires every segment `which` names: idle ones are destroyed now, the rest as their
    /// last block goes.
    fn retire_where(&mut self, which: impl Fn(&Segment) -> bool) {
        let chosen: Vec<(u64, bool)> = self
            .segments
            .iter()
            .filter(|(_, e)| !e.is_retired() && which(&e.handle))
            .map(|(serial, e)| (serial, e.is_idle()))
            .collect();
        for (serial, idle) in chosen {
            self.segments.retire(serial);
            if idle {
                self.destroy(serial);
            }
        }
    }
}
