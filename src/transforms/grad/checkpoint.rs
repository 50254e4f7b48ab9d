//! `checkpoint(fun)` (MLX's `mx.checkpoint`): the function's outputs come out through
//! `View::Checkpoint` markers, whose inputs are the output and the function's inputs. The
//! backward pass stops at a marker: rather than walking into the function's graph (whose
//! activations it would then keep for the backward pass), it runs the function again on its
//! inputs and takes that copy's vjp. The copy's inputs go through `View::Depends` on the
//! marker's cotangent, so the scheduler cannot recompute before the backward pass gets there:
//! the forward activations are freed once the forward pass is done with them, and the
//! recomputed ones once their backward ops have run.

use std::rc::Rc;

use crate::array::Array;
use crate::error::{Error, Result};
use crate::graph::primitive::{Opaque, Primitive, View};
use crate::ops;
use crate::stream::Stream;

/// A function of arrays that can be called again (to recompute), such as a checkpointed one.
pub type Function = Rc<dyn Fn(&[Array]) -> Result<Vec<Array>>>;

/// The outputs of `fun` at `inputs`, whose gradients recompute `fun` instead of keeping its
/// intermediates. A function of several outputs is recomputed once per output that gets a
/// cotangent.
pub fn checkpoint(fun: Function, inputs: &[Array]) -> Result<Vec<Array>> {
    let outputs = fun(inputs)?;
    let function = Opaque(Rc::new(fun));
    Ok(outputs
        .iter()
        .enumerate()
        .map(|(output, y)| {
            let view = View::Checkpoint {
                output,
                function: function.clone(),
            };
            let marker_inputs = std::iter::once(y.clone()).chain(inputs.iter().cloned());
            Array::from_primitive(
                Primitive::View(view),
                marker_inputs.collect(),
                y.shape().to_vec(),
                y.dtype(),
                y.stream(),
            )
        })
        .collect())
}

/// `x`, computed only once `after` has been.
pub(super) fn depends(x: &Array, after: &Array, stream: Stream) -> Array {
    Array::from_primitive(
        Primitive::View(View::Depends),
        vec![x.clone(), after.clone()],
        x.shape().to_vec(),
        x.dtype(),
        stream,
    )
}

/// The cotangents of a checkpoint marker's inputs for its cotangent `g`: none to the saved
/// output (input 0), and to the function's inputs those of a recomputed copy.
pub(super) fn input_cotangents(
    output: usize,
    function: &Opaque,
    inputs: &[Array],
    g: &Array,
    s: Stream,
) -> Result<Vec<Option<Array>>> {
    let fun = function
        .0
        .downcast_ref::<Function>()
        .expect("a checkpoint marker holds its function");
    let after: Vec<Array> = inputs[1..].iter().map(|x| depends(x, g, s)).collect();
    let cotangents_for = |outputs: &[Array]| {
        if outputs.get(output).is_none_or(|y| y.shape() != g.shape()) {
            return Err(Error::Value(format!(
                "checkpoint: recomputed, the function no longer returns an output {output} of \
                 shape {:?}; a checkpointed function must return the same shapes each call",
                g.shape()
            )));
        }
        outputs
            .iter()
            .enumerate()
            .map(|(k, y)| match k == output {
                true => Ok(g.clone()),
                false => ops::zeros(y.shape(), y.dtype(), y.stream()),
            })
            .collect()
    };
    let (_, grads) = super::vjp_with(|xs| fun(xs), &after, cotangents_for)?;
    Ok(std::iter::once(None)
        .chain(grads.into_iter().map(Some))
        .collect())
}
