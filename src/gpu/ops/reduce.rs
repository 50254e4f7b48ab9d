//! Dispatch of reductions (`kernels/reduce.wgsl`) over contiguous rows.

use crate::dtype::DType;
use crate::error::Result;
use crate::gpu::GpuContext;
use crate::gpu::encoder::{CommandBatch, create_storage};
use crate::gpu::ops::elementwise::{MATH, wgsl_type};
use crate::gpu::ops::grid_for;
use crate::gpu::pipelines::KernelKey;
use crate::memory::allocator::GpuBuffer;
use crate::primitive::ReduceOp;

const KERNEL: &str = include_str!("../kernels/reduce.wgsl");

/// Rows no longer than this are folded by one thread each (`main_short`).
const SHORT_ROW: usize = 32;
/// Elements one workgroup folds per pass: 64 per thread.
const CHUNK: usize = 256 * 64;

/// Records the reduction of `rows` contiguous rows of `row_len` elements of `dtype` in
/// `input`; returns a buffer of `rows` results (values of `op.out_dtype(dtype)`, or indices).
pub fn dispatch(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    op: ReduceOp,
    dtype: DType,
    input: &GpuBuffer,
    rows: usize,
    row_len: usize,
) -> Result<GpuBuffer> {
    if rows == 0 {
        return create_storage(gpu, 0);
    }
    if row_len <= SHORT_ROW {
        return pass(gpu, batch, op, dtype, input, rows, row_len, None);
    }
    let chunks = if op.is_arg() {
        1
    } else {
        row_len.div_ceil(CHUNK)
    };
    let partial = pass(gpu, batch, op, dtype, input, rows, row_len, Some(chunks))?;
    if chunks == 1 {
        return Ok(partial);
    }
    // Fold each row's chunk partials, which are already of the accumulator dtype.
    dispatch(gpu, batch, op, op.out_dtype(dtype), &partial, rows, chunks)
}

/// One dispatch: `main` with `chunks` workgroups per row, or `main_short` when `None`.
#[allow(clippy::too_many_arguments)]
fn pass(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    op: ReduceOp,
    dtype: DType,
    input: &GpuBuffer,
    rows: usize,
    row_len: usize,
    chunks: Option<usize>,
) -> Result<GpuBuffer> {
    let slots = rows * chunks.unwrap_or(1);
    let out = create_storage(gpu, slots)?;
    let entry = if chunks.is_some() {
        "main"
    } else {
        "main_short"
    };
    let family = if chunks.is_some() {
        "reduce"
    } else {
        "reduce_short"
    };
    let key = KernelKey::new(family, op.name(), &[dtype]);
    let pipeline = gpu
        .pipelines
        .get_or_create(&gpu.device, key, entry, 1, || source(op, dtype));
    let chunk_len = if op.is_arg() { row_len } else { CHUNK };
    let params = [rows, row_len, chunk_len, chunks.unwrap_or(1)].map(|v| v as u32);
    let threads = if chunks.is_some() { slots * 256 } else { slots };
    let (x, y) = grid_for(threads, gpu.limits().max_compute_workgroups_per_dimension);
    batch.dispatch(&pipeline, &params, &[input, &out], (x, y, 1));
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
        (ReduceOp::Max, true) => "select(max(a, b), nan_f32(), is_nan(a) || is_nan(b))",
        (ReduceOp::Min, true) => "select(min(a, b), nan_f32(), is_nan(a) || is_nan(b))",
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
    }
}
