//! The free space of the allocator's segments: which byte ranges of which device buffers are
//! free, the best-fit search over them, splitting and coalescing, and which segments are idle
//! (wholly free), oldest first.
//!
//! Pure bookkeeping, generic over the segment's handle, so it is tested without a GPU. The
//! allocator decides what to carve and when to let a segment go; this module only keeps the
//! ranges exact: a byte is free in at most one range, and adjacent free ranges are merged.

use rustc_hash::FxHashMap as HashMap;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::Hash;

/// A free range found by [`Segments::find`]: its segment, offset and length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub segment: u64,
    pub offset: u64,
    pub len: u64,
}

/// One segment's bookkeeping.
#[derive(Debug)]
pub struct Entry<K, S> {
    pub key: K,
    pub handle: S,
    pub size: u64,
    /// Free ranges by offset.
    free: BTreeMap<u64, u64>,
    /// Blocks carved out and not yet given back.
    blocks: usize,
    /// When it last became idle (wholly free), for least-recently-used eviction.
    idle_since: Option<u64>,
    /// A retired segment hands out nothing more; it is removed once idle.
    retired: bool,
}

impl<K, S> Entry<K, S> {
    /// Whether no block is carved out of it.
    pub fn is_idle(&self) -> bool {
        self.blocks == 0
    }

    pub fn is_retired(&self) -> bool {
        self.retired
    }

    /// Free ranges as `(offset, len)`, by offset.
    pub fn free_ranges(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.free.iter().map(|(&o, &l)| (o, l))
    }

    /// Free ranges and bytes that live blocks keep from being released (PyTorch's
    /// "inactive split"): those of a segment that has blocks carved out.
    pub fn inactive(&self) -> (u64, u64) {
        if self.blocks == 0 {
            return (0, 0);
        }
        (self.free.len() as u64, self.free.values().sum())
    }
}

/// Every segment, and the free ranges of those that may hand out memory, searchable by key.
#[derive(Debug)]
pub struct Segments<K, S> {
    entries: HashMap<u64, Entry<K, S>>,
    /// Per key: `(len, segment, offset)` of every free range of a segment not retired.
    index: HashMap<K, BTreeSet<(u64, u64, u64)>>,
    /// Idle segments by the tick they became idle.
    idle: BTreeMap<u64, u64>,
    /// Bytes of the idle segments.
    idle_bytes: u64,
    tick: u64,
}

impl<K, S> Default for Segments<K, S> {
    fn default() -> Self {
        Segments {
            entries: HashMap::default(),
            index: HashMap::default(),
            idle: BTreeMap::new(),
            idle_bytes: 0,
            tick: 0,
        }
    }
}

impl<K: Copy + Eq + Hash, S> Segments<K, S> {
    /// Adds a wholly free segment named `id` (ids are never reused).
    pub fn add(&mut self, id: u64, key: K, size: u64, handle: S) {
        let mut free = BTreeMap::new();
        free.insert(0, size);
        self.index.entry(key).or_default().insert((size, id, 0));
        self.tick += 1;
        self.idle.insert(self.tick, id);
        self.idle_bytes += size;
        self.entries.insert(
            id,
            Entry {
                key,
                handle,
                size,
                free,
                blocks: 0,
                idle_since: Some(self.tick),
                retired: false,
            },
        );
    }

    pub fn get(&self, id: u64) -> Option<&Entry<K, S>> {
        self.entries.get(&id)
    }

    /// Every segment, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &Entry<K, S>)> {
        self.entries.iter().map(|(&id, e)| (id, e))
    }

    /// Idle segments, least recently idle first.
    pub fn idle(&self) -> impl Iterator<Item = u64> + '_ {
        self.idle.values().copied()
    }

    /// Bytes of the idle segments: what releasing every idle segment would free.
    pub fn idle_bytes(&self) -> u64 {
        self.idle_bytes
    }

    /// The smallest free range of `key` of at least `len` bytes that `accept` takes; of equal
    /// lengths, the one in the oldest segment, then at the lowest offset.
    pub fn find(&self, key: K, len: u64, accept: impl Fn(&Range) -> bool) -> Option<Range> {
        self.index
            .get(&key)?
            .range((len, 0, 0)..)
            .map(|&(len, segment, offset)| Range {
                segment,
                offset,
                len,
            })
            .find(|range| accept(range))
    }

    /// Carves `len` bytes from the start of the free range `range` (found by [`find`]); the
    /// rest of the range stays free.
    ///
    /// [`find`]: Segments::find
    pub fn carve(&mut self, range: Range, len: u64) {
        debug_assert!(len > 0 && len <= range.len);
        let entry = self
            .entries
            .get_mut(&range.segment)
            .expect("a known segment");
        let found = entry.free.remove(&range.offset);
        debug_assert_eq!(found, Some(range.len), "carving a range that is not free");
        let set = self.index.get_mut(&entry.key).expect("the key is indexed");
        set.remove(&(range.len, range.segment, range.offset));
        if len < range.len {
            let (offset, rest) = (range.offset + len, range.len - len);
            entry.free.insert(offset, rest);
            if !entry.retired {
                set.insert((rest, range.segment, offset));
            }
        }
        if let Some(since) = entry.idle_since.take() {
            self.idle.remove(&since);
            self.idle_bytes -= entry.size;
        }
        entry.blocks += 1;
    }

    /// Gives back the `len` bytes at `offset` of segment `id`, merged with free neighbours;
    /// returns whether the segment is now idle. Unknown segments are ignored (`false`).
    pub fn give_back(&mut self, id: u64, offset: u64, len: u64) -> bool {
        let Some(entry) = self.entries.get_mut(&id) else {
            return false;
        };
        let set = self.index.entry(entry.key).or_default();
        let (mut start, mut end) = (offset, offset + len);
        let before = entry
            .free
            .range(..offset)
            .next_back()
            .map(|(&o, &l)| (o, l));
        if let Some((o, l)) = before.filter(|(o, l)| o + l == offset) {
            entry.free.remove(&o);
            set.remove(&(l, id, o));
            start = o;
        }
        if let Some(l) = entry.free.remove(&end) {
            set.remove(&(l, id, end));
            end += l;
        }
        entry.free.insert(start, end - start);
        if !entry.retired {
            set.insert((end - start, id, start));
        }
        entry.blocks -= 1;
        if entry.blocks > 0 {
            return false;
        }
        self.tick += 1;
        entry.idle_since = Some(self.tick);
        self.idle.insert(self.tick, id);
        self.idle_bytes += entry.size;
        true
    }

    /// Stops segment `id` from handing out memory; it is removed once idle.
    pub fn retire(&mut self, id: u64) {
        let Some(entry) = self.entries.get_mut(&id) else {
            return;
        };
        entry.retired = true;
        if let Some(set) = self.index.get_mut(&entry.key) {
            for (&offset, &len) in &entry.free {
                set.remove(&(len, id, offset));
            }
        }
    }

    /// Removes segment `id`, which must be idle, and returns it.
    pub fn remove(&mut self, id: u64) -> Option<Entry<K, S>> {
        let entry = self.entries.remove(&id)?;
        debug_assert!(entry.is_idle(), "removing a segment with live blocks");
        if let Some(since) = entry.idle_since {
            self.idle.remove(&since);
            self.idle_bytes -= entry.size;
        }
        if let Some(set) = self.index.get_mut(&entry.key) {
            for (&offset, &len) in &entry.free {
                set.remove(&(len, id, offset));
            }
        }
        Some(entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_segments() -> Segments<u8, ()> {
        let mut s = Segments::default();
        s.add(1, 0, 1024, ());
        s.add(2, 0, 512, ());
        s
    }

    #[test]
    fn finds_the_smallest_range_that_holds_the_request() {
        let s = two_segments();
        let r = s.find(0, 300, |_| true).unwrap();
        assert_eq!((r.segment, r.offset, r.len), (2, 0, 512));
        let r = s.find(0, 600, |_| true).unwrap();
        assert_eq!(r.segment, 1);
        assert!(s.find(0, 2048, |_| true).is_none());
        assert!(s.find(1, 16, |_| true).is_none(), "another key");
        let skip_two = s.find(0, 300, |r| r.segment != 2).unwrap();
        assert_eq!(skip_two.segment, 1);
    }

    #[test]
    fn carving_splits_and_giving_back_merges_both_neighbours() {
        let mut s = two_segments();
        let r = s.find(0, 1024, |_| true).unwrap();
        s.carve(r, 256);
        let a = (1, 0, 256);
        let r = s.find(0, 700, |_| true).unwrap();
        assert_eq!((r.segment, r.offset, r.len), (1, 256, 768));
        s.carve(r, 256);
        let r = s.find(0, 512, |r| r.segment == 1).unwrap();
        s.carve(r, 256);
        let entry = s.get(1).unwrap();
        assert_eq!(entry.free_ranges().collect::<Vec<_>>(), vec![(768, 256)]);
        assert_eq!(entry.inactive(), (1, 256));
        assert!(!s.give_back(1, 256, 256));
        assert_eq!(s.get(1).unwrap().inactive(), (2, 512));
        assert!(!s.give_back(a.0, a.1, a.2));
        assert_eq!(
            s.get(1).unwrap().free_ranges().collect::<Vec<_>>(),
            vec![(0, 512), (768, 256)]
        );
        assert!(s.give_back(1, 512, 256), "the last block makes it idle");
        let entry = s.get(1).unwrap();
        assert_eq!(entry.free_ranges().collect::<Vec<_>>(), vec![(0, 1024)]);
        assert_eq!(entry.inactive(), (0, 0), "an idle segment is releasable");
        assert_eq!(s.find(0, 1024, |_| true).unwrap().len, 1024);
    }

    #[test]
    fn idle_segments_are_listed_least_recently_idle_first() {
        let mut s = two_segments();
        assert_eq!(s.idle().collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(s.idle_bytes(), 1024 + 512);
        let r = s.find(0, 100, |r| r.segment == 1).unwrap();
        s.carve(r, 256);
        assert_eq!(s.idle().collect::<Vec<_>>(), vec![2]);
        assert_eq!(s.idle_bytes(), 512);
        s.give_back(1, 0, 256);
        assert_eq!(s.idle().collect::<Vec<_>>(), vec![2, 1]);
        assert!(s.remove(2).is_some());
        assert_eq!(s.idle().collect::<Vec<_>>(), vec![1]);
        assert_eq!(s.idle_bytes(), 1024);
        assert!(s.find(0, 512, |r| r.segment == 2).is_none());
    }

    #[test]
    fn a_retired_segment_hands_out_nothing_and_still_takes_blocks_back() {
        let mut s = two_segments();
        let r = s.find(0, 1000, |_| true).unwrap();
        s.carve(r, 256);
        s.retire(1);
        assert!(s.find(0, 512, |r| r.segment == 1).is_none());
        assert!(s.give_back(1, 0, 256));
        assert!(s.get(1).unwrap().is_retired());
        assert!(
            s.find(0, 600, |_| true).is_none(),
            "its space is not offered"
        );
        assert!(!s.give_back(9, 0, 256), "an unknown segment is ignored");
    }
}
