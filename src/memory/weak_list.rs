//! A list of weak references to what the runtime must find again later but must not keep
//! alive: the storages that hold two copies (for reclaiming), the compiled functions' tapes
//! (for `memorySnapshot`'s owners). Entries whose target is gone are pruned as the list grows,
//! so it stays within twice its live entries.

use std::rc::{Rc, Weak};

/// Weak references, pruned of dead ones whenever the list fills its room.
#[derive(Debug)]
pub struct WeakList<T>(Vec<Weak<T>>);

impl<T> Default for WeakList<T> {
    fn default() -> Self {
        WeakList::new()
    }
}

/// Below this many entries the list is never pruned: pruning costs more than the room.
const PRUNE_FROM: usize = 64;

impl<T> WeakList<T> {
    pub const fn new() -> WeakList<T> {
        WeakList(Vec::new())
    }

    /// Notes `item`. When the list is full, dead entries go first and the room doubles the
    /// live ones, so pruning costs O(1) a note.
    pub fn push(&mut self, item: &Rc<T>) {
        let list = &mut self.0;
        if list.len() == list.capacity() && list.len() >= PRUNE_FROM {
            list.retain(|w| w.strong_count() > 0);
            let live = list.len();
            list.reserve(live);
        }
        list.push(Rc::downgrade(item));
    }

    /// The entries still alive.
    pub fn live(&self) -> Vec<Rc<T>> {
        self.0.iter().filter_map(Weak::upgrade).collect()
    }

    /// Empties the list, returning the entries still alive.
    pub fn take_live(&mut self) -> Vec<Rc<T>> {
        std::mem::take(&mut self.0)
            .iter()
            .filter_map(Weak::upgrade)
            .collect()
    }

    /// Entries noted, dead ones not yet pruned included.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dead_entries_are_pruned_as_the_list_grows() {
        let mut list = WeakList::new();
        let kept: Vec<Rc<u32>> = (0..10).map(Rc::new).collect();
        for item in &kept {
            list.push(item);
        }
        for i in 0..10_000 {
            list.push(&Rc::new(i));
        }
        assert!(list.len() < 2 * PRUNE_FROM + 20, "{} entries", list.len());
        assert_eq!(list.live().len(), 10);
        assert_eq!(list.take_live().len(), 10);
        assert!(list.is_empty());
    }
}
