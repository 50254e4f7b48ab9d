//! Fused elementwise nodes on the CPU: the program runs over chunks of the output, each step
//! through the same kernel as its unfused op (`unary`, `binary`, `select`) on the chunk, so
//! values match the unfused ops bit for bit while intermediates stay a chunk long (in cache)
//! instead of whole arrays. An input of one element stays one value through the steps that
//! read only such values. A float32 program of ops with four-lane forms over inputs read in
//! place takes `lanes.rs`, which runs the same kernels without allocating.

mod lanes;

use std::borrow::Cow;
use std::mem::MaybeUninit;

use crate::cpu::cast::Operand;
use crate::cpu::{binary, pool, select, unary};
use crate::dtype::{DType, packed, promote};
use crate::error::Result;
use crate::graph::primitive::{FusedExpr, Step};
use crate::graph::shape::{contiguous_strides, numel, repeated_row};

/// Output elements per chunk: a few values of this length stay in L1.
const CHUNK: usize = 2048;

/// A step's value over one chunk: its elements' storage (packed for a packed dtype), or one
/// element for all of them. A packed leaf is read widened, and says so in `widened`.
struct Value<'a> {
    words: Cow<'a, [u32]>,
    splat: bool,
    widened: Option<DType>,
}

const DENSE: [isize; 1] = [1];
const SPLAT: [isize; 1] = [0];

impl Value<'_> {
    fn operand(&self, dtype: DType) -> Operand<'_> {
        Operand {
            words: &self.words,
            dtype: self.widened.unwrap_or(dtype),
            strides: if self.splat { &SPLAT } else { &DENSE },
            offset: 0,
        }
    }
}

/// `expr` over `shape`; `inputs` are broadcast over `shape` (their strides are). Long outputs
/// are split over the CPU pool in runs of whole chunks.
pub fn fused(expr: &FusedExpr, shape: &[usize], inputs: &[Operand]) -> Result<Vec<u32>> {
    let n = numel(shape);
    let dtype = *expr.dtypes.last().expect("a program has steps");
    let total = dtype.words(n);
    let last_uses = expr.last_uses();
    // Chunks are whole words of a packed result (CHUNK is a multiple of 4), and so are parts.
    let per = pool::part_len(n, expr.steps.len(), CHUNK);
    let plan = lanes::Plan::new(expr, shape, inputs, false);
    pool::try_zeroed_parts(total, dtype.words(per), |word, words: &mut [u32]| {
        let first = per * (word / dtype.words(per));
        let end = (first + per).min(n);
        if let Some(plan) = &plan {
            // A float32 program: one word an element.
            lanes_parts(plan, first..end, bytemuck::cast_slice_mut(words));
            return Ok(());
        }
        let mut at = 0;
        for start in (first..end).step_by(CHUNK) {
            let len = CHUNK.min(end - start);
            let value = run_chunk((expr, &last_uses), shape, inputs, None, start, len)?;
            let count = dtype.words(len);
            let to = &mut words[at..at + count];
            if value.splat {
                let bits = packed::bits(&value.words, dtype, 0);
                for (t, w) in to
                    .iter_mut()
                    .zip(packed::pack(std::iter::repeat_n(bits, len), dtype))
                {
                    *t = w;
                }
            } else {
                to.copy_from_slice(&value.words[..count]);
            }
            at += count;
        }
        Ok(())
    })
}

/// A program run in place over blocks of its output (a matmul's epilogue on each block of
/// finished rows, from any thread of the CPU pool), prepared once for every block: its steps'
/// last uses, and its plan where `lanes.rs` runs it.
pub struct InPlace<'p> {
    expr: &'p FusedExpr,
    shape: &'p [usize],
    inputs: &'p [Operand<'p>],
    last_uses: Vec<usize>,
    plan: Option<lanes::Plan<'p, 'p>>,
}

impl<'p> InPlace<'p> {
    /// `expr` over `shape`, whose input 0 is the block itself (input 0 of `inputs` is not
    /// read).
    pub fn new(expr: &'p FusedExpr, shape: &'p [usize], inputs: &'p [Operand<'p>]) -> Self {
        Self {
            expr,
            shape,
            inputs,
            last_uses: expr.last_uses(),
            plan: lanes::Plan::new(expr, shape, inputs, true),
        }
    }

    /// The program over elements `start..start + block.len()`, in place: `block` holds input
    /// 0's values there and gets the program's.
    pub fn run(&self, start: usize, block: &mut [u32]) -> Result<()> {
        if let Some(plan) = &self.plan {
            lanes_in_place(plan, start, bytemuck::cast_slice_mut(block));
            return Ok(());
        }
        for (c, chunk) in block.chunks_mut(CHUNK).enumerate() {
            let at = start + c * CHUNK;
            let words = {
                let (first, len) = (Some(&*chunk), chunk.len());
                let program = (self.expr, &self.last_uses[..]);
                let value = run_chunk(program, self.shape, self.inputs, first, at, len)?;
                (value.splat, value.words.into_owned())
            };
            match words {
                (true, word) => chunk.fill(word[0]),
                (false, words) => chunk.copy_from_slice(&words),
            }
        }
        Ok(())
    }
}

/// A planned program over elements `range` into `out`, a chunk at a time.
fn lanes_parts(plan: &lanes::Plan, range: std::ops::Range<usize>, out: &mut [f32]) {
    lanes::with_scratch(|slots, values| {
        let chunks = range.step_by(CHUNK).zip(out.chunks_mut(CHUNK));
        for (start, to) in chunks {
            match plan.run(None, (start, to.len()), slots, values) {
                lanes::Final::Splat(v) => to.fill(v),
                lanes::Final::Values(v) => to.copy_from_slice(v),
                lanes::Final::Chunk => unreachable!("only an in-place program reads its chunk"),
            }
        }
    });
}

/// A planned program in place over `block`, elements `start..`, a chunk at a time.
fn lanes_in_place(plan: &lanes::Plan, start: usize, block: &mut [f32]) {
    lanes::with_scratch(|slots, values| {
        for (c, chunk) in block.chunks_mut(CHUNK).enumerate() {
            let at = (start + c * CHUNK, chunk.len());
            match plan.run(Some(chunk), at, slots, values) {
                lanes::Final::Chunk => {}
                lanes::Final::Splat(v) => chunk.fill(v),
                lanes::Final::Values(v) => chunk.copy_from_slice(v),
            }
        }
    });
}

/// The program's value over elements `start..start + len`; `first`, where given, is input
/// 0's values there.
fn run_chunk<'a>(
    (expr, last_uses): (&FusedExpr, &[usize]),
    shape: &[usize],
    inputs: &[Operand<'a>],
    first: Option<&'a [u32]>,
    start: usize,
    len: usize,
) -> Result<Value<'a>> {
    let mut values: Vec<Option<Value<'a>>> = Vec::with_capacity(expr.steps.len());
    for (i, step) in expr.steps.iter().enumerate() {
        let value = match (*step, first) {
            (Step::Input(0), Some(words)) => Value {
                words: Cow::Borrowed(words),
                splat: false,
                widened: None,
            },
            (Step::Input(k), _) if inputs[k].dtype.is_packed() => {
                packed_chunk(&inputs[k], shape, start, len)
            }
            (Step::Input(k), _) => input_chunk(&inputs[k], shape, start, len),
            _ => {
                let get = |a: usize| values[a].as_ref().expect("a step's operands are live");
                let operands: Vec<&Value> = step.operands().into_iter().map(get).collect();
                let splat = operands.iter().all(|v| v.splat);
                let lanes = [if splat { 1 } else { len }];
                let dtype = |a: usize| expr.dtypes[a];
                let words = match *step {
                    Step::Unary(op, a) => {
                        unary::unary(op, expr.dtypes[i], &lanes, operands[0].operand(dtype(a)))?
                    }
                    Step::Binary(op, a, b) => binary::binary(
                        op,
                        promote(dtype(a), dtype(b)),
                        &lanes,
                        operands[0].operand(dtype(a)),
                        operands[1].operand(dtype(b)),
                    ),
                    Step::Where(c, x, y) => select::select(
                        expr.dtypes[i],
                        &lanes,
                        operands[0].operand(dtype(c)),
                        operands[1].operand(dtype(x)),
                        operands[2].operand(dtype(y)),
                    ),
                    Step::Input(_) => unreachable!("inputs are matched above"),
                };
                Value {
                    words: Cow::Owned(words),
                    splat,
                    widened: None,
                }
            }
        };
        values.push(Some(value));
        for a in step.operands() {
            if last_uses[a] == i {
                values[a] = None;
            }
        }
    }
    Ok(values
        .pop()
        .flatten()
        .expect("the last step is the program's value"))
}

/// Input elements `start..start + len` over `shape`: borrowed when the input is row-major
/// there, one word when it is one element broadcast, a row repeated, else gathered.
fn input_chunk<'a>(input: &Operand<'a>, shape: &[usize], start: usize, len: usize) -> Value<'a> {
    if input.strides.iter().all(|&s| s == 0) {
        return Value {
            words: Cow::Borrowed(&input.words[input.offset..input.offset + 1]),
            splat: true,
            widened: None,
        };
    }
    let words = if is_row_major(input, shape) {
        let from = input.offset + start;
        Cow::Borrowed(&input.words[from..from + len])
    } else if let Some(period) = repeated_row(shape, input.strides) {
        Cow::Owned(repeat_row(input, period, start, len))
    } else {
        Cow::Owned(gather(input, shape, start, len))
    };
    Value {
        words,
        splat: false,
        widened: None,
    }
}

/// Whether the input's strides over `shape` are row-major (axes of extent 1 aside).
fn is_row_major(input: &Operand, shape: &[usize]) -> bool {
    let dense = contiguous_strides(shape);
    shape
        .iter()
        .zip(input.strides.iter().zip(&dense))
        .all(|(&extent, (&s, &d))| extent <= 1 || s == d)
}

/// A packed input's elements `start..start + len` over `shape`, each widened to its compute
/// dtype's word (the casts after it then convert nothing).
fn packed_chunk<'a>(input: &Operand<'a>, shape: &[usize], start: usize, len: usize) -> Value<'a> {
    let splat = input.strides.iter().all(|&s| s == 0);
    let count = if splat { 1 } else { len };
    let element = |at| packed::element(input.words, input.dtype, at);
    let words = if !splat && is_row_major(input, shape) {
        let from = input.offset + start;
        (from..from + len).map(element).collect()
    } else {
        let mut words = Vec::with_capacity(count);
        walk(input, shape, start, count, |at| words.push(element(at)));
        words
    };
    Value {
        words: Cow::Owned(words),
        splat,
        widened: Some(input.dtype.compute()),
    }
}

/// Elements `start..start + len` of a row of `period` repeated.
fn repeat_row(input: &Operand, period: usize, start: usize, len: usize) -> Vec<u32> {
    let row = &input.words[input.offset..input.offset + period];
    let mut out = Vec::with_capacity(len);
    repeat(row, start, &mut out.spare_capacity_mut()[..len]);
    // SAFETY: `repeat` wrote all `len` elements.
    unsafe { out.set_len(len) };
    out
}

/// Elements `start..start + dst.len()` of `row` repeated end to end, into `dst`.
fn repeat<T: Copy>(row: &[T], start: usize, dst: &mut [MaybeUninit<T>]) {
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

/// The elements of a strided input at row-major positions `start..start + len`.
fn gather(input: &Operand, shape: &[usize], start: usize, len: usize) -> Vec<u32> {
    let mut out = Vec::with_capacity(len);
    walk(input, shape, start, len, |at| out.push(input.words[at]));
    out
}

/// Calls `visit` with where a strided input's elements at row-major positions
/// `start..start + len` are, in order (no list of them is made: gathers are on the fused
/// programs' path).
fn walk(input: &Operand, shape: &[usize], start: usize, len: usize, mut visit: impl FnMut(usize)) {
    let mut index = vec![0usize; shape.len()];
    let mut rest = start;
    for d in (0..shape.len()).rev() {
        index[d] = rest % shape[d];
        rest /= shape[d];
    }
    let mut at = input.offset as isize
        + index
            .iter()
            .zip(input.strides)
            .map(|(&i, &s)| i as isize * s)
            .sum::<isize>();
    for _ in 0..len {
        visit(at as usize);
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            at += input.strides[d];
            if index[d] < shape[d] {
                break;
            }
            at -= input.strides[d] * shape[d] as isize;
            index[d] = 0;
        }
    }
}

#[cfg(test)]
mod tests;
