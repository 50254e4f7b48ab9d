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

use super::{CHUNK, is_row_major};

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

/// Runs `f` with this thread's scratch (one chunk per step, and the steps' values), kept
/// between calls; a nested call on the same thread gets new ones.
pub fn with_scratch<R>(f: impl FnOnce(&mut Vec<f32>, &mut Vec<Value>) -> R) -> R {
    thread_local! {
        static SCRATCH: Cell<(Vec<f32>, Vec<Value>)> = const { Cell::new((Vec::new(), Vec::new())) };
    }
    let (mut slots, mut values) = SCRATCH.take();
    let result = f(&mut slots, &mut values);
    SCRATCH.set((slots, values));
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

/// Elements `start..start + dst.len()` of `row` repeated, into `dst`.
fn repeat(row: &[f32], start: usize, dst: &mut [MaybeUninit<f32>]) {
    let mut at = start % row.len();
    let mut filled = 0;
    while filled < dst.len() {
        let take = (row.len() - at).min(dst.len() - filled);
        for (d, &v) in dst[filled..filled + take]
            .iter_mut()
            .zip(&row[at..at + take])
        {
            d.write(v);
        }
        filled += take;
        at = 0;
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::fused::tests::operand;
    use crate::cpu::fused::{fused, fused_in_place};
    use crate::graph::primitive::BinaryOp;

    fn floats(n: usize, seed: u32) -> Vec<u32> {
        (0..n)
            .map(|i| {
                let v = (i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed) % 4001;
                (v as f32 / 1000.0 - 2.0).to_bits()
            })
            .collect()
    }

    #[test]
    fn a_planned_program_matches_its_ops_one_by_one_bit_for_bit() {
        // log2(|relu(x + bias) * 0.5 - y| + e^0.5), over [3, 1001]: chunks of 2048 that end
        // mid-row and mid-vector, a bias row repeated, a splat chain (e^0.5) and a float64 op.
        let shape = [3, 1001];
        let (x, y, bias) = (floats(3003, 1), floats(3003, 2), floats(1001, 3));
        let (half, dense, row, splat) = ([0.5f32.to_bits()], [1001, 1], [0, 1], [0, 0]);
        let expr = FusedExpr {
            steps: vec![
                Step::Input(0),
                Step::Input(1),
                Step::Binary(BinaryOp::Add, 0, 1),
                Step::Unary(UnaryOp::Relu, 2),
                Step::Input(2),
                Step::Binary(BinaryOp::Multiply, 3, 4),
                Step::Input(3),
                Step::Binary(BinaryOp::Subtract, 5, 6),
                Step::Unary(UnaryOp::Abs, 7),
                Step::Unary(UnaryOp::Exp, 4),
                Step::Binary(BinaryOp::Add, 8, 9),
                Step::Unary(UnaryOp::Log2, 10),
            ],
            dtypes: vec![DType::Float32; 12],
        };
        let inputs = [
            operand(&x, &dense),
            operand(&bias, &row),
            operand(&half, &splat),
            operand(&y, &dense),
        ];
        assert!(Plan::new(&expr, &shape, &inputs, false).is_some());
        let got = fused(&expr, &shape, &inputs).unwrap();

        let f32 = DType::Float32;
        let bin = |op, a: &[u32], sa: &[isize], b: &[u32], sb: &[isize]| {
            binary::binary(op, f32, &shape, operand(a, sa), operand(b, sb))
        };
        let un =
            |op, a: &[u32], sa: &[isize]| unary::unary(op, f32, &shape, operand(a, sa)).unwrap();
        let sum = bin(BinaryOp::Add, &x, &dense, &bias, &row);
        let relu = un(UnaryOp::Relu, &sum, &dense);
        let scaled = bin(BinaryOp::Multiply, &relu, &dense, &half, &splat);
        let diff = bin(BinaryOp::Subtract, &scaled, &dense, &y, &dense);
        let abs = un(UnaryOp::Abs, &diff, &dense);
        let e = un(UnaryOp::Exp, &half, &splat);
        let total = bin(BinaryOp::Add, &abs, &dense, &e, &splat);
        let want = un(UnaryOp::Log2, &total, &dense);
        assert_eq!(got, want);

        // The same program in place over a block of rows from row 1 on: input 0 is the block.
        let mut block = x[1001..].to_vec();
        fused_in_place(
            (&expr, &expr.last_uses()),
            &shape,
            &inputs,
            1001,
            &mut block,
        )
        .unwrap();
        assert_eq!(block, want[1001..]);
    }

    #[test]
    fn gathered_inputs_and_selects_take_the_general_path() {
        let shape = [4, 8];
        let x = floats(32, 4);
        let add = FusedExpr {
            steps: vec![
                Step::Input(0),
                Step::Input(1),
                Step::Binary(BinaryOp::Add, 0, 1),
            ],
            dtypes: vec![DType::Float32; 3],
        };
        let (dense, transposed) = ([8isize, 1], [1isize, 4]);
        let both = [operand(&x, &dense), operand(&x, &dense)];
        assert!(Plan::new(&add, &shape, &both, false).is_some());
        let gathered = [operand(&x, &dense), operand(&x, &transposed)];
        assert!(Plan::new(&add, &shape, &gathered, false).is_none());
        let select = FusedExpr {
            steps: vec![Step::Input(0), Step::Input(1), Step::Where(0, 1, 1)],
            dtypes: vec![DType::Bool, DType::Float32, DType::Float32],
        };
        assert!(Plan::new(&select, &shape, &both, false).is_none());
        let compare = FusedExpr {
            steps: vec![
                Step::Input(0),
                Step::Input(1),
                Step::Binary(BinaryOp::Less, 0, 1),
            ],
            dtypes: vec![DType::Float32, DType::Float32, DType::Bool],
        };
        assert!(Plan::new(&compare, &shape, &both, false).is_none());
    }
}
