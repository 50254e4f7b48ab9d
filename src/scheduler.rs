//! `evaluate`: runs the graph behind a set of arrays.
//!
//! The graph is walked with an explicit stack, never recursion, so chains thousands of nodes
//! deep do not overflow the (small) wasm stack. Each node runs on its device; GPU dispatches are
//! batched into one submit, which is flushed before a CPU node runs (so the GPU works while
//! the CPU does) and at the end.
//! A node lets go of its inputs once it has run, and the walk holds each node only until it has
//! run, so intermediates are freed as soon as their last consumer is done. Views share their
//! input's storage and run no kernel.

use std::collections::HashSet;

use crate::array::{Array, Data};
use crate::error::Result;
use crate::gpu::encoder::CommandBatch;
use crate::primitive::Primitive;
use crate::runtime::Runtime;
use crate::storage::Storage;
use crate::stream::Device;
use crate::{cpu, gpu};

/// Evaluates `outputs` and every unevaluated node they depend on.
pub async fn evaluate(runtime: &Runtime, outputs: &[Array]) -> Result<()> {
    let mut batch = runtime.gpu().map(CommandBatch::new);
    for node in topological_order(outputs) {
        let data = run_node(runtime, &mut batch, &node).await?;
        node.set_data(data);
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

/// Runs one node: a view shares its input's storage when it can; anything else runs a kernel
/// on the node's device (the CPU when there is no GPU context).
async fn run_node(
    runtime: &Runtime,
    batch: &mut Option<CommandBatch<'_>>,
    node: &Array,
) -> Result<Data> {
    let inputs = node.inputs();
    let input_data: Vec<Data> = inputs.iter().map(stored).collect();
    if let Some(Primitive::View(view)) = node.primitive()
        && let Some(layout) = view.layout(inputs[0].shape(), &input_data[0].layout, node.shape())
    {
        let storage = input_data[0].storage.clone();
        return Ok(Data { storage, layout });
    }
    let storage = match (node.device(), runtime.gpu(), batch.as_mut()) {
        (Device::Gpu, Some(gpu), Some(batch)) => {
            let buffers = input_data
                .iter()
                .map(|d| d.storage.ensure_gpu(gpu))
                .collect::<Result<Vec<_>>>()?;
            let gpu_inputs: Vec<_> = buffers
                .iter()
                .zip(&input_data)
                .map(|(buffer, d)| gpu::ops::GpuInput {
                    buffer,
                    layout: &d.layout,
                })
                .collect();
            Storage::from_gpu(
                gpu::ops::eval(gpu, batch, node, &inputs, &gpu_inputs)?,
                node.size(),
            )
        }
        (_, gpu, batch) => {
            // Submit recorded GPU work first, so the GPU runs it while this CPU node runs
            // (and so any readback below comes after it).
            if let Some(batch) = batch {
                batch.submit();
            }
            let mut words = Vec::with_capacity(inputs.len());
            for d in &input_data {
                words.push(d.storage.ensure_host(gpu).await?);
            }
            let host: Vec<_> = words
                .iter()
                .zip(&input_data)
                .map(|(w, d)| cpu::HostInput {
                    words: w,
                    layout: &d.layout,
                })
                .collect();
            Storage::from_host(cpu::eval(node, &inputs, &host)?)
        }
    };
    Ok(Data::contiguous(storage, node.shape()))
}

/// The data of an input, which topological order guarantees has run.
fn stored(input: &Array) -> Data {
    input.data().expect("inputs run before their consumers")
}
