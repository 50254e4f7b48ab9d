//! Dispatch of reductions (`wgsl/reduce.wgsl`): over contiguous rows, split across threads
//! when rows are few and long, or down the columns of a row-major block.

use crate::dtype::DType;
use crate::error::Result;
use crate::gpu::GpuContext;
use crate::gpu::device::grid::grid_for;
use crate::gpu::device::pipelines::KernelKey;
use crate::gpu::device::{
    buffers::{create_output, create_storage},
    encoder::CommandBatch,
};
use crate::gpu::elementwise::{MATH, wgsl_type};
use crate::graph::primitive::ReduceOp;
use crate::memory::allocator::GpuBuffer;

const KERNEL: &str = include_str!("wgsl/reduce.wgsl");

/// Rows no longer than this are folded by one thread each.
const SHORT_ROW: usize = 32;
/// With this many rows or more, each row is folded by one thread: there are threads enough to
/// fill the adapter without splitting rows.
pub(crate) const MANY_ROWS: usize = 2048;
/// A split row gives each thread at least this many elements...
const PART_LEN: usize = 1024;
/// ...and makes at most this many threads in all.
const PART_THREADS: usize = 16384;

/// How many threads share each of `rows` rows of `row_len` elements when rows are split (1:
/// a thread per row). The fused softmax splits rows the same way.
pub(crate) fn parts_per_row(rows: usize, row_len: usize) -> usize {
    (row_len / PART_LEN).clamp(1, (PART_THREADS / rows).max(1))
}
/// A column fold runs one thread per column: with fewer columns than this and longer columns
/// than [`LONG_COLUMN`], moving the axis last and splitting rows is faster.
const FEW_COLUMNS: usize = 256;
const LONG_COLUMN: usize = 4096;

/// A reduction's input read as `[rows, row_len, inner]` from element `offset`, folded over
/// `row_len`: rows of contiguous elements when `inner` is 1, columns of a row-major block
/// otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    pub rows: usize,
    pub row_len: usize,
    pub inner: usize,
    pub offset: usize,
}

impl Block {
    /// `rows` contiguous rows of `row_len` elements from the buffer's start.
    pub fn rows(rows: usize, row_len: usize) -> Block {
        Block {
            rows,
            row_len,
            inner: 1,
            offset: 0,
        }
    }

    fn results(&self) -> usize {
        self.rows * self.inner
    }

    /// Whether a column fold should move the axis last first (see [`FEW_COLUMNS`]).
    pub fn better_as_rows(&self) -> bool {
        self.inner > 1 && self.results() < FEW_COLUMNS && self.row_len > LONG_COLUMN
    }
}

/// The kernel entry points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    Tree,
    Rows,
    Parts,
    Columns,
}

impl Entry {
    fn name(self) -> &'static str {
        match self {
            Entry::Tree => "main",
            Entry::Rows => "main_rows",
            Entry::Parts => "main_parts",
            Entry::Columns => "main_columns",
        }
    }

    fn family(self) -> &'static str {
        match self {
            Entry::Tree => "reduce_tree",
            Entry::Rows => "reduce_rows",
            Entry::Parts => "reduce_parts",
            Entry::Columns => "reduce_columns",
        }
    }
}

/// Records the reduction of `block` of `dtype` elements in `input`; returns a buffer of its
/// `rows * inner` results (values of `op.out_dtype(dtype)`, or indices), row-major.
pub fn dispatch(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    op: ReduceOp,
    dtype: DType,
    input: &GpuBuffer,
    block: Block,
) -> Result<GpuBuffer> {
    if block.results() == 0 {
        return create_storage(gpu, 0);
    }
    if block.inner > 1 {
        return pass(gpu, batch, op, dtype, input, block, Entry::Columns, 1);
    }
    if block.row_len <= SHORT_ROW || block.rows >= MANY_ROWS {
        return pass(gpu, batch, op, dtype, input, block, Entry::Rows, 1);
    }
    if op.is_arg() {
        // The winner's index must travel with its value, which the partials do not keep.
        return pass(gpu, batch, op, dtype, input, block, Entry::Tree, 1);
    }
    let parts = parts_per_row(block.rows, block.row_len);
    if parts == 1 {
        return pass(gpu, batch, op, dtype, input, block, Entry::Rows, 1);
    }
    let partial = pass(gpu, batch, op, dtype, input, block, Entry::Parts, parts)?;
    // Fold each row's partials, which are already of the accumulator dtype.
    let rows = Block::rows(block.rows, parts);
    dispatch(gpu, batch, op, op.out_dtype(dtype), &partial, rows)
}

/// One dispatch of `entry`, which writes `parts` results per row (and column).
#[allow(clippy::too_many_arguments)]
fn pass(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    op: ReduceOp,
    dtype: DType,
    input: &GpuBuffer,
    block: Block,
    entry: Entry,
    parts: usize,
) -> Result<GpuBuffer> {
    let slots = block.results() * parts;
    let out = create_output(gpu, slots, &[input])?;
    let key = KernelKey::new(entry.family(), op.name(), &[dtype]);
    let kernel = gpu
        .pipelines
        .get_or_create(&gpu.device, key, entry.name(), 1, || source(op, dtype));
    let params = [
        block.rows,
        block.row_len,
        block.inner,
        parts,
        block.offset,
        block.row_len,
    ]
    .map(|v| v as u32);
    // The tree folds a row per 256-thread workgroup; the others run a thread per result.
    let threads = if entry == Entry::Tree {
        slots * 256
    } else {
        slots
    };
    let (x, y) = grid_for(threads, gpu.limits().max_compute_workgroups_per_dimension);
    batch.dispatch(&kernel, &params, &[input, &out], (x, y, 1))?;
    Ok(out)
}

/// The kernel with its header for `op` on elements of `dtype`.
pub fn source(op: ReduceOp, dtype: DType) -> String {
    // Arg reductions compare values of the input's type; the others fold in the result type.
    let acc = if op.is_arg() {
        dtype
    } else {
        op.out_dtype(dtype)
    };
    let (lowest, highest) = extremes(acc);
    let identity = match op {
        ReduceOp::Sum => "0",
        ReduceOp::Prod => "1",
        ReduceOp::Max | ReduceOp::ArgMax => lowest,
        ReduceOp::Min | ReduceOp::ArgMin => highest,
    };
    let float = acc == DType::Float32;
    let combine = match (op, float) {
        (ReduceOp::Sum, _) => "a + b",
        (ReduceOp::Prod, _) => "a * b",
        (ReduceOp::Max, true) => "max_or_nan(a, b)",
        (ReduceOp::Min, true) => "min_or_nan(a, b)",
        (ReduceOp::Max, false) => "max(a, b)",
        (ReduceOp::Min, false) => "min(a, b)",
        _ => "a",
    };
    let beats = match (op, float) {
        (ReduceOp::ArgMax, true) => "!is_nan(a) && (is_nan(b) || b > a)",
        (ReduceOp::ArgMin, true) => "!is_nan(a) && (is_nan(b) || b < a)",
        (ReduceOp::ArgMax, false) => "b > a",
        (ReduceOp::ArgMin, false) => "b < a",
        _ => "false",
    };
    let acc_type = wgsl_type(acc);
    format!(
        "alias In = {};\nalias Acc = {acc_type};\nconst IS_ARG: bool = {};\n\
         fn identity() -> Acc {{ return Acc({identity}); }}\n\
         fn load(v: In) -> Acc {{ return Acc(v); }}\n\
         fn combine(a: Acc, b: Acc) -> Acc {{ return {combine}; }}\n\
         fn beats(b: Acc, a: Acc) -> bool {{ return {beats}; }}\n{MATH}\n{KERNEL}",
        wgsl_type(dtype),
        op.is_arg(),
    )
}

/// The lowest and highest values of a dtype, as WGSL expressions of its accumulator type.
fn extremes(dtype: DType) -> (&'static str, &'static str) {
    match dtype {
        DType::Float32 => ("-inf_f32()", "inf_f32()"),
        DType::Int32 => ("-2147483647 - 1", "2147483647"),
        DType::Uint32 => ("0u", "4294967295u"),
        DType::Bool => ("0u", "1u"),
        packed => unreachable!("{packed:?} is widened before a kernel runs"),
    }
}
