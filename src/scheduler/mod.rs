//! The scheduler: runs the graph behind the arrays that `evaluate` and the reads ask for, for
//! every caller at once.
//!
//! Pages start calls without awaiting them, so calls overlap: a read while an `evaluate`
//! runs, five reads in one `Promise.all`. The runtime therefore has **one** scheduler state
//! ([`state::State`]), not one per call: one recording batch that every caller records into,
//! one set of storages that its unsubmitted work writes, and at most one readback in flight
//! per storage, which every reader of it awaits. The queue then runs work in the order it was
//! recorded, whoever recorded it, and every interleaving of calls gives the values that the
//! same calls awaited in program order give.
//!
//! An array's data goes through these states:
//! - **lazy**: the node has no data;
//! - **recorded**: its GPU work is in the recording batch (the storage is a pending write);
//!   the node keeps its inputs, because the batch may yet be discarded, making it lazy again;
//! - **submitted**: the batch went to the queue; the node lets go of its inputs, and any later
//!   work that reads the buffer is queued after the work that writes it;
//! - **mapping**: a readback is in flight, recorded after the write (or, when no unsubmitted
//!   work writes the storage, in an early batch submitted ahead of the recorded work);
//! - **on the host**: the host copy, set once, only from a mapping that has resolved. Both
//!   copies then stay valid (data is immutable) until memory pressure drops the GPU one.
//!
//! A GPU buffer is **active** while a storage, the recording batch or a readback holds it;
//! the batch holds every buffer its work uses until it is submitted, and a readback holds its
//! staging buffer until it is unmapped. Only then does the buffer go back to the **cache**,
//! so a cache trim, `clearCache` or a memory-limit retry never reuses or destroys a buffer
//! that unsubmitted work uses; WebGPU defers the destruction of a buffer that submitted work
//! still uses. Evicted buffers are **destroyed**.
//!
//! The rules that keep this sound:
//! - State is only touched synchronously; a caller keeps nothing from it across an await,
//!   and after every await it walks its graph again from its arrays ([`pass::Pass`]), so it
//!   sees what other callers ran, submitted, read back or discarded meanwhile.
//! - Nothing is submitted while a buffer it uses is unconfirmed (`memory::device_errors`).
//!   Flushes take turns; a flush that finds a buffer the GPU failed to create discards the
//!   whole recording batch, so every node in it becomes lazy and runs again.
//! - A memory-limit failure while recording flushes, waits for the queue and retries; only a
//!   retry that makes no progress fails, and every live array keeps its data.

mod cpu_batch;
mod pass;
mod state;

pub use cpu_batch::{DEFAULT_OFFLOAD_WORK, set_offload_work};

use std::cell::RefCell;
use std::rc::Rc;

use futures_util::lock::Mutex;

use crate::array::Array;
use crate::error::{Error, Result};
use crate::gpu::GpuContext;
use crate::gpu::device::readback::wait_idle;
use crate::memory::{allocator, device_errors};
use crate::observe::profile::Profiler;
use crate::storage::{HostWords, Storage, drop_redundant_copies};
use crate::stream::Device;
use pass::{Pass, Step};
use state::State;

/// The runtime's scheduler; see the module documentation.
pub struct Scheduler {
    gpu: Option<Rc<GpuContext>>,
    profiler: Rc<Profiler>,
    state: RefCell<State>,
    /// Held by the flush that is confirming buffers and submitting.
    flushing: Mutex<()>,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler").finish_non_exhaustive()
    }
}

impl Scheduler {
    pub fn new(gpu: Option<Rc<GpuContext>>, profiler: Rc<Profiler>) -> Scheduler {
        // Under memory pressure the allocator may drop GPU copies that the host can
        // re-derive; it knows nothing of storages, so the scheduler tells it how.
        allocator::set_reclaim(|| drop_redundant_copies(Device::Gpu));
        Scheduler {
            state: RefCell::new(State::new(gpu.as_ref(), &profiler)),
            gpu,
            profiler,
            flushing: Mutex::new(()),
        }
    }

    /// Evaluates `outputs` and every unevaluated node they depend on, and resolves once their
    /// GPU work has finished (as MLX's `eval` returns once results are computed).
    pub async fn evaluate(&self, outputs: &[Array]) -> Result<()> {
        let since = self.gpu_failures();
        if let Err(err) = self.drive(outputs, false).await {
            return Err(self.explain(err).await);
        }
        let on_gpu_only = outputs
            .iter()
            .filter_map(Array::storage)
            .any(|s| !s.on_host());
        if !on_gpu_only {
            // Every output is on the host: a later GPU error cannot spoil it.
            return Ok(());
        }
        self.wait_idle().await?;
        self.check_gpu_errors(since).await
    }

    /// GPU errors found so far (see `gpu::device::errors`).
    fn gpu_failures(&self) -> u64 {
        self.gpu.as_ref().map_or(0, |gpu| gpu.errors.failures())
    }

    /// A device error of a call whose device turns out to be lost (a readback fails before
    /// the loss is reported) becomes the loss's own error, which says what to do.
    async fn explain(&self, err: Error) -> Error {
        if !matches!(err, Error::Device(_)) {
            return err;
        }
        let Some(gpu) = &self.gpu else {
            return err;
        };
        match gpu.errors.check(gpu.errors.failures()).await {
            Err(lost) if gpu.errors.lost_reason().is_some() => lost,
            _ => err,
        }
    }

    /// Takes in the GPU's error reports so far, before readbacks are accepted: a readback of
    /// a buffer that rejected work should have written is then discarded, not kept.
    async fn collect_gpu_errors(&self) {
        if let Some(gpu) = &self.gpu {
            gpu.errors.collect().await;
        }
    }

    /// Fails if the GPU reported an error since `since`: work of this call may be spoiled.
    async fn check_gpu_errors(&self, since: u64) -> Result<()> {
        match &self.gpu {
            Some(gpu) => gpu.errors.check(since).await,
            None => Ok(()),
        }
    }

    /// Resolves once all work started so far has finished: recorded work is submitted, the
    /// queue is idle, and every readback in flight has given its storage a host copy.
    pub async fn synchronize(&self) -> Result<()> {
        self.flush().await?;
        self.finish_cpu().await?;
        let Some(gpu) = &self.gpu else {
            return Ok(());
        };
        let since = self.gpu_failures();
        loop {
            self.flush().await?;
            wait_idle(gpu).await?;
            let mapping = self.state.borrow().oldest_mapping(gpu);
            let Some(mapping) = mapping else {
                return self.check_gpu_errors(since).await;
            };
            mapping.await;
            self.collect_gpu_errors().await;
            // Readers of these storages meet (and count) their own failures.
            allocator::as_retryable(|| self.state.borrow_mut().settle(&[]))?;
        }
    }

    /// Evaluates `arrays` and returns each one's storage words on the host. Those that live
    /// only on the GPU are read back together, after one submit.
    pub async fn read(&self, arrays: &[Array]) -> Result<Vec<HostWords>> {
        if let Err(err) = self.drive(arrays, true).await {
            return Err(self.explain(err).await);
        }
        // drive() returned with every storage on the host, and nothing ran since. Readbacks
        // were accepted only after the GPU's error reports were in (`wait_for_any`), so no
        // host copy here came from work the GPU rejected.
        arrays
            .iter()
            .map(|a| {
                a.storage()
                    .and_then(|s| s.host_words())
                    .ok_or_else(|| Error::Device("read: the data left the host".into()))
            })
            .collect()
    }

    /// Evaluates `array` and returns its elements' words, row-major.
    pub async fn read_words(&self, array: &Array) -> Result<HostWords> {
        let words = self.read(std::slice::from_ref(array)).await?.remove(0);
        let data = array.data().expect("read() leaves the array evaluated");
        if data.is_dense(array.shape(), array.dtype()) {
            return Ok(words);
        }
        let host = crate::cpu::HostInput {
            words: &words,
            layout: &data.layout,
        };
        let spec = crate::cpu::Spec::new(array.dtype(), array.shape());
        let words = crate::cpu::contiguous(&spec, &host)?;
        Ok(Rc::new(allocator::host_block(words)?))
    }

    /// Runs passes over the graph behind `outputs` until it has run and its work is
    /// submitted, and, with `to_host`, until every output has a host copy.
    async fn drive(&self, outputs: &[Array], to_host: bool) -> Result<()> {
        // Before anything runs: fusion folds only nodes that nothing else can see.
        crate::transforms::fuse::fuse(outputs, crate::transforms::fuse::When::Repeated);
        let mut retried = false;
        loop {
            let (ran, step) = self.pass(outputs, to_host);
            // A flush's own failure is final (`flush` retries once itself); a pass or a
            // readback past the memory limit is retried below.
            let attempt = match step {
                Ok(Step::Ran) => {
                    self.flush().await?;
                    if self.is_done(outputs, to_host) {
                        return Ok(());
                    }
                    Ok(())
                }
                Ok(Step::Wait(needs)) => {
                    self.flush().await?;
                    let received = self.wait_for_any(&needs).await;
                    if received.is_ok() {
                        retried = false;
                    }
                    received
                }
                Ok(Step::Flush) => {
                    self.flush().await?;
                    Ok(())
                }
                Err(err) => Err(err),
            };
            match attempt {
                Ok(()) => {}
                Err(Error::MemoryLimit(message)) => {
                    if retried && ran == 0 {
                        allocator::record_oom();
                        return Err(Error::MemoryLimit(message));
                    }
                    // Submitting lets the batch release the buffers it holds; waiting lets
                    // in-flight work (the GPU's, and the CPU pool's) finish with them. Then
                    // try again, once per stall.
                    self.flush().await?;
                    self.wait_idle().await?;
                    self.finish_cpu().await?;
                    allocator::record_retry();
                    retried = true;
                }
                Err(other) => return Err(other),
            }
        }
    }

    /// One synchronous pass; returns how many nodes ran, with how it ended.
    fn pass(&self, outputs: &[Array], to_host: bool) -> (usize, Result<Step>) {
        let mut state = self.state.borrow_mut();
        let mut pass = Pass {
            state: &mut state,
            gpu: self.gpu.as_deref(),
            profiler: &self.profiler,
            ran: 0,
            inline_work: 0,
        };
        let step = allocator::as_retryable(|| pass.run(outputs, to_host));
        (pass.ran, step)
    }

    /// Whether every output has run and, with `to_host`, has a host copy.
    fn is_done(&self, outputs: &[Array], to_host: bool) -> bool {
        outputs
            .iter()
            .all(|a| a.storage().is_some_and(|s| !to_host || s.on_host()))
    }

    /// Confirms the buffers of the recorded work and submits it, after any flush already
    /// under way. If the GPU could not create a buffer, the work is discarded (its nodes are
    /// lazy again), the cache is emptied and this returns `Ok`, so callers run them again; a
    /// second failure in a row is a `MemoryLimitError`.
    async fn flush(&self) -> Result<()> {
        let _turn = self.flushing.lock().await;
        // The CPU's recorded kernels go to the pool's workers, which run them while this waits.
        self.state.borrow_mut().cpu.submit();
        loop {
            if !device_errors::has_unverified() {
                let mut state = self.state.borrow_mut();
                if state.has_unsubmitted_work() {
                    state.submit();
                    state.device_ooms = 0;
                }
                if let Some(gpu) = &self.gpu {
                    gpu.release_destroyed();
                }
                return Ok(());
            }
            // Work recorded while this waits is confirmed by the next turn of the loop.
            if let Err(err) = device_errors::verify().await {
                return self.recover_from_device_oom(err).await;
            }
        }
    }

    async fn recover_from_device_oom(&self, err: Error) -> Result<()> {
        let failures = {
            let mut state = self.state.borrow_mut();
            state.discard();
            state.device_ooms += 1;
            state.device_ooms
        };
        if failures > 1 {
            self.state.borrow_mut().device_ooms = 0;
            allocator::record_oom();
            return Err(err);
        }
        allocator::clear_cache();
        self.wait_idle().await?;
        allocator::record_retry();
        Ok(())
    }

    /// Waits until the first of `storages` that has a readback in flight is mapped, then
    /// gives every mapped readback's storage its host copy.
    async fn wait_for_any(&self, storages: &[Rc<Storage>]) -> Result<()> {
        let queued = self.state.borrow().cpu.ticket_for(storages);
        if let Some(ticket) = queued {
            ticket.done().await.map_err(worker_died)?;
            return allocator::as_retryable(|| self.state.borrow_mut().settle(storages));
        }
        let mapping = match &self.gpu {
            Some(gpu) => self.state.borrow().first_mapping(gpu, storages),
            None => None,
        };
        if let Some(mapping) = mapping {
            mapping.await;
        }
        self.collect_gpu_errors().await;
        // A failure is counted as an OOM only if the retry in `drive` fails too.
        allocator::as_retryable(|| self.state.borrow_mut().settle(storages))
    }

    /// Waits for every CPU batch in flight, and gives its storages their words.
    async fn finish_cpu(&self) -> Result<()> {
        loop {
            let queued = self.state.borrow().cpu.ticket_for(&[]);
            let Some(ticket) = queued else {
                return Ok(());
            };
            ticket.done().await.map_err(worker_died)?;
            // Readers of these storages meet (and count) their own failures.
            allocator::as_retryable(|| self.state.borrow_mut().settle(&[]))?;
        }
    }

    async fn wait_idle(&self) -> Result<()> {
        match &self.gpu {
            Some(gpu) => wait_idle(gpu).await,
            None => Ok(()),
        }
    }
}

/// A pool worker died with CPU work of this runtime queued.
fn worker_died(_: crate::cpu::pool::WorkerDied) -> Error {
    Error::Device(
        "a CPU pool worker died (its console has the error): the CPU work queued on the pool \
         cannot finish"
            .into(),
    )
}
