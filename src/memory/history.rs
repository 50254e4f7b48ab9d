//! The allocator's event history (PyTorch's `torch.cuda.memory._record_memory_history`): a
//! bounded ring of what happened to each block, with the op that made it and, on request, the
//! stack of the call that allocated it.

use std::cell::Cell;
use std::collections::VecDeque;
use std::rc::Rc;

use crate::observe::clock::now_ms;
use crate::stream::{Device, Stream};

/// What happened, by PyTorch's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// A block went live for a request.
    Alloc,
    /// Its owner let go of it; the block may still be held by work that reads it.
    FreeRequested,
    /// Nothing holds it any more: it went back to the cache or was destroyed.
    FreeCompleted,
    /// A buffer (or host copy) was created.
    SegmentAlloc,
    /// A buffer (or host copy) was destroyed.
    SegmentFree,
    /// A request was served by a cached buffer.
    CacheHit,
    /// A request failed for good with a `MemoryLimitError`.
    Oom,
}

impl Action {
    pub fn name(self) -> &'static str {
        match self {
            Action::Alloc => "alloc",
            Action::FreeRequested => "free_requested",
            Action::FreeCompleted => "free_completed",
            Action::SegmentAlloc => "segment_alloc",
            Action::SegmentFree => "segment_free",
            Action::CacheHit => "cache_hit",
            Action::Oom => "oom",
        }
    }
}

/// One event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub action: Action,
    /// The block's id (0 for an OOM, which has no block).
    pub id: u64,
    pub bytes: u64,
    pub device: Device,
    pub stream: Option<Stream>,
    /// The op whose evaluation made the block, `"data"` outside an evaluation.
    pub op: &'static str,
    pub time_ms: f64,
    pub stack: Option<String>,
}

/// How the history records, as `recordMemoryHistory` sets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recording {
    pub max_entries: usize,
    pub stacks: bool,
}

/// The ring of events; empty and idle until recording starts.
#[derive(Debug, Default)]
pub struct History {
    recording: Option<Recording>,
    events: VecDeque<Event>,
}

/// Takes the stack of the current call (the JS layer's: JS has the stacks that matter).
pub type StackProvider = fn() -> Option<String>;

thread_local! {
    static STACK: Cell<Option<StackProvider>> = const { Cell::new(None) };
}

/// Sets how a stack is taken when recording asks for stacks.
pub fn set_stack_provider(provider: StackProvider) {
    STACK.with(|s| s.set(Some(provider)));
}

impl History {
    /// Starts recording (clearing what was kept), or stops it with `None` (keeping what was
    /// recorded, to be read).
    pub fn set(&mut self, recording: Option<Recording>) {
        if recording.is_some() {
            self.events.clear();
        }
        self.recording = recording;
    }

    pub fn is_recording(&self) -> bool {
        self.recording.is_some()
    }

    pub fn wants_stacks(&self) -> bool {
        self.recording.is_some_and(|r| r.stacks)
    }

    /// Keeps an event, dropping the oldest past the bound. With stacks, an event's stack is
    /// `origin` (where the page made the block's array), else the stack of the current call.
    pub fn record(
        &mut self,
        action: Action,
        (id, bytes, device): (u64, u64, Device),
        context: (Option<Stream>, &'static str),
        origin: Option<Rc<str>>,
    ) {
        let Some(recording) = self.recording else {
            return;
        };
        let stack = recording
            .stacks
            .then(|| match origin {
                Some(origin) => Some(origin.to_string()),
                None => STACK.with(Cell::get).and_then(|take| take()),
            })
            .flatten();
        if self.events.len() >= recording.max_entries {
            self.events.pop_front();
        }
        if recording.max_entries == 0 {
            return;
        }
        self.events.push_back(Event {
            action,
            id,
            bytes,
            device,
            stream: context.0,
            op: context.1,
            time_ms: now_ms(),
            stack,
        });
    }

    /// The events kept, oldest first.
    pub fn events(&self) -> Vec<Event> {
        self.events.iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_keeps_the_newest_entries_and_nothing_when_idle() {
        let mut history = History::default();
        let block = |id| (id, 256, Device::Gpu);
        history.record(Action::Alloc, block(1), (None, "data"), None);
        assert!(history.events().is_empty());
        history.set(Some(Recording {
            max_entries: 2,
            stacks: false,
        }));
        for id in 1..=3 {
            history.record(Action::Alloc, block(id), (None, "data"), None);
        }
        let ids: Vec<u64> = history.events().iter().map(|e| e.id).collect();
        assert_eq!(ids, vec![2, 3]);
    }
}
