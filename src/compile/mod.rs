//! `compile`: a function's graph, traced once and replayed (MLX's `mx.compile`).
//!
//! Tracing runs the function on the call's own arrays; ops only build lazy nodes, so the
//! result is a graph from the inputs to the outputs. Its elementwise chains are fused
//! ([`crate::fuse`], always, since the program runs on every call), then the graph is recorded
//! as a [`Tape`]: a list of primitives with their shapes, dtypes and streams, whose operands
//! are the inputs, constants (arrays the function closed over, numbers it made) or earlier
//! entries. A replay makes one node per entry for new inputs of the same shapes and dtypes, so
//! a compiled call costs a node per fused region instead of a call per op.
//!
//! A traced function must stay lazy: an array it evaluated or read while tracing would be a
//! constant of the tape, silently the same on every call, so tracing refuses it. Random ops
//! inside it would draw the same numbers on every replay, so tracing refuses them too.

use rustc_hash::FxHashMap as HashMap;

use crate::array::{Array, Visit, order_by};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::fuse::{When, fuse};
use crate::primitive::Primitive;
use crate::stream::Stream;

/// Where an entry's operand comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ref {
    Input(usize),
    Constant(usize),
    Entry(usize),
}

#[derive(Debug)]
struct Entry {
    primitive: Primitive,
    inputs: Vec<Ref>,
    shape: Vec<usize>,
    dtype: DType,
    stream: Stream,
}

/// A recorded graph; see the module documentation.
#[derive(Debug)]
pub struct Tape {
    entries: Vec<Entry>,
    constants: Vec<Array>,
    outputs: Vec<Ref>,
}

impl Tape {
    /// Records the graph from `inputs` to `outputs`, fusing it first. Nodes made at or after
    /// serial `since` were made by the trace. The caller holds nothing else of the traced
    /// graph, so that fusion may fold every intermediate.
    pub fn record(inputs: &[Array], outputs: &[Array], since: u64) -> Result<Tape> {
        fuse(outputs, When::Always);
        let mut input_of: HashMap<usize, usize> = HashMap::default();
        for (k, x) in inputs.iter().enumerate() {
            input_of.entry(x.id()).or_insert(k);
        }
        let mut tape = Tape {
            entries: Vec::new(),
            constants: Vec::new(),
            outputs: Vec::new(),
        };
        let mut refs: HashMap<usize, Ref> = HashMap::default();
        for node in walk(outputs, &input_of) {
            let r = tape.place(&node, &input_of, &refs, since)?;
            refs.insert(node.id(), r);
        }
        tape.outputs = outputs.iter().map(|o| refs[&o.id()]).collect();
        Ok(tape)
    }

    /// The ref of `node`, whose operands are placed already; adds an entry or a constant.
    fn place(
        &mut self,
        node: &Array,
        input_of: &HashMap<usize, usize>,
        refs: &HashMap<usize, Ref>,
        since: u64,
    ) -> Result<Ref> {
        if let Some(&k) = input_of.get(&node.id()) {
            return Ok(Ref::Input(k));
        }
        let made_here = node.serial() >= since;
        if node.is_evaluated() || node.primitive().is_none() {
            if made_here && node.primitive().is_some() {
                return Err(Error::Value(
                    "compile: the function evaluated or read an array while it was traced; a \
                     compiled function must stay lazy (no evaluate, toArray or item inside it)"
                        .into(),
                ));
            }
            self.constants.push(node.clone());
            return Ok(Ref::Constant(self.constants.len() - 1));
        }
        let primitive = node.primitive().expect("a lazy node has a primitive");
        if made_here && matches!(primitive, Primitive::Random(..)) {
            return Err(Error::Value(
                "compile: the function draws random numbers, which a replay would repeat on \
                 every call; draw them outside and pass them in"
                    .into(),
            ));
        }
        let inputs = node.inputs().iter().map(|x| refs[&x.id()]).collect();
        self.entries.push(Entry {
            primitive,
            inputs,
            shape: node.shape().to_vec(),
            dtype: node.dtype(),
            stream: node.stream(),
        });
        Ok(Ref::Entry(self.entries.len() - 1))
    }

    /// The outputs for `inputs`, which have the traced inputs' shapes and dtypes.
    pub fn replay(&self, inputs: &[Array]) -> Vec<Array> {
        let mut made: Vec<Array> = Vec::with_capacity(self.entries.len());
        let get = |r: Ref, made: &[Array]| match r {
            Ref::Input(k) => inputs[k].clone(),
            Ref::Constant(k) => self.constants[k].clone(),
            Ref::Entry(k) => made[k].clone(),
        };
        for entry in &self.entries {
            let operands = entry.inputs.iter().map(|&r| get(r, &made)).collect();
            made.push(Array::from_primitive(
                entry.primitive.clone(),
                operands,
                entry.shape.clone(),
                entry.dtype,
                entry.stream,
            ));
        }
        self.outputs.iter().map(|&r| get(r, &made)).collect()
    }

    /// Nodes each replay makes.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The traced graph's nodes, each after its operands, stopping at inputs, evaluated nodes
/// and data.
fn walk(outputs: &[Array], input_of: &HashMap<usize, usize>) -> Vec<Array> {
    order_by(outputs, |node| {
        if input_of.contains_key(&node.id()) || node.is_evaluated() {
            Visit::Leaf
        } else {
            Visit::Inputs
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::next_serial;
    use crate::ops;
    use crate::primitive::UnaryOp;
    use crate::stream::Device;

    fn f(x: &Array, y: &Array) -> Array {
        let e = ops::unary(UnaryOp::Exp, x, Device::Cpu).unwrap();
        let s = ops::add(&e, y, Device::Cpu).unwrap();
        ops::unary(UnaryOp::Tanh, &s, Device::Cpu).unwrap()
    }

    #[test]
    fn a_tape_fuses_the_trace_and_replays_it_for_new_inputs() {
        let x = Array::from_f32(&[1.0, 2.0], &[2]).unwrap();
        let y = Array::from_f32(&[0.5], &[]).unwrap();
        let since = next_serial();
        let out = f(&x, &y);
        let tape = Tape::record(&[x.clone(), y.clone()], &[out], since).unwrap();
        assert_eq!(tape.len(), 1, "three ops, one fused entry");
        let x2 = Array::from_f32(&[3.0, 4.0], &[2]).unwrap();
        let replayed = tape.replay(&[x2, y]);
        assert!(matches!(replayed[0].primitive(), Some(Primitive::Fused(_))));
        assert_eq!(replayed[0].inputs().len(), 2);
    }

    #[test]
    fn random_ops_made_by_the_trace_are_refused() {
        let x = Array::from_f32(&[1.0], &[1]).unwrap();
        let since = next_serial();
        let r = ops::random::uniform(&[1], [1, 2], 0.0, 1.0, Device::Cpu).unwrap();
        let out = ops::add(&x, &r, Device::Cpu).unwrap();
        let err = Tape::record(&[x], &[out], since).unwrap_err();
        assert!(err.to_string().contains("random"), "{err}");
    }
}
