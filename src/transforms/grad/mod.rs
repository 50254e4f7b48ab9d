//! Reverse mode (MLX's `vjp`, on which `grad` and `value_and_grad` are built): the function
//! runs on stand-ins for its primals, and the graph from the stand-ins to its outputs is
//! walked backward from the cotangents. Each node's rule (`rules.rs`, `elementwise.rs`)
//! gives its inputs' cotangents as new lazy ops on the node's stream, and they are summed
//! where a node feeds several others. Nothing is evaluated here: the backward graph is as
//! lazy as the forward one, so fusion and the scheduler see both, and each saved
//! activation is freed once the last backward op that reads it has run.
//!
//! Integer and bool values carry no gradient; a primal that the outputs do not depend on
//! gets zeros.

mod checkpoint;
mod cotangent;
mod elementwise;
mod indexing;
mod rules;
mod scan;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::array::{Array, Visit, order_by};
use crate::error::{Error, Result};
use crate::graph::primitive::{Primitive, View};
use crate::ops;

pub use checkpoint::{Function, checkpoint};

/// The outputs of `fun` at `primals`, and the cotangents of the primals for the outputs'
/// `cotangents` (one per output, of its shape): MLX's `vjp`.
pub fn vjp(
    fun: impl FnOnce(&[Array]) -> Result<Vec<Array>>,
    primals: &[Array],
    cotangents: &[Array],
) -> Result<(Vec<Array>, Vec<Array>)> {
    vjp_with(fun, primals, |outputs| {
        check_like("vjp", "cotangent", cotangents, "output", outputs)?;
        Ok(cotangents.to_vec())
    })
}

/// [`vjp`] with the cotangents made from the outputs by `cotangents_for`.
pub(crate) fn vjp_with(
    fun: impl FnOnce(&[Array]) -> Result<Vec<Array>>,
    primals: &[Array],
    cotangents_for: impl FnOnce(&[Array]) -> Result<Vec<Array>>,
) -> Result<(Vec<Array>, Vec<Array>)> {
    let stand_ins: Vec<Array> = primals.iter().map(stand_in).collect();
    let outputs = fun(&stand_ins)?;
    let cotangents = cotangents_for(&outputs)?;
    let grads = backward(&outputs, &stand_ins, &cotangents)?;
    Ok((outputs, grads))
}

/// That `given` (the `what`s) match `like` (the `of`s) one to one, in number and shape.
fn check_like(op: &str, what: &str, given: &[Array], of: &str, like: &[Array]) -> Result<()> {
    if given.len() != like.len() {
        return Err(Error::Value(format!(
            "{op}: {} {of}s but {} {what}s",
            like.len(),
            given.len()
        )));
    }
    for (k, (x, y)) in given.iter().zip(like).enumerate() {
        if x.shape() != y.shape() {
            return Err(Error::Shape(format!(
                "{op}: {what} {k} has shape {:?}, but {of} {k} has shape {:?}",
                x.shape(),
                y.shape()
            )));
        }
    }
    Ok(())
}

/// The value of `fun` (one float element) at `primals` and its gradient with respect to
/// each: MLX's `value_and_grad` over every argument.
pub fn value_and_grad(
    fun: impl FnOnce(&[Array]) -> Result<Array>,
    primals: &[Array],
) -> Result<(Array, Vec<Array>)> {
    let stand_ins: Vec<Array> = primals.iter().map(stand_in).collect();
    let y = fun(&stand_ins)?;
    if y.size() != 1 {
        return Err(Error::Shape(format!(
            "grad: the function must return one element, not an array of shape {:?}",
            y.shape()
        )));
    }
    if !y.dtype().is_float() {
        return Err(Error::DType(format!(
            "grad: the function must return a float array, not {}",
            y.dtype().name()
        )));
    }
    let one = ops::full(y.shape(), 1.0, y.dtype(), y.stream())?;
    let grads = backward(std::slice::from_ref(&y), &stand_ins, &[one])?;
    Ok((y, grads))
}

/// The outputs of `fun` at `primals` and their tangents for the primals' `tangents` (one per
/// primal, of its shape): MLX's `jvp`. Built on reverse mode by the transpose trick: the map
/// from output cotangents `c` to `vjp(fun, primals, c)` is linear, and its own vjp at the
/// tangents is the Jacobian times the tangents. So every op with a reverse rule has a forward
/// one, with the same conventions, at the cost of a second forward pass.
pub fn jvp(
    fun: impl Fn(&[Array]) -> Result<Vec<Array>>,
    primals: &[Array],
    tangents: &[Array],
) -> Result<(Vec<Array>, Vec<Array>)> {
    check_like("jvp", "tangent", tangents, "primal", primals)?;
    let outputs = fun(&primals.iter().map(stand_in).collect::<Vec<_>>())?;
    let seeds = outputs
        .iter()
        .map(|y| ops::zeros(y.shape(), y.dtype(), y.stream()))
        .collect::<Result<Vec<_>>>()?;
    let pullback = |cs: &[Array]| vjp(&fun, primals, cs).map(|(_, grads)| grads);
    let (_, tangents_out) = vjp(pullback, &seeds, tangents)?;
    Ok((outputs, tangents_out))
}

/// A node that is `x` (a view of it, sharing its data) but is not `x`: the walk stops there,
/// and a primal passed twice gets two gradients.
fn stand_in(x: &Array) -> Array {
    Array::from_primitive(
        Primitive::View(View::Reshape),
        vec![x.clone()],
        x.shape().to_vec(),
        x.dtype(),
        x.stream(),
    )
}

/// The cotangents of `leaves` for `outputs` with `cotangents`.
fn backward(outputs: &[Array], leaves: &[Array], cotangents: &[Array]) -> Result<Vec<Array>> {
    let leaf_ids: HashSet<usize> = leaves.iter().map(Array::id).collect();
    let order = order_by(outputs, |node| {
        if leaf_ids.contains(&node.id()) || node.primitive().is_none() || node.is_evaluated() {
            Visit::Leaf
        } else {
            Visit::Inputs
        }
    });
    // The nodes a leaf reaches with a float value: only they carry cotangents.
    let mut active: HashSet<usize> = leaf_ids.clone();
    for node in &order {
        let reached = node.inputs().iter().any(|x| active.contains(&x.id()));
        if reached && !leaf_ids.contains(&node.id()) && node.dtype().is_float() {
            active.insert(node.id());
        }
    }
    // Each node's cotangents as they arrive, summed once every consumer has given its own.
    let mut sums: HashMap<usize, Vec<Array>> = HashMap::default();
    for (y, c) in outputs.iter().zip(cotangents) {
        accumulate(&mut sums, &active, y, c.clone())?;
    }
    for node in order.iter().rev() {
        if leaf_ids.contains(&node.id()) {
            continue;
        }
        let Some(g) = summed(&mut sums, node)? else {
            continue;
        };
        let inputs = node.inputs();
        let wanted: Vec<bool> = inputs.iter().map(|x| active.contains(&x.id())).collect();
        let grads = rules::input_cotangents(node, &inputs, &g, &wanted)?;
        for ((x, gx), want) in inputs.iter().zip(grads).zip(wanted) {
            if let (Some(gx), true) = (gx, want) {
                accumulate(&mut sums, &active, x, gx)?;
            }
        }
    }
    leaves
        .iter()
        .map(|leaf| match summed(&mut sums, leaf)? {
            Some(g) => Ok(g),
            None => ops::zeros(leaf.shape(), leaf.dtype(), leaf.stream()),
        })
        .collect()
}

/// Adds `g` to the cotangents of `x`, in `x`'s dtype, if `x` carries one.
fn accumulate(
    sums: &mut HashMap<usize, Vec<Array>>,
    active: &HashSet<usize>,
    x: &Array,
    g: Array,
) -> Result<()> {
    if !active.contains(&x.id()) {
        return Ok(());
    }
    let g = cotangent::in_dtype(&g, x.dtype(), x.stream());
    sums.entry(x.id()).or_default().push(g);
    Ok(())
}

/// The sum of `x`'s cotangents, in the order they arrived: the slices of a `split` (each a
/// slice of `x` placed in zeros) are joined into one concatenation instead of added.
fn summed(sums: &mut HashMap<usize, Vec<Array>>, x: &Array) -> Result<Option<Array>> {
    let Some(parts) = sums.remove(&x.id()) else {
        return Ok(None);
    };
    if let Some(joined) = indexing::joined(x.shape(), &parts, x.stream())? {
        return Ok(Some(joined));
    }
    let mut parts = parts.into_iter();
    let first = parts
        .next()
        .expect("a cotangent is recorded with its first part");
    parts
        .try_fold(first, |sum, g| ops::add(&sum, &g, x.stream()))
        .map(Some)
}
