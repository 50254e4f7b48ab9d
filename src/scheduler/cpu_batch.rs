//! CPU nodes run by the pool's workers, so that the page's thread is free while a long CPU
//! kernel runs (the threaded build; natively, a started pool).
//!
//! A pass runs CPU nodes on the calling thread until they add up to a budget of work (about
//! 9 ms here); a node past it, and every CPU node that reads one recorded before it, goes into
//! the recording batch, as GPU nodes are recorded: the node's storage is **computing**
//! (no copy yet) and its output block is counted now, so the memory limit bites as it would
//! for a kernel run in place. A flush hands the batch to the pool as one piece of work (one
//! wake-up for a chain of kernels), which a worker runs in order while the page's thread goes
//! on. A node that reads a storage of a batch in flight waits for it, as a CPU node waits
//! for a readback; once the batch has run, [`CpuBatches::settle`] gives each storage its
//! words.
//!
//! The worker reads only what the batch owns (the primitives, shapes, layouts and the input
//! blocks it holds) and writes only the batch's result slots; the page's thread leaves those
//! alone until the batch's ticket says it has run, and a batch dropped early waits for it.

use std::cell::UnsafeCell;
use std::collections::HashSet;
use std::rc::{Rc, Weak};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use crate::cpu::{self, HostInput, Spec, pool};
use crate::error::{Error, Result};
use crate::graph::primitive::Primitive;
use crate::graph::shape::Layout;
use crate::memory::block::HostBlock;
use crate::storage::{HostWords, Storage};

/// How much CPU work (in [`work`]'s units) the calling thread runs in one pass before the rest
/// goes to the pool's workers: about 9 ms on this machine's 2 cores. Below it a trip to the
/// workers (tens of microseconds each way) costs more than the page is spared; above it a
/// long op, or a long chain of short ones, would hold the page's thread.
pub const DEFAULT_OFFLOAD_WORK: usize = 1 << 28;

static OFFLOAD_WORK: AtomicUsize = AtomicUsize::new(DEFAULT_OFFLOAD_WORK);

/// Sets how much work a pass runs on the calling thread before the rest goes to the pool's
/// workers (tests set 0, so that every CPU node of their small programs does).
pub fn set_offload_work(work: usize) {
    OFFLOAD_WORK.store(work, Relaxed);
}

/// Whether a CPU node of `work` goes to the pool, after `inline` units ran on the calling
/// thread in this pass.
pub(super) fn goes_to_pool(inline: usize, work: usize) -> bool {
    work > 0 && inline.saturating_add(work) > OFFLOAD_WORK.load(Relaxed)
}

/// The units of an element another kernel reads or writes, against a matmul's multiply-add
/// (one): on these cores the packed matmul does about 30 multiply-adds a nanosecond, and `exp`
/// or softmax takes 1.5 to 3 ns an element.
const ELEMENT_WORK: usize = 32;

/// Roughly how long the kernel of `primitive` takes, in multiply-adds of the packed matmul:
/// a matmul's multiply-adds, else [`ELEMENT_WORK`] for each element it reads and writes.
pub(super) fn work(primitive: &Primitive, node: &Spec, inputs: &[Spec]) -> usize {
    match primitive {
        Primitive::Matmul | Primitive::MatmulThen(_) => {
            let depth = inputs[0].shape().last().copied().unwrap_or(1);
            node.size().saturating_mul(depth)
        }
        // B is `[1, taps * C, O]`: each output element is taps * C multiply-adds.
        Primitive::PatchesThen(..) => {
            let b = inputs[1].shape();
            node.size().saturating_mul(b[b.len() - 2])
        }
        _ => (inputs.iter().map(Spec::size).sum::<usize>() + node.size())
            .saturating_mul(ELEMENT_WORK),
    }
}

/// Where a recorded node's input comes from.
pub(super) enum Source {
    /// A host copy that the batch holds until it has run.
    Host(HostWords),
    /// The output of the batch's node `k`, which runs first.
    Node(usize),
}

/// A recorded node: what its kernel reads.
struct Task {
    primitive: Primitive,
    node: Spec,
    inputs: Vec<Spec>,
    sources: Vec<(Source, Layout)>,
}

/// A recorded node's output: its storage (not kept: a node disposed meanwhile frees it), and
/// the block counted for it.
struct Output {
    storage: Weak<Storage>,
    block: HostBlock,
}

/// What the worker reads and writes: the tasks, and one result slot each.
struct Shared {
    tasks: Vec<Task>,
    results: Vec<UnsafeCell<Option<Result<Vec<u32>>>>>,
}

impl Shared {
    /// Runs the tasks in order, on a worker.
    fn run(&self) {
        for (k, task) in self.tasks.iter().enumerate() {
            let result = self.run_task(task);
            // SAFETY: only this worker touches the slots until the batch's ticket is done.
            unsafe { *self.results[k].get() = Some(result) };
        }
    }

    fn run_task(&self, task: &Task) -> Result<Vec<u32>> {
        let host = task
            .sources
            .iter()
            .map(|(source, layout)| {
                let words = match source {
                    Source::Host(words) => &words[..],
                    // SAFETY: node `j` ran before this one, on this worker.
                    Source::Node(j) => match unsafe { &*self.results[*j].get() } {
                        Some(Ok(words)) => &words[..],
                        _ => return Err(Error::Device("an input's CPU kernel failed".into())),
                    },
                };
                Ok(HostInput { words, layout })
            })
            .collect::<Result<Vec<_>>>()?;
        cpu::eval(&task.primitive, &task.node, &task.inputs, &host)
    }
}

/// The batch's data, handed to a worker by address.
struct SharedPtr(*const Shared);

// SAFETY: the worker only reads `Shared` (through shared references: it clones no `Rc` and
// borrows no `RefCell`) and writes its result slots, while the page's thread leaves it alone
// until the ticket is done (see the module documentation).
unsafe impl Send for SharedPtr {}

/// A batch handed to the pool.
struct InFlight {
    shared: Box<Shared>,
    outputs: Vec<Output>,
    storages: HashSet<*const Storage>,
    ticket: pool::Ticket,
}

impl Drop for InFlight {
    /// The worker may still be reading `shared`: wait for it (only a runtime dropped with
    /// work in flight gets here unfinished).
    fn drop(&mut self) {
        self.ticket.spin_until_done();
    }
}

/// The recording batch and the batches in flight, oldest first.
#[derive(Default)]
pub(super) struct CpuBatches {
    tasks: Vec<Task>,
    outputs: Vec<Output>,
    in_flight: Vec<InFlight>,
    /// Storages whose kernel failed, with its error, for whoever reads them.
    failed: Vec<(Weak<Storage>, Error)>,
}

/// Whether a CPU batch computes a storage.
pub(super) enum Computing {
    No,
    /// The recording batch's node `k` does.
    Recorded(usize),
    InFlight,
}

impl CpuBatches {
    pub(super) fn computing(&self, storage: &Rc<Storage>) -> Computing {
        let ptr = Rc::as_ptr(storage);
        if let Some(k) = self.outputs.iter().position(|o| o.storage.as_ptr() == ptr) {
            return Computing::Recorded(k);
        }
        if self.in_flight.iter().any(|b| b.storages.contains(&ptr)) {
            return Computing::InFlight;
        }
        Computing::No
    }

    /// The error of a storage whose kernel failed.
    pub(super) fn failure(&self, storage: &Rc<Storage>) -> Option<Error> {
        let ptr = Rc::as_ptr(storage);
        self.failed
            .iter()
            .find(|(s, _)| s.as_ptr() == ptr)
            .map(|(_, e)| e.clone())
    }

    /// Records a node; its storage (returned) is computing until the batch has run.
    pub(super) fn record(
        &mut self,
        (primitive, node, inputs): (Primitive, Spec, Vec<Spec>),
        sources: Vec<(Source, Layout)>,
        block: HostBlock,
    ) -> Rc<Storage> {
        let storage = Rc::new(Storage::computing(node.dtype().words(node.size())));
        self.tasks.push(Task {
            primitive,
            node,
            inputs,
            sources,
        });
        self.outputs.push(Output {
            storage: Rc::downgrade(&storage),
            block,
        });
        storage
    }

    /// Hands the recording batch to the pool.
    pub(super) fn submit(&mut self) {
        if self.tasks.is_empty() {
            return;
        }
        let tasks = std::mem::take(&mut self.tasks);
        let results = tasks.iter().map(|_| UnsafeCell::new(None)).collect();
        let shared = Box::new(Shared { tasks, results });
        let ptr = SharedPtr(&raw const *shared);
        let ticket = pool::offload(Box::new(move || {
            let ptr = ptr;
            // SAFETY: `shared` lives (in `in_flight`) until the ticket is done.
            unsafe { (*ptr.0).run() }
        }));
        let outputs = std::mem::take(&mut self.outputs);
        let storages = outputs.iter().map(|o| o.storage.as_ptr()).collect();
        self.in_flight.push(InFlight {
            shared,
            outputs,
            storages,
            ticket,
        });
    }

    /// The ticket of the first batch in flight that computes one of `storages`, or of the
    /// oldest batch in flight when `storages` is empty.
    pub(super) fn ticket_for(&self, storages: &[Rc<Storage>]) -> Option<pool::Ticket> {
        self.in_flight
            .iter()
            .find(|b| {
                storages.is_empty() || storages.iter().any(|s| b.storages.contains(&Rc::as_ptr(s)))
            })
            .map(|b| b.ticket.clone())
    }

    /// Gives the storages of every batch that has run their words. A kernel's failure is
    /// returned if it concerns one of `needs`, and kept for whoever reads the others.
    pub(super) fn settle(&mut self, needs: &[Rc<Storage>]) -> Result<()> {
        self.failed.retain(|(s, _)| s.strong_count() > 0);
        let mut failure = None;
        while let Some(k) = self.in_flight.iter().position(|b| b.ticket.is_done()) {
            let mut batch = self.in_flight.remove(k);
            let outputs = std::mem::take(&mut batch.outputs);
            for (slot, output) in batch.shared.results.iter_mut().zip(outputs) {
                let Output { storage, mut block } = output;
                let Some(storage) = storage.upgrade() else {
                    continue;
                };
                match slot.get_mut().take() {
                    Some(Ok(words)) if words.len() == storage.len() => {
                        block.fill(words);
                        storage.set_computed(block);
                    }
                    result => {
                        let err = result.and_then(Result::err).unwrap_or_else(|| {
                            Error::Device(
                                "a CPU kernel queued on the pool gave no output of its length"
                                    .into(),
                            )
                        });
                        if needs.iter().any(|s| Rc::ptr_eq(s, &storage)) {
                            failure.get_or_insert(err.clone());
                        }
                        self.failed.push((Rc::downgrade(&storage), err));
                    }
                }
            }
        }
        failure.map_or(Ok(()), Err)
    }
}
