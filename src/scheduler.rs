//! `evaluate`: runs the graph behind a set of arrays.
//!
//! The graph is walked with an explicit stack, never recursion, so chains thousands of nodes
//! deep do not overflow the (small) wasm stack. Each node runs on its device; GPU dispatches are
//! batched into one submit, which is flushed only when the CPU needs a GPU result or at the end.
//! A node lets go of its inputs once it has run, and the walk holds each node only until it has
//! run, so intermediates are freed as soon as their last consumer is done.

use std::collections::HashSet;
use std::rc::Rc;

use crate::array::Array;
use crate::error::Result;
use crate::gpu::encoder::CommandBatch;
use crate::runtime::Runtime;
use crate::storage::Storage;
use crate::stream::Device;
use crate::{cpu, gpu};

/// Evaluates `outputs` and every unevaluated node they depend on.
pub async fn evaluate(runtime: &Runtime, outputs: &[Array]) -> Result<()> {
    let mut batch = runtime.gpu().map(CommandBatch::new);
    for node in topological_order(outputs) {
        let storage = run_node(runtime, &mut batch, &node).await?;
        node.set_storage(Rc::new(storage));
    }
    if let Some(batch) = batch.as_mut() {
        batch.submit();
    }
    Ok(())
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

/// Runs one node on its device. Without a GPU context, `gpu` nodes run on the CPU.
async fn run_node(
    runtime: &Runtime,
    batch: &mut Option<CommandBatch<'_>>,
    node: &Array,
) -> Result<Storage> {
    let inputs = node.inputs();
    if let (Device::Gpu, Some(gpu), Some(batch)) = (node.device(), runtime.gpu(), batch.as_mut()) {
        let buffers = inputs
            .iter()
            .map(|input| stored(input).ensure_gpu(gpu))
            .collect::<Result<Vec<_>>>()?;
        let buffer = gpu::ops::eval(gpu, batch, node, &inputs, &buffers)?;
        return Ok(Storage::from_gpu(buffer, node.size()));
    }
    let needs_readback = inputs.iter().any(|input| !stored(input).on_host());
    if let (true, Some(batch)) = (needs_readback, batch.as_mut()) {
        batch.submit();
    }
    let mut words = Vec::with_capacity(inputs.len());
    for input in &inputs {
        words.push(stored(input).ensure_host(runtime.gpu()).await?);
    }
    Ok(Storage::from_host(cpu::eval(node, &inputs, &words)))
}

/// The data of an input, which topological order guarantees has run.
fn stored(input: &Array) -> Rc<Storage> {
    input.storage().expect("inputs run before their consumers")
}
