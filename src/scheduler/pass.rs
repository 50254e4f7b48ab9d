//! One synchronous pass over a caller's graph: every node that can run now runs, GPU nodes
//! into the shared recording batch, CPU nodes at once; a CPU node whose input is only on the
//! GPU requests its readback and waits, with everything downstream of it.
//!
//! The graph is walked with an explicit stack, never recursion, so chains thousands of nodes
//! deep do not overflow the (small) wasm stack. Views share their input's storage and run no
//! kernel.

use std::collections::HashSet;
use std::rc::Rc;

use super::cpu_batch::{self, Computing, Source};
use super::state::State;
use crate::array::{Array, Data};
use crate::error::Result;
use crate::gpu::device::{
    buffers::upload_words,
    encoder::{CommandBatch, dispatches_per_submit},
};
use crate::graph::primitive::Primitive;
use crate::memory::{allocator, device_errors};
use crate::observe::clock::now_ms;
use crate::observe::profile::Profiler;
use crate::storage::{HostWords, Storage};
use crate::stream::Device;
use crate::{cpu, gpu};

/// How a pass ended.
pub(super) enum Step {
    /// Every node behind the outputs has run, though its GPU work may be unsubmitted.
    Ran,
    /// Some nodes (or, for a read, the outputs) wait for these storages' readbacks, which are
    /// requested.
    Wait(Vec<Rc<Storage>>),
    /// A node needs the recorded work submitted first, and that work uses buffers the GPU has
    /// yet to confirm.
    Flush,
}

pub(super) struct Pass<'s> {
    pub(super) state: &'s mut State,
    pub(super) gpu: Option<&'s gpu::GpuContext>,
    pub(super) profiler: &'s Profiler,
    /// Nodes this pass has run.
    pub(super) ran: usize,
    /// The CPU work this pass ran on the calling thread ([`cpu_batch::work`]'s units).
    pub(super) inline_work: usize,
}

impl Pass<'_> {
    /// Runs what can run of the graph behind `outputs`; with `to_host`, also requests the
    /// readbacks of outputs that have no host copy.
    pub(super) fn run(&mut self, outputs: &[Array], to_host: bool) -> Result<Step> {
        let mut needs = Vec::new();
        let mut blocked = HashSet::new();
        for node in crate::array::lazy_order(outputs) {
            let inputs = node.inputs();
            if inputs.iter().any(|i| blocked.contains(&i.id())) {
                blocked.insert(node.id());
                continue;
            }
            if !self.make_room_to_record(&node, &inputs) {
                return Ok(Step::Flush);
            }
            let op = node.primitive().map_or("data", |p| p.name());
            let origin = node.origin();
            let run =
                || allocator::with_origin(origin, || self.try_run(&node, &inputs, &mut needs));
            match allocator::in_context(node.stream(), op, run)? {
                Some((data, true)) => {
                    let storage = data.storage.clone();
                    node.set_data_keeping_inputs(data);
                    self.state.note_recorded(node, &storage);
                    self.ran += 1;
                }
                Some((data, false)) => {
                    node.set_data(data);
                    self.ran += 1;
                }
                None => {
                    blocked.insert(node.id());
                }
            }
        }
        for storage in outputs.iter().filter_map(Array::storage) {
            if let Some(err) = self.state.cpu.failure(&storage) {
                return Err(err);
            }
            if !matches!(self.state.cpu.computing(&storage), Computing::No) {
                needs.push(storage);
            } else if to_host && !storage.on_host() {
                self.state.request_readback(&storage)?;
                needs.push(storage);
            }
        }
        Ok(if needs.is_empty() {
            Step::Ran
        } else {
            Step::Wait(needs)
        })
    }

    /// Submits recorded work that must go before `node` (a CPU node that can run now runs
    /// while the GPU works; a full batch, or one that has allocated much, is sent), unless
    /// some buffer it uses is unconfirmed: then `false`, and the caller flushes
    /// asynchronously. A CPU node that first needs a readback submits nothing here: its
    /// readback joins the recorded work.
    fn make_room_to_record(&mut self, node: &Array, inputs: &[Array]) -> bool {
        let on_cpu = node.device() == Device::Cpu || self.gpu.is_none();
        let needs_submit = if on_cpu {
            self.state.has_unsubmitted_work() && inputs.iter().all(|i| stored(i).storage.on_host())
        } else {
            self.state.batch.as_ref().is_some_and(|b| {
                b.recorded_dispatches() >= dispatches_per_submit() || b.holds_much_memory()
            })
        };
        if !needs_submit {
            return true;
        }
        if device_errors::has_unverified() {
            return false;
        }
        self.state.submit();
        true
    }

    /// Runs `node` if its inputs are where its device needs them; `None` when it must wait
    /// for readbacks (requested here, and added to `needs`). With the data comes whether
    /// unsubmitted work computes it.
    fn try_run(
        &mut self,
        node: &Array,
        inputs: &[Array],
        needs: &mut Vec<Rc<Storage>>,
    ) -> Result<Option<(Data, bool)>> {
        let input_data: Vec<Data> = inputs.iter().map(stored).collect();
        if let Some(Primitive::View(view)) = node.primitive()
            && let Some(layout) =
                view.layout(inputs[0].shape(), &input_data[0].layout, node.shape())
        {
            let storage = input_data[0].storage.clone();
            let recorded = self.state.is_pending_write(&storage);
            return Ok(Some((Data { storage, layout }, recorded)));
        }
        if let Some(err) = input_data
            .iter()
            .find_map(|d| self.state.cpu.failure(&d.storage))
        {
            return Err(err);
        }
        let on_gpu =
            node.device() == Device::Gpu && self.gpu.is_some() && self.state.batch.is_some();
        if self.waits_for_cpu(&input_data, on_gpu, needs) {
            return Ok(None);
        }
        let (storage, recorded) = match (node.device(), self.gpu, self.state.batch.as_mut()) {
            (Device::Gpu, Some(gpu), Some(batch)) => {
                let storage = run_on_gpu(gpu, batch, node, inputs, &input_data)?;
                (Rc::new(storage), true)
            }
            _ => match self.run_or_queue_on_cpu(node, inputs, &input_data, needs)? {
                Some(storage) => (storage, false),
                None => return Ok(None),
            },
        };
        Ok(Some((Data::contiguous(storage, node.shape()), recorded)))
    }

    /// Whether the node must wait for CPU kernels queued on the pool: those in flight that
    /// compute its inputs, and, for a GPU node, those recorded (it needs their words).
    fn waits_for_cpu(
        &self,
        input_data: &[Data],
        on_gpu: bool,
        needs: &mut Vec<Rc<Storage>>,
    ) -> bool {
        let mut waits = false;
        for d in input_data {
            let wait = match self.state.cpu.computing(&d.storage) {
                Computing::No => false,
                Computing::Recorded(_) => on_gpu,
                Computing::InFlight => true,
            };
            if wait {
                needs.push(d.storage.clone());
            }
            waits |= wait;
        }
        waits
    }

    /// Runs a CPU node here, or records it for the pool's workers when it is large or reads
    /// the output of a node recorded so; `None` when it waits for readbacks.
    fn run_or_queue_on_cpu(
        &mut self,
        node: &Array,
        inputs: &[Array],
        input_data: &[Data],
        needs: &mut Vec<Rc<Storage>>,
    ) -> Result<Option<Rc<Storage>>> {
        let primitive = node
            .primitive()
            .expect("an unevaluated node has a primitive");
        let (spec, specs) = cpu_specs(node, inputs);
        // Whether a CPU batch computes each input, looked up once (a scan of the batch).
        let computing: Vec<Computing> = input_data
            .iter()
            .map(|d| self.state.cpu.computing(&d.storage))
            .collect();
        let reads_recorded = computing
            .iter()
            .any(|c| matches!(c, Computing::Recorded(_)));
        let work = cpu_batch::work(&primitive, &spec, &specs);
        let queue = reads_recorded
            || (cpu::pool::can_offload()
                && !self.profiler.is_active()
                && cpu_batch::goes_to_pool(self.inline_work, work));
        if !queue {
            self.inline_work = self.inline_work.saturating_add(work);
            return match self.host_inputs(input_data, needs)? {
                Some(words) => {
                    let storage =
                        self.run_on_cpu(node, (&primitive, &spec, &specs), input_data, &words)?;
                    Ok(Some(Rc::new(storage)))
                }
                None => Ok(None),
            };
        }
        // Inputs only on the GPU are read back first.
        let mut waits = false;
        for (d, computing) in input_data.iter().zip(&computing) {
            if matches!(computing, Computing::No) && !d.storage.on_host() {
                self.state.request_readback(&d.storage)?;
                needs.push(d.storage.clone());
                waits = true;
            }
        }
        if waits {
            return Ok(None);
        }
        let sources = input_data
            .iter()
            .zip(computing)
            .map(|(d, computing)| {
                let from = match computing {
                    Computing::Recorded(k) => Source::Node(k),
                    _ => Source::Host(d.storage.host_words().expect("checked above")),
                };
                (from, d.layout.clone())
            })
            .collect();
        let block = allocator::reserve_host(spec.dtype().words(spec.size()))?;
        Ok(Some(self.state.cpu.record(
            (primitive, spec, specs),
            sources,
            block,
        )))
    }

    /// The inputs' host copies, or `None` after requesting readbacks of those that have none.
    fn host_inputs(
        &mut self,
        input_data: &[Data],
        needs: &mut Vec<Rc<Storage>>,
    ) -> Result<Option<Vec<HostWords>>> {
        let words: Vec<_> = input_data.iter().map(|d| d.storage.host_words()).collect();
        if words.iter().all(Option::is_some) {
            return Ok(words.into_iter().collect());
        }
        for d in input_data.iter().filter(|d| !d.storage.on_host()) {
            self.state.request_readback(&d.storage)?;
            needs.push(d.storage.clone());
        }
        Ok(None)
    }

    fn run_on_cpu(
        &mut self,
        node: &Array,
        (primitive, spec, specs): (&Primitive, &cpu::Spec, &[cpu::Spec]),
        input_data: &[Data],
        words: &[HostWords],
    ) -> Result<Storage> {
        // make_room_to_record has submitted any recorded work, so the GPU runs it meanwhile.
        let start_ms = now_ms();
        let host: Vec<_> = words
            .iter()
            .zip(input_data)
            .map(|(w, d)| cpu::HostInput {
                words: w,
                layout: &d.layout,
            })
            .collect();
        let result = cpu::eval(primitive, spec, specs, &host)?;
        let op = primitive.name();
        self.profiler
            .record_cpu(op, node.shape(), node.stream(), start_ms);
        Storage::from_host(result)
    }
}

fn run_on_gpu(
    gpu: &gpu::GpuContext,
    batch: &mut CommandBatch,
    node: &Array,
    inputs: &[Array],
    input_data: &[Data],
) -> Result<Storage> {
    // Nothing more goes to a lost device (natively, wgpu panics on writes to its buffers).
    if let Some(why) = gpu.errors.lost_reason() {
        return Err(gpu::device::errors::lost_error(&why));
    }
    // A one-element input on the host goes to an elementwise kernel as a word: uploading it
    // would make a buffer and a write for every `add(x, 1)`. It does so even once an earlier
    // kernel has uploaded it, as fusion counted it (as a word, not among a program's buffers,
    // `transforms/fuse.rs`) when it was only on the host: else a program at its limit of
    // buffers would bind one too many.
    // Of the packed dtypes' kernels, only the fused ones take words (the element widened to
    // its compute dtype); casts read buffers.
    let primitive = node.primitive();
    // A matmul's epilogue reads its program's inputs (from the third on) as a fused kernel does.
    let epilogue = matches!(primitive, Some(Primitive::MatmulThen(_)));
    let fused = epilogue || matches!(primitive, Some(Primitive::Fused(_)));
    let takes_words = primitive.is_some_and(|p| gpu::eval::takes_words(&p))
        && (fused || !node.dtype().is_packed());
    let word_of = |x: &Array, d: &Data| {
        let dtype = x.dtype();
        let host = (takes_words && (fused || !dtype.is_packed()) && x.size() == 1)
            .then(|| d.storage.host_words())
            .flatten()?;
        let at = d.layout.offset;
        (at / dtype.per_word() < host.len())
            .then(|| crate::dtype::packed::element(&host[..], dtype, at))
    };
    let operands = if epilogue { 2 } else { 0 };
    let words: Vec<Option<u32>> = inputs
        .iter()
        .zip(input_data)
        .enumerate()
        .map(|(k, (x, d))| if k < operands { None } else { word_of(x, d) })
        .collect();
    let buffers = input_data
        .iter()
        .zip(&words)
        .map(|(d, word)| match word {
            Some(_) => Ok(None),
            None => d
                .storage
                .ensure_gpu(|words| upload_words(gpu, words))
                .map(Some),
        })
        .collect::<Result<Vec<_>>>()?;
    let gpu_inputs: Vec<_> = buffers
        .iter()
        .zip(input_data)
        .zip(&words)
        .map(|((buffer, d), &word)| gpu::input::GpuInput {
            buffer: buffer.as_ref(),
            word,
            layout: &d.layout,
        })
        .collect();
    batch.label(node.primitive().map_or("array", |p| p.name()), node.shape());
    let buffer = gpu::eval::eval(gpu, batch, node, inputs, &gpu_inputs)?;
    Ok(Storage::from_gpu(buffer, node.dtype().words(node.size())))
}

/// What the CPU kernels read of a node and its inputs besides their words.
fn cpu_specs(node: &Array, inputs: &[Array]) -> (cpu::Spec, Vec<cpu::Spec>) {
    let spec = |x: &Array| cpu::Spec::new(x.dtype(), x.shape());
    (spec(node), inputs.iter().map(spec).collect())
}

/// The data of an input, which dependency order guarantees has run.
fn stored(input: &Array) -> Data {
    input.data().expect("inputs run before their consumers")
}
