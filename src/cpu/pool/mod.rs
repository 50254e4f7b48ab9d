//! The CPU kernels' thread pool: one job at a time, split into numbered parts that the calling
//! thread and the pool's workers claim in turn, so a part a slow worker never woke for is done
//! by whoever is free. The caller returns only when every part has run, so a part may borrow
//! the caller's slices (a kernel's inputs and its output's disjoint pieces).
//!
//! Workers are started by the layer above: Web Workers on the page's shared memory in the
//! threaded wasm build (`js/threads.rs`), threads natively (`start_native`). The single-threaded
//! wasm build has none, and every job runs on the calling thread. A job submitted while
//! another runs (a part that splits again, or a second native caller) also runs on its
//! caller's thread, so the pool never waits on itself.

mod queue;
mod split;
mod wait;

pub use queue::{Ticket, Work, WorkerDied, can_offload, offload, offloaded};
pub use split::{
    MIN_PART_WORK, even_rows_per_part, fill_parts, part_len, parts_for, rows_per_part,
    try_fill_parts, try_zeroed_parts, zeroed_parts,
};

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicUsize, Ordering::SeqCst};

/// One job: its parts' function and how far the parts have been claimed and finished.
struct Job<'a> {
    part: &'a (dyn Fn(usize) + Sync),
    parts: usize,
    next: AtomicUsize,
    done: AtomicUsize,
    /// Natively, a part that panicked (its message is re-raised on the caller's thread).
    panicked: AtomicBool,
    /// Workers that have come for the job; only the first `max_helpers` claim parts, so that
    /// no more threads work on it than it was split for (a page's thread and every worker
    /// would be one more than the cores).
    helpers: AtomicUsize,
    max_helpers: usize,
}

impl Job<'_> {
    /// Claims and runs parts until none is left.
    fn run_parts(&self) {
        loop {
            let k = self.next.fetch_add(1, SeqCst);
            if k >= self.parts {
                return;
            }
            if !run_part(self.part, k) {
                self.panicked.store(true, SeqCst);
            }
            self.done.fetch_add(1, SeqCst);
        }
    }
}

/// Runs part `k`; false if it panicked (natively; in wasm a panic aborts the module).
fn run_part(part: &(dyn Fn(usize) + Sync), k: usize) -> bool {
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| part(k))).is_ok()
    }
    #[cfg(target_arch = "wasm32")]
    {
        part(k);
        true
    }
}

/// The job being run, or null. A worker reads it only while counted in `INSIDE`, and the
/// submitter clears it and waits for `INSIDE` to fall to zero before its job goes out of scope.
static CURRENT: AtomicPtr<Job<'static>> = AtomicPtr::new(std::ptr::null_mut());
/// Bumped for every job: what workers sleep on.
static GENERATION: AtomicU32 = AtomicU32::new(0);
/// Workers between reading `CURRENT` and being done with it.
static INSIDE: AtomicUsize = AtomicUsize::new(0);
/// Whether a job is being run: a second submitter runs its job alone.
static BUSY: AtomicBool = AtomicBool::new(false);
/// Workers that have started their loop.
static WORKERS: AtomicUsize = AtomicUsize::new(0);
/// How many times a worker that has just worked checks for a new job before it sleeps: about
/// half a millisecond. A kernel's next job often comes after some serial work of its caller
/// (packing, allocating the next output), and a worker woken from its sleep starts late: in
/// the peer benchmark's CNN on 2 threads, helpers started 1.3 ms late in sum per forward with
/// 2^15 checks in wasm, 0.5 ms with 2^18, 0.2 ms with 2^20. A check in wasm is an atomic load
/// (about half a nanosecond here); natively `spin_loop` is a pause instruction, some 30 times
/// longer.
#[cfg(target_arch = "wasm32")]
const SPINS_BEFORE_SLEEP: u32 = 1 << 20;
#[cfg(not(target_arch = "wasm32"))]
const SPINS_BEFORE_SLEEP: u32 = 1 << 15;
/// The most threads a job is split for (the caller's and the workers'), as the page asked.
static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);

/// The threads a job may be split over now: the caller and the workers that have started,
/// at most the limit.
pub fn threads() -> usize {
    (1 + WORKERS.load(SeqCst)).min(LIMIT.load(SeqCst)).max(1)
}

/// Caps the threads jobs are split for (`initRuntime`'s `threads`); 1 runs every kernel on
/// its caller's thread.
pub fn set_limit(threads: usize) {
    LIMIT.store(threads.max(1), SeqCst);
}

/// Runs `part(k)` for every `k` in `0..parts`, spread over the pool and this thread, and
/// returns once all have run.
pub fn run(parts: usize, part: &(dyn Fn(usize) + Sync)) {
    if parts <= 1 || threads() == 1 || BUSY.swap(true, SeqCst) {
        (0..parts).for_each(part);
        return;
    }
    let job = Job {
        part,
        parts,
        next: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
        panicked: AtomicBool::new(false),
        helpers: AtomicUsize::new(0),
        max_helpers: threads() - 1,
    };
    // SAFETY: only the lifetime is erased; `CURRENT` is cleared, and every worker that read it
    // has left (`INSIDE` is zero), before `job` goes out of scope below.
    let erased: *const Job<'static> = (&raw const job).cast();
    CURRENT.store(erased.cast_mut(), SeqCst);
    publish(job.max_helpers);
    job.run_parts();
    wait::spin_until(|| job.done.load(SeqCst) == parts || FAILED.load(SeqCst));
    assert!(
        !FAILED.load(SeqCst),
        "a CPU pool worker failed (its console has the error): its part of the job never ends"
    );
    CURRENT.store(std::ptr::null_mut(), SeqCst);
    wait::spin_until(|| INSIDE.load(SeqCst) == 0);
    BUSY.store(false, SeqCst);
    assert!(
        !job.panicked.load(SeqCst),
        "a part of a CPU kernel panicked"
    );
}

/// Wakes the workers ahead of a job about to be published (a matmul packs a panel of B before
/// its rows are split): they watch for it a while instead of sleeping through the packing, as
/// waking one from its sleep takes longer than a small product's share.
pub fn wake_ahead() {
    if WORKERS.load(SeqCst) > 0 && threads() > 1 {
        publish(threads() - 1);
    }
}

/// Tells the workers something is new (a job, queued work, or a job about to come) that
/// `needed` of them can work on: bumps the word they sleep and watch on, and wakes only as
/// many sleepers as the workers watching it fall short of. A worker woken for nothing takes a
/// core from the threads that work: with 2 threads on 2 cores the page's thread and one worker
/// run a job, and a third thread awake leaves one of them waiting for the scheduler's next
/// tick (with this and a driver that sleeps at once, below, the peer benchmark's CNN forward
/// took 11.0-11.2 ms median against 11.6-11.8 in alternating runs of one page).
fn publish(needed: usize) {
    GENERATION.fetch_add(1, SeqCst);
    let sleepers = needed.saturating_sub(WATCHING.load(SeqCst));
    if sleepers > 0 {
        wait::wake(&GENERATION, u32::try_from(sleepers).unwrap_or(u32::MAX));
    }
}

/// Workers watching `GENERATION` (spinning on it before they sleep). One that stops watching
/// just as a job is published is not lost: it sleeps only while the word is unchanged.
static WATCHING: AtomicUsize = AtomicUsize::new(0);

/// Set when a worker died in a part (in wasm a panic aborts its instance): the part it held will
/// never finish, so the caller stops waiting and fails instead of spinning for ever.
static FAILED: AtomicBool = AtomicBool::new(false);

/// Notes that a worker died (its script calls this when `work` throws).
pub fn worker_failed() {
    FAILED.store(true, SeqCst);
}

/// Counts a worker in, before it says it is ready: from then on jobs are split for it.
pub fn join() {
    WORKERS.fetch_add(1, SeqCst);
}

/// A worker's loop (after [`join`]): sleeps until a job is published, claims its parts, and
/// sleeps again. Never returns.
pub fn work() -> ! {
    let mut seen = GENERATION.load(SeqCst);
    let mut sleep_at_once = false;
    loop {
        // A kernel often publishes jobs back to back (a matmul's panels): a worker that has
        // just finished watches for the next a while before it sleeps, as waking costs more.
        // One turned away from a full job sleeps at once: the threads the job was split for
        // are busy, one a core, and its watching would take a core from one of them (with 2
        // threads, the page's and one worker run a job while the other worker looks on).
        // So does one that has just driven queued work: the page's thread wakes for its
        // ticket and needs a core, and the worker that helped is already watching.
        if !sleep_at_once {
            WATCHING.fetch_add(1, SeqCst);
            wait::spin_while(&GENERATION, seen, SPINS_BEFORE_SLEEP);
            WATCHING.fetch_sub(1, SeqCst);
        }
        wait::wait_while(&GENERATION, seen);
        seen = GENERATION.load(SeqCst);
        // Counted before reading `CURRENT`: the submitter, which clears `CURRENT` before it
        // reads `INSIDE`, either sees this worker or this worker sees null.
        INSIDE.fetch_add(1, SeqCst);
        let job = CURRENT.load(SeqCst);
        let mut turned_away = false;
        if !job.is_null() {
            // SAFETY: the job outlives this worker's use of it (see `run`).
            let job = unsafe { &*job };
            turned_away = job.helpers.fetch_add(1, SeqCst) >= job.max_helpers;
            if !turned_away {
                job.run_parts();
            }
        }
        INSIDE.fetch_sub(1, SeqCst);
        let drove = queue::take_work();
        sleep_at_once = turned_away || drove;
    }
}

/// Starts `count` native worker threads (tests and the native benchmark; a process has one
/// pool, and workers run until it exits).
#[cfg(not(target_arch = "wasm32"))]
pub fn start_native(count: usize) {
    static STARTED: std::sync::Mutex<usize> = std::sync::Mutex::new(0);
    let mut started = STARTED.lock().unwrap_or_else(|e| e.into_inner());
    while *started < count {
        std::thread::Builder::new()
            .name(format!("tandem-cpu-{started}"))
            .spawn(|| {
                join();
                work()
            })
            .expect("a CPU pool thread starts");
        *started += 1;
    }
    // Wait until they have joined, so that the next job is split.
    wait::spin_until(|| WORKERS.load(SeqCst) >= *started);
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
