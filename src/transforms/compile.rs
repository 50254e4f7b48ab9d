//! `compile`: a function's graph, traced once and replayed (MLX's `mx.compile`).
//!
//! Tracing runs the function on stand-ins for the call's arrays (below); ops only build lazy
//! nodes, so the result is a graph from the inputs to the outputs. Its elementwise chains are
//! fused ([`crate::transforms::fuse`], always, since the program runs on every call), then the
//! graph is recorded as a [`Tape`]: a list of primitives with their shapes, dtypes and
//! streams, whose operands are the inputs, constants (arrays the function closed over or made
//! from data), literals (the one-element arrays it made from numbers) or earlier entries. A
//! replay makes one node per entry for new inputs of the same shapes and dtypes, so a compiled
//! call costs a node per fused region instead of a call per op.
//!
//! A literal is kept as its word, not as an array: a tape holds no memory for the numbers of
//! its function. Each replay makes the literal's one-element array afresh, as the plain op
//! does, and it goes with that call's nodes; a GPU kernel reads it as a parameter word either
//! way. Constants are arrays, held (and counted) for as long as the tape lives.
//!
//! The stand-ins are a view of each array, or a copy of a one-element host array: nodes of
//! the call's own, never the arrays themselves. An array the function closes over may also be
//! an argument of the traced call, and the tape must tell the two apart. Traced on the
//! argument itself, the closed-over array would be recorded as the input, and a later call
//! would use its own argument where the function meant the array it closed over.
//!
//! A traced function must stay lazy: an array it evaluated or read while tracing would be a
//! constant of the tape, silently the same on every call, so tracing refuses it. Random ops
//! inside it would draw the same numbers on every replay, so tracing refuses them too.

use rustc_hash::FxHashMap as HashMap;

use crate::array::{Array, Visit, order_by};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::primitive::Primitive;
use crate::stream::Stream;
use crate::transforms::fuse::{When, fuse};

/// Where an entry's operand comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ref {
    Input(usize),
    Constant(usize),
    Literal(usize),
    Entry(usize),
}

/// A number the traced function made into a one-element array: its word, shape and dtype.
#[derive(Debug)]
struct Literal {
    word: u32,
    shape: Vec<usize>,
    dtype: DType,
}

impl Literal {
    /// The word of a one-element array whose data is on the host only.
    fn read(node: &Array) -> Option<Literal> {
        if !node.is_host_scalar() {
            return None;
        }
        let data = node.data()?;
        let words = data.storage.host_words()?;
        // The element's bits (a packed dtype's element sits inside a word).
        let word = crate::dtype::packed::bits(&words, node.dtype(), data.layout.offset);
        Some(Literal {
            word,
            shape: node.shape().to_vec(),
            dtype: node.dtype(),
        })
    }

    fn array(&self) -> Result<Array> {
        Array::from_words(vec![self.word], &self.shape, self.dtype)
    }
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
    literals: Vec<Literal>,
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
            literals: Vec::new(),
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
            // Made here, it is data (an op was refused above): a number's array is a literal.
            if let Some(literal) = made_here.then(|| Literal::read(node)).flatten() {
                self.literals.push(literal);
                return Ok(Ref::Literal(self.literals.len() - 1));
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

    /// The outputs for `inputs`, which have the traced inputs' shapes and dtypes. Fails only
    /// when the memory limit refuses a literal's one-element array.
    pub fn replay(&self, inputs: &[Array]) -> Result<Vec<Array>> {
        let literals = self
            .literals
            .iter()
            .map(Literal::array)
            .collect::<Result<Vec<_>>>()?;
        let mut made: Vec<Array> = Vec::with_capacity(self.entries.len());
        let get = |r: Ref, made: &[Array]| match r {
            Ref::Input(k) => inputs[k].clone(),
            Ref::Constant(k) => self.constants[k].clone(),
            Ref::Literal(k) => literals[k].clone(),
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
        Ok(self.outputs.iter().map(|&r| get(r, &made)).collect())
    }

    /// The arrays the tape holds: what the function closed over or made from data (not its
    /// numbers, which it keeps as words).
    pub fn constants(&self) -> &[Array] {
        &self.constants
    }

    /// Nodes each replay makes.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Stand-ins for a call's arrays to trace the function on (see [`stand_in`]), so that the
/// trace computes what the call would, through nodes that are the call's alone. An array passed
/// twice has one stand-in, as the key of the call says.
pub fn stand_ins(arrays: &[Array]) -> Vec<Array> {
    let mut made: Vec<Array> = Vec::with_capacity(arrays.len());
    for (k, x) in arrays.iter().enumerate() {
        if let Some(j) = arrays[..k].iter().position(|a| a.id() == x.id()) {
            made.push(made[j].clone());
            continue;
        }
        made.push(stand_in(x));
    }
    made
}

/// A view of `x`; for a one-element array on the host, a copy of its word instead, so that
/// fusion plans the trace as it plans the call (a GPU kernel takes such an array as a
/// parameter word, not a buffer).
fn stand_in(x: &Array) -> Array {
    if let Some(literal) = Literal::read(x)
        && let Ok(copy) = literal.array()
    {
        return copy;
    }
    let shape: Vec<isize> = x.shape().iter().map(|&d| d as isize).collect();
    crate::ops::shape::reshape(x, &shape, x.stream()).expect("an array reshapes to its own shape")
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
    use crate::graph::primitive::{BinaryOp, UnaryOp};
    use crate::ops;
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
        let replayed = tape.replay(&[x2, y]).unwrap();
        assert!(matches!(replayed[0].primitive(), Some(Primitive::Fused(_))));
        assert_eq!(replayed[0].inputs().len(), 2);
    }

    #[test]
    fn numbers_the_trace_makes_are_words_not_arrays_and_each_replay_makes_its_own() {
        let x = Array::from_f32(&[1.0, 2.0], &[2]).unwrap();
        let kept = Array::from_f32(&[0.25], &[]).unwrap();
        let since = next_serial();
        let three = Array::from_f32(&[3.0], &[]).unwrap();
        let scaled = ops::binary(BinaryOp::Multiply, &x, &three, Device::Cpu).unwrap();
        let out = ops::add(&scaled, &kept, Device::Cpu).unwrap();
        drop((three, scaled));
        let tape = Tape::record(std::slice::from_ref(&x), &[out], since).unwrap();
        assert_eq!(
            tape.constants().len(),
            1,
            "only the array made before the trace"
        );
        assert_eq!(tape.constants()[0].id(), kept.id());
        let operands = |a: &Array| match a.primitive() {
            Some(Primitive::Fused(_)) => a.inputs(),
            other => panic!("a fused node, not {other:?}"),
        };
        let first = tape.replay(std::slice::from_ref(&x)).unwrap();
        let second = tape.replay(std::slice::from_ref(&x)).unwrap();
        let (a, b) = (operands(&first[0]), operands(&second[0]));
        let literal = |list: &[Array]| {
            list.iter()
                .find(|n| n.id() != x.id() && n.id() != kept.id())
                .cloned()
                .expect("the literal's array")
        };
        let (la, lb) = (literal(&a), literal(&b));
        assert_ne!(la.id(), lb.id(), "each replay makes its own");
        assert!(la.is_host_scalar());
        assert_eq!(
            la.storage().unwrap().host_words().unwrap()[0],
            3.0f32.to_bits()
        );
    }

    #[test]
    fn an_array_closed_over_that_is_also_the_argument_stays_a_constant() {
        let k = Array::from_f32(&[2.0, 3.0], &[2]).unwrap();
        let f = |x: &Array| {
            let neg = ops::unary(UnaryOp::Neg, &k, Device::Cpu).unwrap();
            ops::add(&neg, x, Device::Cpu).unwrap()
        };
        let args = [k.clone()];
        let traced_on = stand_ins(&args);
        assert_ne!(traced_on[0].id(), k.id());
        let since = next_serial();
        let out = f(&traced_on[0]);
        let tape = Tape::record(&traced_on, &[out], since).unwrap();
        assert_eq!(tape.constants().len(), 1);
        assert_eq!(tape.constants()[0].id(), k.id(), "k is the constant");
        let other = Array::from_f32(&[10.0, 20.0], &[2]).unwrap();
        let replayed = tape.replay(std::slice::from_ref(&other)).unwrap();
        let inputs = replayed[0].inputs();
        assert!(inputs.iter().any(|a| a.id() == k.id()), "reads k");
        assert!(
            inputs.iter().any(|a| a.id() == other.id()),
            "and the new argument"
        );
        let twice = stand_ins(&[k.clone(), k.clone(), other.clone()]);
        assert_eq!(twice[0].id(), twice[1].id());
        assert_ne!(twice[0].id(), twice[2].id());
        let scalar = Array::from_f32(&[4.0], &[]).unwrap();
        let copy = &stand_ins(std::slice::from_ref(&scalar))[0];
        assert!(
            copy.is_host_scalar() && copy.id() != scalar.id(),
            "a host scalar is copied"
        );
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
