//! Command batching (buffers and uploads are in `buffers.rs`, readback in `readback.rs`, the
//! parameter ring in `params.rs`).
//!
//! Dispatches are recorded into one command encoder and submitted together: on WebGPU a submit
//! costs several times a dispatch, so batching is what keeps small ops cheap.

use futures_channel::oneshot;

use crate::error::Result;
use std::rc::Rc;

use crate::gpu::device::params::{PARAM_SLOT, PARAM_SLOTS};
use crate::gpu::device::readback::{PendingMap, Readback, map_read};
use crate::gpu::device::timestamps::PROFILED_DISPATCHES;

use crate::gpu::GpuContext;
use crate::gpu::device::pipelines::Kernel;
use crate::memory::allocator::{GpuBuffer, Usage, alloc_gpu};
use crate::observe::clock::now_ms;
use crate::observe::profile::{Dispatch, Profiler};

thread_local! {
    static DISPATCHES_PER_SUBMIT: std::cell::Cell<usize> =
        const { std::cell::Cell::new(DEFAULT_DISPATCHES_PER_SUBMIT) };
}

/// How many dispatches a batch holds before it is submitted. `cargo xtask bench batching`
/// on SwiftShader found 16-64 fastest for chains of small ops, 1.1-1.7x faster than 1024
/// (the GPU starts sooner) and 1.5-2.5x faster than 1 (fewer submits); see the README.
pub const DEFAULT_DISPATCHES_PER_SUBMIT: usize = 64;

/// The fewest bytes a batch allocates before it is submitted for memory's sake (see
/// [`CommandBatch::holds_much_memory`]).
pub const MEMORY_PER_SUBMIT: u64 = 1 << 20;

/// The most dispatches a batch holds before it is submitted. Batches are also submitted
/// before any CPU node runs and at the end of each evaluation.
pub fn dispatches_per_submit() -> usize {
    DISPATCHES_PER_SUBMIT.with(std::cell::Cell::get)
}

/// Sets [`dispatches_per_submit`], clamped to 1 ..= the parameter ring's size.
pub fn set_dispatches_per_submit(count: usize) {
    DISPATCHES_PER_SUBMIT.with(|c| c.set(count.clamp(1, PARAM_SLOTS)));
}

/// Dispatches recorded but not yet submitted. The runtime has one recording batch (the
/// scheduler's), so no other batch takes parameter blocks while this one holds staged ones.
pub struct CommandBatch {
    gpu: Rc<GpuContext>,
    encoder: Option<wgpu::CommandEncoder>,
    /// The compute pass dispatches are recorded into; it must end before the encoder records
    /// anything else or finishes.
    pass: Option<wgpu::ComputePass<'static>>,
    /// This batch's parameter blocks, padded to a block each, and the ring block of each.
    staged: Vec<u32>,
    slots: Vec<usize>,
    /// Readbacks recorded in this batch, mapped once it is submitted.
    maps: Vec<PendingMap>,
    /// The profiler this batch reports to while it records, if any.
    profiler: Option<Rc<Profiler>>,
    /// Set while a profile records: from the first dispatch after the profiler started.
    profile: Option<BatchProfile>,
    /// Buffers the recorded work uses. Holding them until the submit keeps the allocator from
    /// handing them out again while this work has yet to run.
    keep_alive: Vec<GpuBuffer>,
    /// The monitor's timestamp slot of this batch (see `gpu::device::timestamps`).
    stamp: Option<usize>,
    /// The allocator's total of GPU bytes allocated when this batch began recording.
    allocated_before: u64,
}

/// What a batch records for a profile: each dispatch's kernel and node and, where the adapter
/// has `timestamp-query`, a begin and an end timestamp per dispatch.
struct BatchProfile {
    kernels: Vec<Dispatch>,
    queries: Option<wgpu::QuerySet>,
    /// The op and shape of the node now recording dispatches.
    node: (&'static str, Vec<usize>),
}

impl CommandBatch {
    pub fn new(gpu: Rc<GpuContext>) -> CommandBatch {
        CommandBatch {
            gpu,
            encoder: None,
            pass: None,
            staged: Vec::new(),
            slots: Vec::new(),
            maps: Vec::new(),
            profiler: None,
            profile: None,
            keep_alive: Vec::new(),
            stamp: None,
            allocated_before: 0,
        }
    }

    /// A batch that reports its dispatches to `profiler` whenever that is recording.
    pub fn profiled(gpu: Rc<GpuContext>, profiler: Rc<Profiler>) -> CommandBatch {
        let mut batch = CommandBatch::new(gpu);
        batch.profiler = Some(profiler);
        batch
    }

    /// Starts recording a profile of this batch if its profiler records and it has not yet.
    fn start_profile(&mut self) {
        if self.profile.is_some() || !self.profiler.as_ref().is_some_and(|p| p.is_active()) {
            return;
        }
        let queries = self.gpu.timestamps.as_ref().map(|t| t.query_set().clone());
        self.profile = Some(BatchProfile {
            kernels: Vec::new(),
            queries,
            node: ("", Vec::new()),
        });
    }

    /// Names the node whose dispatches follow, for a profile (nothing when none records).
    pub fn label(&mut self, op: &'static str, shape: &[usize]) {
        self.start_profile();
        if let Some(profile) = &mut self.profile {
            profile.node = (op, shape.to_vec());
        }
    }

    /// The open encoder, started on first use. Any open pass ends first: the encoder cannot
    /// record anything else while a pass is open.
    fn encoder(&mut self) -> &mut wgpu::CommandEncoder {
        self.pass = None;
        if self.encoder.is_none() {
            self.allocated_before = crate::memory::allocator::gpu_bytes().1;
        }
        self.encoder.get_or_insert_with(|| {
            let mut encoder =
                self.gpu
                    .device
                    .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                        label: Some("tandem batch"),
                    });
            if let Some(stamps) = &self.gpu.timestamps
                && self.gpu.monitor.is_watched()
            {
                self.stamp = stamps.begin_submit(&mut encoder);
            }
            encoder
        })
    }

    /// Records one dispatch of `kernel` with `params` as its parameter block and `buffers`
    /// (inputs, then the output) as bindings 1, 2, … Dispatches share one compute pass until
    /// a copy or the submit ends it: each pass costs the browser more than a dispatch does.
    ///
    /// The batch never submits on its own, however many dispatches one node records (the
    /// parameter ring grows instead): only the scheduler submits, once the buffers the work
    /// uses are confirmed. Fails only if the ring must grow past the memory limit.
    pub fn dispatch(
        &mut self,
        kernel: &Kernel,
        params: &[u32],
        buffers: &[&GpuBuffer],
        grid: (u32, u32, u32),
    ) -> Result<()> {
        let words_per_slot = (PARAM_SLOT / 4) as usize;
        let slot = self.gpu.params.take_slot(self.slots.len())?;
        self.slots.push(slot);
        let start = self.staged.len();
        self.staged.extend_from_slice(params);
        self.staged.resize(start + words_per_slot, 0);
        let place = self.gpu.params.place(slot);
        debug_assert!(
            output_apart(buffers),
            "{}: a dispatch's output shares a buffer with its inputs",
            kernel.name
        );
        self.keep_alive.extend(buffers.iter().map(|b| Rc::clone(b)));
        self.start_profile();
        let profiled = self.profile.is_some();
        if profiled || self.pass.is_none() {
            self.begin_pass(&kernel.name);
        }
        let gpu = Rc::clone(&self.gpu);
        let pass = self.pass.as_mut().expect("a pass was begun above");
        pass.set_pipeline(&kernel.pipeline);
        gpu.bind_groups.with_group(
            &gpu.device,
            &kernel.layout,
            &place.chunk,
            buffers,
            |group| pass.set_bind_group(0, group, &[place.offset]),
        );
        pass.dispatch_workgroups(grid.0, grid.1, grid.2);
        Ok(())
    }

    /// Ends the open pass and begins another; while a profile records, each dispatch gets its
    /// own pass, whose begin and end timestamps time it.
    fn begin_pass(&mut self, name: &str) {
        self.pass = None;
        let queries = self.profile.as_mut().and_then(|p| {
            p.kernels.push(Dispatch {
                kernel: name.to_string(),
                op: p.node.0,
                shape: p.node.1.clone(),
            });
            // Dispatches past the query set's room go untimed.
            let index = p.kernels.len() - 1;
            p.queries
                .clone()
                .filter(|_| index < PROFILED_DISPATCHES)
                .map(|q| (q, 2 * index as u32))
        });
        let timestamp_writes =
            queries
                .as_ref()
                .map(|(query_set, first)| wgpu::ComputePassTimestampWrites {
                    query_set,
                    beginning_of_pass_write_index: Some(*first),
                    end_of_pass_write_index: Some(first + 1),
                });
        let pass = self
            .encoder()
            .begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("tandem batch"),
                timestamp_writes,
            })
            .forget_lifetime();
        self.pass = Some(pass);
    }

    /// Records a copy of the first `words` elements of `buffer` into a pooled staging buffer;
    /// the copy is mapped once the batch is submitted. Several readbacks in one batch share
    /// its submit.
    pub fn read_back(&mut self, buffer: &GpuBuffer, words: usize) -> Result<Readback> {
        let (sender, receiver) = oneshot::channel();
        if words == 0 {
            // Nothing to copy: the readback is complete already.
            let _ = sender.send(Ok(()));
            return Ok(Readback::new(None, 0, receiver));
        }
        let bytes = (words * 4) as u64;
        let staging = alloc_gpu(
            &self.gpu.device,
            self.gpu.limits().max_buffer_size,
            Usage::Readback,
            bytes,
        )?;
        self.encoder().copy_buffer_to_buffer(
            buffer.buffer(),
            buffer.offset(),
            staging.buffer(),
            staging.offset(),
            bytes,
        );
        self.keep_alive.push(buffer.clone());
        let readback = Readback::new(Some(staging.clone()), words, receiver);
        self.maps.push(PendingMap {
            staging,
            bytes,
            sender,
            submission: readback.submission.clone(),
        });
        Ok(readback)
    }

    /// Dispatches recorded since the last submit.
    pub fn recorded_dispatches(&self) -> usize {
        self.slots.len()
    }

    /// Whether this batch has allocated a quarter of the GPU's live bytes, and at least
    /// [`MEMORY_PER_SUBMIT`], since it began. Buffers the recorded work is done with are held
    /// until the submit (no upload may reuse them before the work runs), so a batch that
    /// allocates much is submitted early: then a backward pass frees each activation close
    /// to its last use rather than a whole batch later.
    pub fn holds_much_memory(&self) -> bool {
        if self.encoder.is_none() {
            return false;
        }
        let (live, allocated) = crate::memory::allocator::gpu_bytes();
        let grown = allocated.saturating_sub(self.allocated_before);
        grown >= MEMORY_PER_SUBMIT.max(live / 4)
    }

    /// Whether nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.encoder.is_none()
    }

    /// Drops what was recorded without submitting it; its readbacks never complete.
    pub fn discard(&mut self) {
        self.pass = None;
        self.encoder = None;
        self.staged.clear();
        self.slots.clear();
        self.maps.clear();
        self.keep_alive.clear();
        self.profile = None;
        if let (Some(slot), Some(stamps)) = (self.stamp.take(), &self.gpu.timestamps) {
            stamps.release_submit(slot);
        }
    }

    /// Lets the parameter ring go back to one chunk. Call it only when no batch holds a
    /// block: after every batch is submitted (not before: a chunk let go could be destroyed by
    /// the cache while a command buffer still names it) or discarded.
    pub fn release_grown_ring(&self) {
        self.gpu.params.shrink();
    }

    /// Submits what was recorded, then maps its readbacks; nothing happens when the batch is
    /// empty. The caller has confirmed every buffer the work uses (see `device_errors`): a
    /// command buffer that uses a buffer the GPU failed to create fails as a whole.
    pub fn submit(&mut self) {
        debug_assert!(
            self.encoder.is_none() || !crate::memory::device_errors::has_unverified(),
            "a batch is submitted while a buffer it may use is unconfirmed"
        );
        self.submit_recorded();
    }

    fn submit_recorded(&mut self) {
        if !self.slots.is_empty() {
            self.gpu
                .params
                .write(&self.gpu.queue, &self.slots, &self.staged);
            self.staged.clear();
            self.slots.clear();
        }
        let timestamps = self.resolve_timestamps();
        let submit_ms = now_ms();
        self.pass = None;
        let mut index = None;
        if let Some(mut encoder) = self.encoder.take() {
            let gpu = &self.gpu;
            let stamp = self.stamp.take();
            if let (Some(slot), Some(stamps)) = (stamp, &gpu.timestamps) {
                stamps.end_submit(&mut encoder, slot);
            }
            crate::gpu::device::errors::maybe_spoil(&gpu.device, &mut encoder);
            index = Some(
                gpu.errors
                    .watch(&gpu.device, || gpu.queue.submit([encoder.finish()])),
            );
            self.gpu.count_submit(stamp);
        }
        // A profile covers one submit; the next dispatch starts another if still recording.
        if let (Some(profile), Some(profiler)) = (self.profile.take(), self.profiler.as_ref())
            && !profile.kernels.is_empty()
        {
            let done = crate::observe::profile::not_done();
            let done_at = done.clone();
            let queue = &self.gpu.queue;
            queue.on_submitted_work_done(move || crate::observe::profile::mark_done(&done_at));
            let timestamps = timestamps.map(|readback| self.timestamp_read(readback));
            profiler.record_submit(submit_ms, profile.kernels, done, timestamps);
        }
        // Last used first: see `State::submit`.
        while self.keep_alive.pop().is_some() {}
        for map in self.maps.drain(..) {
            *map.submission.borrow_mut() = index.clone();
            let sender = map.sender;
            let transferred = self.gpu.monitor.transfers.begin();
            let start = map.staging.offset();
            map_read(
                map.staging.buffer(),
                start..start + map.bytes,
                move |result| {
                    transferred.done();
                    // The receiver is only dropped if its readback is, and then no one cares.
                    let _ = sender.send(result);
                },
            );
        }
    }
}

impl CommandBatch {
    /// Records the resolve and readback of this batch's timestamps, if it took any.
    /// The future a profile awaits for a batch's timestamps.
    fn timestamp_read(&self, readback: Readback) -> crate::observe::profile::TimestampRead {
        let gpu = Rc::clone(&self.gpu);
        Box::pin(async move {
            let words = readback.finish(&gpu).await?;
            Ok((words, f64::from(gpu.queue.get_timestamp_period())))
        })
    }

    fn resolve_timestamps(&mut self) -> Option<Readback> {
        let profile = self.profile.as_ref()?;
        let queries = profile.queries.clone()?;
        let count = 2 * profile.kernels.len().min(PROFILED_DISPATCHES) as u32;
        if count == 0 {
            return None;
        }
        let resolved = alloc_gpu(
            &self.gpu.device,
            self.gpu.limits().max_buffer_size,
            Usage::QueryResolve,
            u64::from(count) * 8,
        )
        .ok()?;
        self.encoder()
            .resolve_query_set(&queries, 0..count, resolved.buffer(), resolved.offset());
        self.read_back(&resolved, 2 * count as usize).ok()
    }
}

impl Drop for CommandBatch {
    /// Recorded work is submitted even when evaluation stops early on an error, because the
    /// nodes already recorded hold buffers that only this work fills.
    fn drop(&mut self) {
        self.submit_recorded();
    }
}

/// Whether the last of `buffers` (a dispatch's output) lives in no buffer of the others.
fn output_apart(buffers: &[&GpuBuffer]) -> bool {
    let Some((out, inputs)) = buffers.split_last() else {
        return true;
    };
    inputs.iter().all(|i| i.serial() != out.serial())
}
