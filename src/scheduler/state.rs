//! The scheduler's one shared state: the recording batch, the storages its unsubmitted work
//! writes, the nodes it computes, and the readbacks in flight. Every method is synchronous;
//! callers hold the state only between awaits.

use std::collections::HashSet;
use std::rc::{Rc, Weak};

use crate::array::Array;
use crate::error::Result;
use crate::gpu::GpuContext;
use crate::gpu::device::encoder::CommandBatch;
use crate::gpu::device::readback::Readback;
use crate::observe::profile::Profiler;
use crate::storage::Storage;

use super::cpu_batch::CpuBatches;

pub(super) struct State {
    /// GPU nodes are recorded here, by every caller, in the order they are run.
    pub(super) batch: Option<CommandBatch>,
    /// Readbacks of buffers that no unsubmitted work writes. Submitted ahead of `batch`, so
    /// they do not wait behind the GPU work recorded since.
    early: Option<CommandBatch>,
    /// Storages that `batch`'s unsubmitted work writes.
    pending_writes: HashSet<*const Storage>,
    /// Nodes whose results unsubmitted work computes; they keep their inputs until it is
    /// submitted, so they can run again if it is discarded.
    recorded: Vec<Array>,
    /// At most one per storage, oldest first; every reader of the storage awaits the same one.
    readbacks: Vec<InFlight>,
    /// Batches discarded in a row because the GPU could not create a buffer.
    pub(super) device_ooms: usize,
    /// CPU nodes recorded for the pool's workers, and those in flight.
    pub(super) cpu: CpuBatches,
}

/// A readback and the storage whose host copy it makes. It does not keep the storage: an
/// array disposed meanwhile frees its memory, and its readback's words are dropped.
struct InFlight {
    storage: Weak<Storage>,
    readback: Readback,
}

impl InFlight {
    fn reads(&self, storage: &Rc<Storage>) -> bool {
        std::ptr::eq(self.storage.as_ptr(), Rc::as_ptr(storage))
    }
}

impl State {
    pub(super) fn new(gpu: Option<&Rc<GpuContext>>, profiler: &Rc<Profiler>) -> State {
        State {
            batch: gpu.map(|g| CommandBatch::profiled(g.clone(), profiler.clone())),
            early: gpu.map(|g| CommandBatch::new(g.clone())),
            pending_writes: HashSet::new(),
            recorded: Vec::new(),
            readbacks: Vec::new(),
            device_ooms: 0,
            cpu: CpuBatches::default(),
        }
    }

    /// The ring grows for a batch that needs more blocks than it has; once no batch holds
    /// any, it goes back to one chunk.
    fn release_grown_ring(&self) {
        if let Some(batch) = &self.batch {
            batch.release_grown_ring();
        }
    }

    /// Whether unsubmitted work writes `storage`.
    pub(super) fn is_pending_write(&self, storage: &Rc<Storage>) -> bool {
        self.pending_writes.contains(&Rc::as_ptr(storage))
    }

    /// Notes a node whose result `batch`'s unsubmitted work computes into `storage`.
    pub(super) fn note_recorded(&mut self, node: Array, storage: &Rc<Storage>) {
        self.pending_writes.insert(Rc::as_ptr(storage));
        self.recorded.push(node);
    }

    /// The early batch, then the recording one, which submit in that order.
    fn batches(&mut self) -> impl Iterator<Item = &mut CommandBatch> {
        [self.early.as_mut(), self.batch.as_mut()]
            .into_iter()
            .flatten()
    }

    /// Whether a batch holds recorded commands, or a node was recorded without any (an empty
    /// result needs no dispatch): either way a submit is owed, and it is the submit that lets
    /// recorded nodes go of their inputs.
    pub(super) fn has_unsubmitted_work(&self) -> bool {
        !self.recorded.is_empty()
            || [&self.early, &self.batch]
                .into_iter()
                .any(|b| b.as_ref().is_some_and(|b| !b.is_empty()))
    }

    /// Submits the early readbacks, then the recorded work; the recorded nodes let go of
    /// their inputs, which the queue no longer needs.
    ///
    /// Buffers are freed last-recorded first, and the cache hands out the most recently freed
    /// first, so the next batch of a chain of ops takes the same buffers in the same order:
    /// its dispatches bind the same buffers together and find their bind groups cached.
    pub(super) fn submit(&mut self) {
        self.batches().for_each(CommandBatch::submit);
        self.release_grown_ring();
        self.pending_writes.clear();
        for node in self.recorded.drain(..).rev() {
            node.release_inputs();
        }
    }

    /// Drops the recorded work unsubmitted, and makes its nodes lazy again: whoever needs them
    /// runs them again. Its readbacks resolve as discarded, so their readers wake and ask
    /// again; [`State::settle`] drops them.
    pub(super) fn discard(&mut self) {
        self.batches().for_each(CommandBatch::discard);
        self.release_grown_ring();
        self.pending_writes.clear();
        for node in std::mem::take(&mut self.recorded) {
            node.clear_data();
        }
    }

    /// Records a readback of `storage`'s GPU copy, unless it has a host copy or one is in
    /// flight already: after the work that writes it, or ahead of all recorded work if none
    /// does.
    pub(super) fn request_readback(&mut self, storage: &Rc<Storage>) -> Result<()> {
        if storage.on_host() || self.readbacks.iter().any(|r| r.reads(storage)) {
            return Ok(());
        }
        let buffer = storage
            .gpu_buffer()
            .expect("storage without a host copy has a GPU copy");
        if buffer.is_lost() {
            return Err(crate::storage::lost_without_host_copy());
        }
        let batch = if self.is_pending_write(storage) {
            self.batch.as_mut()
        } else {
            self.early.as_mut()
        };
        let batch = batch.expect("a GPU copy implies a GPU context");
        let readback = batch.read_back(&buffer, storage.len())?;
        self.readbacks.push(InFlight {
            storage: Rc::downgrade(storage),
            readback,
        });
        Ok(())
    }

    /// A future that resolves once the first of `storages` with a readback in flight has been
    /// mapped; `None` when none has one (they were settled or discarded meanwhile).
    pub(super) fn first_mapping(
        &self,
        gpu: &GpuContext,
        storages: &[Rc<Storage>],
    ) -> Option<impl std::future::Future<Output = ()> + use<>> {
        self.readbacks
            .iter()
            .find(|r| storages.iter().any(|s| r.reads(s)))
            .map(|r| r.readback.mapped(gpu))
    }

    /// A future that resolves once the oldest readback in flight has been mapped; `None`
    /// when there is none.
    pub(super) fn oldest_mapping(
        &self,
        gpu: &GpuContext,
    ) -> Option<impl std::future::Future<Output = ()> + use<>> {
        self.readbacks.first().map(|r| r.readback.mapped(gpu))
    }

    /// Takes every readback whose mapping has resolved, and every CPU batch that has run, and
    /// gives their storages the host copies.
    /// Discarded ones are dropped; their readers ask again. A failure (a mapping error, or no
    /// room for the host copy) is returned only if it concerns one of `needs`: whoever needs
    /// another storage asks for it again and meets its own failure.
    pub(super) fn settle(&mut self, needs: &[Rc<Storage>]) -> Result<()> {
        let mut failure = self.cpu.settle(needs).err();
        while let Some(index) = self.readbacks.iter().position(|r| r.readback.is_ready()) {
            let flight = self.readbacks.remove(index);
            let needed = needs.iter().any(|s| flight.reads(s));
            let InFlight { storage, readback } = flight;
            let outcome =
                readback
                    .take_words()
                    .and_then(|words| match (words, storage.upgrade()) {
                        // Words read from a buffer the GPU's errors made untrustworthy are
                        // not kept: the next pass meets the lost buffer and fails.
                        (Some(_), Some(storage))
                            if storage.gpu_buffer().is_some_and(|b| b.is_lost()) =>
                        {
                            Ok(())
                        }
                        (Some(words), Some(storage)) => storage.set_host(words).map(drop),
                        _ => Ok(()),
                    });
            if let (Err(err), true) = (outcome, needed) {
                failure.get_or_insert(err);
            }
        }
        failure.map_or(Ok(()), Err)
    }
}
