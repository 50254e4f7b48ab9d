//! Whole pieces of CPU work handed to the pool, so that the thread that submits them (the
//! page's) is free while they run: one worker at a time takes the queue's work in order and
//! runs it, and the kernels in it split their own jobs over the other workers as usual
//! ([`super::run`]). The submitter holds a [`Ticket`] and awaits it.
//!
//! Only the threaded build (and natively, a started pool) has workers to hand work to; the
//! single-threaded build never queues anything ([`can_offload`] is false).

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering::SeqCst};

use super::wait;

/// Work for a worker: it must not touch the submitter's thread-bound state (its `Rc`s, its
/// `RefCell`s), which is why it is `Send`.
pub type Work = Box<dyn FnOnce() + Send>;

/// The submitter's hold on queued work: whether it has run, and a future for when it has.
#[derive(Clone, Debug)]
pub struct Ticket(Arc<AtomicU32>);

/// The queue's work failed to run: a worker died in it (its console has the error).
#[derive(Debug)]
pub struct WorkerDied;

impl Ticket {
    /// Whether the work has run.
    pub fn is_done(&self) -> bool {
        self.0.load(SeqCst) != 0
    }

    /// Resolves once the work has run, or fails if a worker died (a part it held, or this
    /// work, then never ends). The page's thread awaits without blocking.
    pub async fn done(&self) -> Result<(), WorkerDied> {
        loop {
            if self.is_done() {
                return Ok(());
            }
            if super::FAILED.load(SeqCst) {
                return Err(WorkerDied);
            }
            wait::until_changed(&self.0, 0).await;
        }
    }

    /// Spins until the work has run (for a submitter that must not return before it has, such
    /// as one dropping what the work reads).
    pub fn spin_until_done(&self) {
        wait::spin_until(|| self.is_done() || super::FAILED.load(SeqCst));
    }
}

/// A lock that only ever spins: the page's thread may not sleep in wasm, and every critical
/// section here is a push or a pop.
struct SpinLock<T> {
    held: AtomicBool,
    value: std::cell::UnsafeCell<T>,
}

// SAFETY: `value` is reached only by the thread that holds `held`.
unsafe impl<T: Send> Sync for SpinLock<T> {}

impl<T> SpinLock<T> {
    const fn new(value: T) -> SpinLock<T> {
        SpinLock {
            held: AtomicBool::new(false),
            value: std::cell::UnsafeCell::new(value),
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        wait::spin_until(|| !self.held.swap(true, SeqCst));
        // SAFETY: this thread holds the lock until the store below.
        let result = f(unsafe { &mut *self.value.get() });
        self.held.store(false, SeqCst);
        result
    }
}

static QUEUE: SpinLock<VecDeque<(Work, Ticket)>> = SpinLock::new(VecDeque::new());
/// How many pieces of work are queued, read without the lock.
static QUEUED: AtomicUsize = AtomicUsize::new(0);
/// How many pieces of work have been queued since the process started (for tests).
static OFFLOADED: AtomicUsize = AtomicUsize::new(0);
/// Whether a worker is taking the queue's work; the others help with its kernels' jobs.
static DRIVING: AtomicBool = AtomicBool::new(false);

/// Whether work can be handed to the pool: it has a worker (however few threads a job may
/// be split for, a worker spares the submitter's thread).
pub fn can_offload() -> bool {
    super::WORKERS.load(SeqCst) > 0
}

/// How many pieces of work have been queued so far: tests check that theirs went to the pool.
pub fn offloaded() -> usize {
    OFFLOADED.load(SeqCst)
}

/// Queues `work` behind the work queued before it and wakes the pool.
pub fn offload(work: Work) -> Ticket {
    let ticket = Ticket(Arc::new(AtomicU32::new(0)));
    QUEUE.with(|queue| queue.push_back((work, ticket.clone())));
    QUEUED.fetch_add(1, SeqCst);
    OFFLOADED.fetch_add(1, SeqCst);
    // One worker takes the queue; its kernels' jobs wake the helpers they need.
    super::publish(1);
    ticket
}

/// A worker's turn at the queue (after each wake-up): unless another worker is taking it,
/// runs queued work until none is left, then looks once more, so that work queued just as
/// it stopped is not left for the next wake-up.
pub(super) fn take_work() -> bool {
    let mut drove = false;
    while QUEUED.load(SeqCst) > 0 && !DRIVING.swap(true, SeqCst) {
        drove = true;
        while let Some((work, ticket)) = QUEUE.with(VecDeque::pop_front) {
            QUEUED.fetch_sub(1, SeqCst);
            work();
            ticket.0.store(1, SeqCst);
            wait::wake_all(&ticket.0);
        }
        DRIVING.store(false, SeqCst);
    }
    drove
}
