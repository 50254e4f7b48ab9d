//! `evaluate`: runs the graph behind a set of arrays.
//!
//! The graph is walked with an explicit stack, never recursion, so chains thousands of nodes
//! deep do not overflow the (small) wasm stack. Nodes run in dependency order, each on its own
//! stream's device:
//! - GPU nodes are recorded into one batch, uploading their CPU-made inputs. The batch is
//!   submitted before a CPU node runs, so the GPU works while the CPU does, and at the end.
//! - A CPU node runs at once when its inputs are on the host. When one is only on the GPU, the
//!   node waits for a readback, and so does everything that depends on it; the rest of the
//!   graph goes on meanwhile. Readbacks recorded before a wait share one submit.
//!
//! A node lets go of its inputs once it has run, and the walk holds each node only until it has
//! run, so intermediates are freed as soon as their last consumer is done. Views share their
//! input's storage and run no kernel. GPU nodes keep their inputs until their batch is
//! submitted: a batch whose new buffers the GPU failed to create is discarded unsubmitted
//! (see `memory::device_errors`), and its nodes run again.

use std::collections::{HashSet, VecDeque};
use std::rc::Rc;

use crate::array::{Array, Data};
use crate::error::{Error, Result};
use crate::gpu::encoder::{CommandBatch, dispatches_per_submit};
use crate::gpu::readback::Readback;
use crate::memory::{allocator, device_errors};
use crate::primitive::Primitive;
use crate::profile::now_ms;
use crate::runtime::Runtime;
use crate::storage::{HostWords, Storage};
use crate::stream::Device;
use crate::{cpu, gpu};

/// Evaluates `outputs` and every unevaluated node they depend on, and resolves once the GPU
/// work it submitted has finished (as MLX's `eval` returns once results are computed).
pub async fn evaluate(runtime: &Runtime, outputs: &[Array]) -> Result<()> {
    let mut run = Run::new(runtime);
    run.evaluate(outputs, false).await?;
    match (runtime.gpu(), run.submitted_gpu_work()) {
        (Some(gpu), true) => crate::gpu::readback::wait_idle(gpu).await,
        _ => Ok(()),
    }
}

/// Evaluates `arrays` and returns each one's storage words on the host. Those that live only
/// on the GPU are read back together, after one submit.
pub async fn read(runtime: &Runtime, arrays: &[Array]) -> Result<Vec<HostWords>> {
    let mut run = Run::new(runtime);
    run.evaluate(arrays, true).await?;
    run.receive_all_readbacks().await?;
    let storages: Vec<Rc<Storage>> = arrays.iter().map(|a| stored(a).storage).collect();
    Ok(storages
        .iter()
        .map(|s| s.host_words().expect("read back above"))
        .collect())
}

/// One evaluation in progress: the GPU batch being recorded and the readbacks in flight.
struct Run<'r> {
    runtime: &'r Runtime,
    batch: Option<CommandBatch<'r>>,
    /// Readbacks of buffers that no unsubmitted work writes. They are submitted ahead of
    /// `batch`, so they do not wait behind the GPU work recorded since.
    early: Option<CommandBatch<'r>>,
    /// Storages that `batch`'s unsubmitted work writes.
    pending_writes: HashSet<*const Storage>,
    /// Oldest first, each with the storage it fills.
    readbacks: Vec<(Rc<Storage>, Readback)>,
    /// Nodes whose results unsubmitted work computes; they keep their inputs until it is
    /// submitted, so they can run again if it is discarded.
    recorded: Vec<Array>,
    /// Batches discarded in a row because the GPU could not create a buffer.
    device_ooms: usize,
}

/// How a pass over the queued nodes ended.
enum Pass {
    /// Every node ran, except these, which wait for readbacks.
    Done(Vec<Array>),
    /// A node needs the recorded work submitted first, and that work uses buffers the GPU has
    /// yet to confirm; the nodes are back in the queue, in order.
    Flush,
}

impl<'r> Run<'r> {
    fn new(runtime: &'r Runtime) -> Run<'r> {
        let batch = runtime
            .gpu()
            .map(|gpu| CommandBatch::profiled(gpu, &runtime.profiler));
        Run {
            runtime,
            batch,
            early: runtime.gpu().map(CommandBatch::new),
            pending_writes: HashSet::new(),
            readbacks: Vec::new(),
            recorded: Vec::new(),
            device_ooms: 0,
        }
    }

    /// Runs the graph behind `outputs` and submits its work; with `read_back`, the outputs
    /// that live only on the GPU are read back in the same submit.
    async fn evaluate(&mut self, outputs: &[Array], read_back: bool) -> Result<()> {
        let mut pending: VecDeque<Array> = topological_order(outputs).into();
        let mut retried = false;
        loop {
            if pending.is_empty() {
                // Everything ran: submit what is recorded, unless it must run again.
                if read_back {
                    for output in outputs {
                        let storage = stored(output).storage;
                        if !storage.on_host() {
                            self.request_readback(&storage)?;
                        }
                    }
                }
                self.flush(&mut pending).await?;
                if pending.is_empty() {
                    return Ok(());
                }
            }
            let before = pending.len();
            match allocator::as_retryable(|| self.run_ready(&mut pending)) {
                Ok(Pass::Done(waiting)) => {
                    pending = waiting.into();
                    retried = false;
                    if !pending.is_empty() {
                        self.flush(&mut pending).await?;
                        self.receive_readbacks().await?;
                    }
                }
                Ok(Pass::Flush) => self.flush(&mut pending).await?,
                Err(Error::MemoryLimit(message)) => {
                    if retried && pending.len() == before {
                        allocator::record_oom();
                        return Err(Error::MemoryLimit(message));
                    }
                    // Submitting lets the batch release the buffers it holds; waiting lets
                    // in-flight work finish with them. Then try again, once per stall.
                    self.flush(&mut pending).await?;
                    self.wait_idle().await?;
                    allocator::record_retry();
                    retried = true;
                }
                Err(other) => return Err(other),
            }
        }
    }

    /// Runs every node of `nodes` (in dependency order) that can run now. A node is let go as
    /// soon as it has run, so its data can be freed once its consumers have run too. On an
    /// error or a [`Pass::Flush`], `nodes` keeps every node that has not run, in order.
    fn run_ready(&mut self, nodes: &mut VecDeque<Array>) -> Result<Pass> {
        let mut waiting = Vec::new();
        let mut blocked = HashSet::new();
        while let Some(node) = nodes.pop_front() {
            // A concurrent evaluation may have run it while this one awaited.
            if node.is_evaluated() {
                continue;
            }
            let inputs = node.inputs();
            let ready = !inputs.iter().any(|i| blocked.contains(&i.id()));
            if ready && !self.make_room_to_record(&node, &inputs) {
                requeue(nodes, node, waiting);
                return Ok(Pass::Flush);
            }
            let op = node.primitive().map_or("data", |p| p.name());
            let run = || allocator::in_context(node.stream(), op, || self.try_run(&node, &inputs));
            match ready.then(run).transpose() {
                Ok(Some(Some((data, recorded)))) => {
                    if recorded {
                        node.set_data_keeping_inputs(data);
                        self.recorded.push(node);
                    } else {
                        node.set_data(data);
                    }
                }
                Ok(_) => {
                    blocked.insert(node.id());
                    waiting.push(node);
                }
                Err(err) => {
                    requeue(nodes, node, waiting);
                    return Err(err);
                }
            }
        }
        Ok(Pass::Done(waiting))
    }

    /// Submits recorded work that must go before `node` (a CPU node that can run now runs
    /// while the GPU works; a full batch is sent), unless some buffer it uses is unconfirmed:
    /// then `false`, and the caller flushes asynchronously. A CPU node that first needs a
    /// readback submits nothing here: its readback joins the recorded work.
    fn make_room_to_record(&mut self, node: &Array, inputs: &[Array]) -> bool {
        let on_cpu = node.device() == Device::Cpu || self.runtime.gpu().is_none();
        let needs_submit = if on_cpu {
            self.has_unsubmitted_work() && inputs.iter().all(|i| stored(i).storage.on_host())
        } else {
            self.batch
                .as_ref()
                .is_some_and(|b| b.recorded_dispatches() >= dispatches_per_submit())
        };
        if !needs_submit {
            return true;
        }
        if device_errors::has_unverified() {
            return false;
        }
        self.submit();
        true
    }

    /// Confirms the buffers of the recorded work and submits it. If the GPU could not create
    /// one, the work is discarded, its nodes go back to the front of `pending`, the cache is
    /// emptied and this returns `Ok` so they run again; a second failure in a row is a
    /// `MemoryLimitError`.
    async fn flush(&mut self, pending: &mut VecDeque<Array>) -> Result<()> {
        match device_errors::verify().await {
            Ok(()) => {
                self.submit();
                self.device_ooms = 0;
                Ok(())
            }
            Err(err) => {
                for node in self.discard().into_iter().rev() {
                    pending.push_front(node);
                }
                if self.device_ooms > 0 {
                    allocator::record_oom();
                    return Err(err);
                }
                self.device_ooms += 1;
                allocator::clear_cache();
                self.wait_idle().await?;
                allocator::record_retry();
                Ok(())
            }
        }
    }

    /// Drops the recorded work unsubmitted and forgets the results it was to compute; returns
    /// their nodes, in order, to run again.
    fn discard(&mut self) -> Vec<Array> {
        for batch in [self.early.as_mut(), self.batch.as_mut()]
            .into_iter()
            .flatten()
        {
            batch.discard();
        }
        self.readbacks.clear();
        self.pending_writes.clear();
        let undone = std::mem::take(&mut self.recorded);
        for node in &undone {
            node.clear_data();
        }
        undone
    }

    async fn wait_idle(&self) -> Result<()> {
        match self.runtime.gpu() {
            Some(gpu) => crate::gpu::readback::wait_idle(gpu).await,
            None => Ok(()),
        }
    }

    fn has_unsubmitted_work(&self) -> bool {
        [&self.early, &self.batch]
            .into_iter()
            .any(|b| b.as_ref().is_some_and(|b| !b.is_empty()))
    }

    /// Runs `node` if its inputs are where its device needs them; `None` when it must wait
    /// for a readback (which this requests). With the data comes whether unsubmitted work
    /// computes it.
    fn try_run(&mut self, node: &Array, inputs: &[Array]) -> Result<Option<(Data, bool)>> {
        let input_data: Vec<Data> = inputs.iter().map(stored).collect();
        if let Some(Primitive::View(view)) = node.primitive()
            && let Some(layout) =
                view.layout(inputs[0].shape(), &input_data[0].layout, node.shape())
        {
            let storage = input_data[0].storage.clone();
            let recorded = self.pending_writes.contains(&Rc::as_ptr(&storage));
            return Ok(Some((Data { storage, layout }, recorded)));
        }
        let (storage, recorded) = match (node.device(), self.runtime.gpu(), self.batch.as_mut()) {
            (Device::Gpu, Some(gpu), Some(batch)) => {
                let storage = Rc::new(run_on_gpu(gpu, batch, node, inputs, &input_data)?);
                self.pending_writes.insert(Rc::as_ptr(&storage));
                (storage, true)
            }
            _ => match self.host_inputs(&input_data)? {
                Some(words) => (
                    Rc::new(self.run_on_cpu(node, inputs, &input_data, &words)?),
                    false,
                ),
                None => return Ok(None),
            },
        };
        Ok(Some((Data::contiguous(storage, node.shape()), recorded)))
    }

    /// The inputs' host copies, or `None` after requesting readbacks of those that have none.
    fn host_inputs(&mut self, input_data: &[Data]) -> Result<Option<Vec<HostWords>>> {
        let words: Vec<_> = input_data.iter().map(|d| d.storage.host_words()).collect();
        if words.iter().all(Option::is_some) {
            return Ok(words.into_iter().collect());
        }
        for d in input_data.iter().filter(|d| !d.storage.on_host()) {
            self.request_readback(&d.storage)?;
        }
        Ok(None)
    }

    fn run_on_cpu(
        &mut self,
        node: &Array,
        inputs: &[Array],
        input_data: &[Data],
        words: &[HostWords],
    ) -> Result<Storage> {
        // Start the recorded GPU work, so the GPU runs it while this node runs.
        self.submit();
        let start_ms = now_ms();
        let host: Vec<_> = words
            .iter()
            .zip(input_data)
            .map(|(w, d)| cpu::HostInput {
                words: w,
                layout: &d.layout,
            })
            .collect();
        let result = cpu::eval(node, inputs, &host)?;
        let op = node.primitive().map_or("array", |p| p.name());
        self.runtime
            .profiler
            .record_cpu(op, node.stream(), start_ms);
        Storage::from_host(result)
    }

    /// Records a readback of `storage`'s GPU copy, unless one is already in flight.
    fn request_readback(&mut self, storage: &Rc<Storage>) -> Result<()> {
        if self.readbacks.iter().any(|(s, _)| Rc::ptr_eq(s, storage)) {
            return Ok(());
        }
        let buffer = storage
            .gpu_buffer()
            .expect("storage has a host or a GPU copy");
        let batch = if self.pending_writes.contains(&Rc::as_ptr(storage)) {
            self.batch.as_mut()
        } else {
            self.early.as_mut()
        };
        let batch = batch.expect("a GPU copy implies a GPU context");
        let readback = batch.read_back(&buffer, storage.len())?;
        self.readbacks.push((storage.clone(), readback));
        Ok(())
    }

    /// Waits for the oldest readback and takes every other one that has finished meanwhile.
    /// Their work must have been flushed ([`Run::flush`]) first.
    async fn receive_readbacks(&mut self) -> Result<()> {
        if self.readbacks.is_empty() {
            // A discarded flush took them; their nodes request them again.
            return Ok(());
        }
        let gpu = self.runtime.gpu().expect("readbacks imply a GPU context");
        let (storage, oldest) = self.readbacks.remove(0);
        storage.set_host(oldest.finish(gpu).await?)?;
        let mut pending = Vec::new();
        for (storage, mut readback) in std::mem::take(&mut self.readbacks) {
            if readback.is_ready() {
                storage.set_host(readback.finish(gpu).await?)?;
            } else {
                pending.push((storage, readback));
            }
        }
        self.readbacks = pending;
        Ok(())
    }

    async fn receive_all_readbacks(&mut self) -> Result<()> {
        while !self.readbacks.is_empty() {
            self.receive_readbacks().await?;
        }
        Ok(())
    }

    /// Whether this run has submitted any GPU work.
    fn submitted_gpu_work(&self) -> bool {
        let submits =
            |batch: &Option<CommandBatch>| batch.as_ref().is_some_and(|b| b.submits() > 0);
        submits(&self.batch) || submits(&self.early)
    }

    fn submit(&mut self) {
        if let Some(early) = self.early.as_mut() {
            early.submit();
        }
        if let Some(batch) = self.batch.as_mut() {
            batch.submit();
        }
        self.pending_writes.clear();
        for node in self.recorded.drain(..) {
            node.release_inputs();
        }
    }
}

fn run_on_gpu(
    gpu: &gpu::GpuContext,
    batch: &mut CommandBatch<'_>,
    node: &Array,
    inputs: &[Array],
    input_data: &[Data],
) -> Result<Storage> {
    let buffers = input_data
        .iter()
        .map(|d| d.storage.ensure_gpu(gpu))
        .collect::<Result<Vec<_>>>()?;
    let gpu_inputs: Vec<_> = buffers
        .iter()
        .zip(input_data)
        .map(|(buffer, d)| gpu::ops::GpuInput {
            buffer,
            layout: &d.layout,
        })
        .collect();
    let buffer = gpu::ops::eval(gpu, batch, node, inputs, &gpu_inputs)?;
    Ok(Storage::from_gpu(buffer, node.size()))
}

/// Puts `node`, after the `waiting` nodes before it, back at the front of `nodes`.
fn requeue(nodes: &mut VecDeque<Array>, node: Array, waiting: Vec<Array>) {
    nodes.push_front(node);
    for node in waiting.into_iter().rev() {
        nodes.push_front(node);
    }
}

/// Unevaluated nodes behind `outputs`, each after its inputs.
fn topological_order(outputs: &[Array]) -> Vec<Array> {
    let mut order = Vec::new();
    let mut seen = HashSet::new();
    let mut stack: Vec<(Array, bool)> = outputs.iter().rev().map(|a| (a.clone(), false)).collect();
    while let Some((node, inputs_done)) = stack.pop() {
        if inputs_done {
            order.push(node);
            continue;
        }
        if node.is_evaluated() || !seen.insert(node.id()) {
            continue;
        }
        let inputs = node.inputs();
        stack.push((node, true));
        stack.extend(inputs.into_iter().rev().map(|input| (input, false)));
    }
    order
}

/// The data of an input, which dependency order guarantees has run.
fn stored(input: &Array) -> Data {
    input.data().expect("inputs run before their consumers")
}
