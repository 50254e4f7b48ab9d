//! Orders of a graph's nodes: each node after its inputs.

use rustc_hash::FxHashMap as HashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::Array;

/// How [`order_by`] treats a node it reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visit {
    /// Leave it out, and what is behind it.
    Skip,
    /// Keep it, but not what is behind it.
    Leaf,
    /// Keep it after its inputs.
    Inputs,
}

/// The nodes behind `outputs` that `visit` keeps, each after its inputs. The graph is walked
/// with a stack, never recursion, so chains thousands of nodes deep do not overflow wasm's
/// stack.
pub fn order_by(outputs: &[Array], visit: impl Fn(&Array) -> Visit) -> Vec<Array> {
    let mut order = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<(Array, bool)> = outputs.iter().rev().map(|a| (a.clone(), false)).collect();
    while let Some((node, inputs_done)) = stack.pop() {
        if inputs_done {
            order.push(node);
            continue;
        }
        let how = visit(&node);
        if how == Visit::Skip || !seen.insert(node.id()) {
            continue;
        }
        let inputs = match how {
            Visit::Inputs => node.inputs(),
            _ => Vec::new(),
        };
        stack.push((node, true));
        stack.extend(inputs.into_iter().rev().map(|input| (input, false)));
    }
    order
}

/// Unevaluated nodes behind `outputs`, each after its inputs, and otherwise in the order they
/// were made: the order in which the program would have run them eagerly. A depth-first order
/// would not do for a backward pass. Reached from the first gradient, it runs that gradient's
/// whole chain through every layer before any layer's weight gradient. Each layer's
/// activation cotangents then wait, alive, for the end. Made order runs each weight gradient as
/// soon as its layer's backward ops have run, as PyTorch and MLX do.
pub fn lazy_order(outputs: &[Array]) -> Vec<Array> {
    let order = order_by(outputs, |node| {
        if node.is_evaluated() {
            Visit::Skip
        } else {
            Visit::Inputs
        }
    });
    by_serial(order)
}

/// `order` (each node after its inputs) reordered so that, of the nodes whose inputs have
/// run, the earliest made runs next.
fn by_serial(order: Vec<Array>) -> Vec<Array> {
    if order.windows(2).all(|w| w[0].serial() < w[1].serial()) {
        return order;
    }
    let place: HashMap<usize, usize> = order.iter().enumerate().map(|(i, n)| (n.id(), i)).collect();
    let mut waiting = vec![0usize; order.len()];
    let mut consumers: Vec<Vec<usize>> = vec![Vec::new(); order.len()];
    for (i, node) in order.iter().enumerate() {
        for input in node.inputs() {
            if let Some(&j) = place.get(&input.id()) {
                waiting[i] += 1;
                consumers[j].push(i);
            }
        }
    }
    let mut ready: BinaryHeap<Reverse<(u64, usize)>> = (0..order.len())
        .filter(|&i| waiting[i] == 0)
        .map(|i| Reverse((order[i].serial(), i)))
        .collect();
    let mut slots: Vec<Option<Array>> = order.into_iter().map(Some).collect();
    let mut sorted = Vec::with_capacity(slots.len());
    while let Some(Reverse((_, i))) = ready.pop() {
        sorted.push(slots[i].take().expect("each node is ready once"));
        for &c in &consumers[i] {
            waiting[c] -= 1;
            if waiting[c] == 0 {
                let serial = slots[c].as_ref().expect("not yet run").serial();
                ready.push(Reverse((serial, c)));
            }
        }
    }
    sorted
}
