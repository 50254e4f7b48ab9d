//! The fast path of a fused program over float32: every step a float op with a four-lane form
//! (`binary::float_lanes`, `unary::float_into`), every input float32 and read in place
//! (row-major), as one value, or as one row repeated (a bias). A chunk's steps write into a
//! per-thread scratch of one chunk per step, kept between chunks and calls, so a chunk
//! allocates nothing: the general path allocates every step's value, and in a convolution's
//! epilogue (bias and ReLU on each block of 96 rows, run by both threads at once) that was
//! most of the epilogue's time. The kernels are the unfused ops' own, so the values match the
//! ops run one by one bit for bit, as the general path's do.

use std::cell::Cell;
use std::mem::MaybeUninit;

use crate::cpu::cast::Operand;
use crate::cpu::simd::F32x4;
use crate::cpu::{binary, lanes, unary};
use crate::dtype::DType;
use crate::graph::primitive::{FusedExpr, Step, UnaryOp};
use crate::graph::shape::repeated_row;

use super::{CHUNK, is_row_major, repeat};

/// How one of the program's inputs is read over a chunk.
#[derive(Clone, Copy)]
enum Leaf<'a> {
    /// Input 0 of a program run in place: the chunk's own values.
    Chunk,
    /// One element for all.
    Splat(f32),
    /// Row-major from the start of `data`.
    Dense(&'a [f32]),
    /// One row repeated: element `i` is `row[i % row.len()]`.
    Row(&'a [f32]),
}

/// A step's value over the chunk being run.
#[derive(Clone, Copy)]
pub enum Value {
    Splat(f32),
    /// The chunk itself (input 0 in place).
    Chunk,
    /// Input `k`, row-major.
    Input(usize),
    /// The scratch slot of step `i`.
    Slot(usize),
}

/// The program's value over a chunk, for the caller to store.
pub enum Final<'s> {
    /// The chunk's own values: nothing to store.
    Chunk,
    Splat(f32),
    Values(&'s [f32]),
}

/// A program the fast path can run, with its inputs read as leaves (by input index).
pub struct Plan<'e, 'a> {
    expr: &'e FusedExpr,
    leaves: Vec<Option<Leaf<'a>>>,
}

impl<'e, 'a> Plan<'e, 'a> {
    /// The plan of `expr` over `shape`, or `None` where the general path must run it (a step
    /// or dtype without a lane form, an input that must be gathered). `in_place`: input 0 is
    /// the chunk itself.
    pub fn new(
        expr: &'e FusedExpr,
        shape: &[usize],
        inputs: &[Operand<'a>],
        in_place: bool,
    ) -> Option<Self> {
        let float = |i: usize| expr.dtypes[i] == DType::Float32;
        let mut leaves = vec![None; inputs.len()];
        for (i, step) in expr.steps.iter().enumerate() {
            let fits = float(i)
                && match *step {
                    Step::Input(0) if in_place => {
                        leaves[0] = Some(Leaf::Chunk);
                        true
                    }
                    Step::Input(k) => {
                        leaves[k] = Some(leaf(&inputs[k], shape)?);
                        true
                    }
                    Step::Unary(op, a) => float(a) && has_lanes(op),
                    Step::Binary(op, a, b) => {
                        float(a) && float(b) && binary::float_lanes(op, Probe).is_some()
                    }
                    Step::Where(..) => false,
                };
            if !fits {
                return None;
            }
        }
        Some(Self { expr, leaves })
    }

    /// The program over elements `start..start + len` (at most [`CHUNK`]); `first` is the
    /// chunk's own values where the plan runs in place.
    pub fn run<'s>(
        &'s self,
        first: Option<&[f32]>,
        (start, len): (usize, usize),
        scratch: &'s mut Vec<f32>,
        values: &mut Vec<Value>,
    ) -> Final<'s>
    where
        'a: 's,
    {
        let steps = &self.expr.steps;
        scratch.resize(steps.len() * CHUNK, 0.0);
        values.clear();
        for (i, step) in steps.iter().enumerate() {
            let (done, rest) = scratch.split_at_mut(i * CHUNK);
            let dst = uninit(&mut rest[..len]);
            let side = |v: Value| self.side(v, done, first, (start, len));
            let value = match *step {
                Step::Input(k) => match self.leaves[k].expect("planned") {
                    Leaf::Chunk => Value::Chunk,
                    Leaf::Splat(v) => Value::Splat(v),
                    Leaf::Dense(_) => Value::Input(k),
                    Leaf::Row(row) => {
                        repeat(row, start, dst);
                        Value::Slot(i)
                    }
                },
                Step::Unary(op, a) => match side(values[a]) {
                    Side::Splat(v) => {
                        unary::float_into(op, &[v], &mut dst[..1]);
                        Value::Splat(rest[0])
                    }
                    Side::Dense(x) => {
                        unary::float_into(op, x, dst);
                        Value::Slot(i)
                    }
                },
                Step::Binary(op, a, b) => {
                    let into = Into {
                        a: side(values[a]),
                        b: side(values[b]),
                        dst,
                    };
                    match binary::float_lanes(op, into).expect("planned") {
                        Some(v) => Value::Splat(v),
                        None => Value::Slot(i),
                    }
                }
                Step::Where(..) => unreachable!("not planned"),
            };
            values.push(value);
        }
        let scratch = &*scratch;
        match *values.last().expect("a program has steps") {
            Value::Chunk => Final::Chunk,
            Value::Splat(v) => Final::Splat(v),
            Value::Input(k) => Final::Values(self.dense(k, start, len)),
            Value::Slot(i) => Final::Values(&scratch[i * CHUNK..i * CHUNK + len]),
        }
    }

    /// A value as a lane side over the chunk.
    fn side<'v>(
        &'v self,
        value: Value,
        done: &'v [f32],
        first: Option<&'v [f32]>,
        (start, len): (usize, usize),
    ) -> Side<'v> {
        match value {
            Value::Splat(v) => Side::Splat(v),
            Value::Chunk => Side::Dense(&first.expect("an in-place plan has its chunk")[..len]),
            Value::Input(k) => Side::Dense(self.dense(k, start, len)),
            Value::Slot(i) => Side::Dense(&done[i * CHUNK..i * CHUNK + len]),
        }
    }

    fn dense(&self, k: usize, start: usize, len: usize) -> &'a [f32] {
        match self.leaves[k] {
            Some(Leaf::Dense(data)) => &data[start..start + len],
            _ => unreachable!("input {k} is read in place"),
        }
    }
}

/// The most steps whose scratch a thread keeps between calls (256 KiB): a longer program's
/// is let go after each call, so that one long program does not hold memory for good.
pub(super) const KEPT_STEPS: usize = 32;

/// Runs `f` with this thread's scratch (one chunk per step, and the steps' values), kept
/// between calls; a nested call on the same thread gets new ones.
pub fn with_scratch<R>(f: impl FnOnce(&mut Vec<f32>, &mut Vec<Value>) -> R) -> R {
    thread_local! {
        static SCRATCH: Cell<(Vec<f32>, Vec<Value>)> = const { Cell::new((Vec::new(), Vec::new())) };
    }
    let (mut slots, mut values) = SCRATCH.take();
    let result = f(&mut slots, &mut values);
    if slots.capacity() <= KEPT_STEPS * CHUNK {
        SCRATCH.set((slots, values));
    }
    result
}

/// Input `x` over `shape` as a leaf, or `None` where it must be gathered.
fn leaf<'a>(x: &Operand<'a>, shape: &[usize]) -> Option<Leaf<'a>> {
    if x.dtype != DType::Float32 {
        return None;
    }
    let data: &[f32] = bytemuck::cast_slice(&x.words[x.offset..]);
    if x.strides.iter().all(|&s| s == 0) {
        return Some(Leaf::Splat(data[0]));
    }
    if is_row_major(x, shape) {
        return Some(Leaf::Dense(data));
    }
    repeated_row(shape, x.strides).map(|period| Leaf::Row(&data[..period]))
}

/// Whether `unary::float_into` runs `op` (every float op but the tests).
fn has_lanes(op: UnaryOp) -> bool {
    use UnaryOp::*;
    !matches!(op, Cast | LogicalNot | IsNan | IsInf | IsFinite)
        && op.compute_dtype(DType::Float32) == DType::Float32
}

/// An initialized slice as slots to write (writing initialized values keeps it so).
fn uninit(s: &mut [f32]) -> &mut [MaybeUninit<f32>] {
    // SAFETY: MaybeUninit<f32> has f32's layout, and every write stores an initialized f32.
    unsafe { &mut *(s as *mut [f32] as *mut [MaybeUninit<f32>]) }
}

/// A binary step's operand over the chunk.
#[derive(Clone, Copy)]
enum Side<'v> {
    Splat(f32),
    Dense(&'v [f32]),
}

/// A binary step over the chunk into `dst`: `Some(value)` when both sides are one value.
struct Into<'v, 'd> {
    a: Side<'v>,
    b: Side<'v>,
    dst: &'d mut [MaybeUninit<f32>],
}

impl binary::LaneRun for Into<'_, '_> {
    type Out = Option<f32>;
    fn run(self, f: impl Fn(F32x4, F32x4) -> F32x4 + Sync) -> Option<f32> {
        // As `lanes::binary` pairs the sides, so that each lane sees the same instructions.
        match (self.a, self.b) {
            (Side::Dense(a), Side::Dense(b)) => lanes::zip_into(a, b, self.dst, &f),
            (Side::Dense(a), Side::Splat(v)) => {
                lanes::unary_into(a, self.dst, &|x| f(x, F32x4::splat(v)));
            }
            (Side::Splat(v), Side::Dense(b)) => {
                lanes::unary_into(b, self.dst, &|y| f(F32x4::splat(v), y));
            }
            (Side::Splat(u), Side::Splat(v)) => {
                return Some(f(F32x4::splat(u), F32x4::splat(v)).to_array()[0]);
            }
        }
        None
    }
}

/// Asks only whether an op has a lane form.
struct Probe;

impl binary::LaneRun for Probe {
    type Out = ();
    fn run(self, _: impl Fn(F32x4, F32x4) -> F32x4 + Sync) {}
}
