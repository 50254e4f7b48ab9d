//! Dispatch of the running reductions (`wgsl/scan.wgsl`): one workgroup per row of the
//! row-major input, walking the row in chunks.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::Result;
use crate::gpu::GpuContext;
use crate::gpu::device::buffers::{create_output, create_storage};
use crate::gpu::device::encoder::CommandBatch;
use crate::gpu::device::grid::grid_of;
use crate::gpu::device::pipelines::KernelKey;
use crate::gpu::elementwise::{MATH, MORE_MATH, convert, wgsl_type};
use crate::gpu::input::{GpuInput, row_major};
use crate::graph::primitive::ScanOp;
use crate::memory::allocator::GpuBuffer;

const KERNEL: &str = include_str!("wgsl/scan.wgsl");

/// A scan: its op, direction, and the input's and result's dtypes.
#[derive(Debug, Clone, Copy)]
pub struct Scan {
    pub op: ScanOp,
    pub reverse: bool,
    pub inclusive: bool,
    pub input: DType,
    pub out: DType,
}

/// The kernel's source: its header (the accumulator, its identity and combine) and the kernel.
pub fn source(op: ScanOp, input: DType, out: DType) -> String {
    let acc = wgsl_type(out);
    let (identity, combine) = match (op, out) {
        (ScanOp::Sum, _) => ("Acc(0)", "a + b"),
        (ScanOp::Prod, _) => ("Acc(1)", "a * b"),
        (ScanOp::Max, DType::Float32) => ("-inf_f32()", "max_or_nan(a, b)"),
        (ScanOp::Min, DType::Float32) => ("inf_f32()", "min_or_nan(a, b)"),
        (ScanOp::Max, DType::Int32) => ("Acc(-2147483647 - 1)", "max(a, b)"),
        (ScanOp::Min, DType::Int32) => ("Acc(2147483647)", "min(a, b)"),
        (ScanOp::Min, DType::Bool) => ("Acc(1u)", "min(a, b)"),
        (ScanOp::Max, _) => ("Acc(0u)", "max(a, b)"),
        (ScanOp::Min, _) => ("Acc(4294967295u)", "min(a, b)"),
        (ScanOp::LogAddExp, _) => ("-inf_f32()", "logaddexp_acc(a, b)"),
    };
    // Sums of bools count in int32; the kernel adds 0/1 words.
    let header = format!(
        "alias In = {};\nalias Acc = {acc};\nfn load(x: In) -> Acc {{ return {}; }}\n\
         fn identity() -> Acc {{ return {identity}; }}\n\
         fn combine(a: Acc, b: Acc) -> Acc {{ return {combine}; }}\n",
        wgsl_type(input),
        convert("x", input, out),
    );
    format!("{MATH}\n{MORE_MATH}\n{header}\n{KERNEL}")
}

/// Records the scan of `input`'s rows (its last axis), read in place when they are
/// contiguous, else from a row-major copy.
pub fn eval(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    scan: Scan,
    input: &Array,
    data: &GpuInput,
) -> Result<GpuBuffer> {
    let row_len = input.shape().last().copied().unwrap_or(1);
    let rows = input.size().checked_div(row_len).unwrap_or(0);
    let x = row_major(gpu, batch, input, data)?;
    dispatch(gpu, batch, scan, x.buffer(), x.offset(), rows, row_len)
}

/// Records the scan of the `rows` contiguous rows of `row_len` in `input` (from `offset`).
pub fn dispatch(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    scan: Scan,
    input: &GpuBuffer,
    offset: usize,
    rows: usize,
    row_len: usize,
) -> Result<GpuBuffer> {
    let len = rows * row_len;
    if len == 0 {
        return create_storage(gpu, 0);
    }
    let out = create_output(gpu, len, &[input])?;
    let key = KernelKey::new("scan", scan.op.name(), &[scan.input, scan.out]);
    let kernel = gpu
        .pipelines
        .get_or_create(&gpu.device, key, "main", 1, || {
            source(scan.op, scan.input, scan.out)
        });
    let flags = u32::from(scan.reverse) | (u32::from(scan.inclusive) << 1);
    let params = [rows as u32, row_len as u32, flags, offset as u32];
    // One workgroup per row: `grid_of` with one-thread "workgroups" counts rows.
    let (x, y) = grid_of(rows, 1, gpu.limits().max_compute_workgroups_per_dimension);
    batch.dispatch(&kernel, &params, &[input, &out], (x, y, 1))?;
    Ok(out)
}
