//! Dispatch of the running reductions (`wgsl/scan.wgsl`): one workgroup per row of the
//! row-major input, walking the row in chunks; a few long rows are cut into blocks, one
//! workgroup each (block totals, their scan, then the blocks from their carries).

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

/// Rows this long or longer, when there are few of them, are cut into blocks of
/// [`BLOCK_LEN`], one workgroup each, so that a single long row runs on the whole GPU.
const LONG_ROW: usize = 16 * 1024;
/// Elements of a block: four of the kernel's chunks (WORKGROUP * ITEMS = 1024).
const BLOCK_LEN: usize = 4 * 1024;
/// Fewer rows than this leave a GPU mostly idle at one workgroup a row.
const FEW_ROWS: usize = 64;

/// Records the scan of the `rows` contiguous rows of `row_len` in `input` (from `offset`):
/// one workgroup a row, or for a few long rows the three passes over blocks of each.
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
    let pass = Pass {
        rows,
        row_len,
        offset,
        block_len: row_len,
        blocks: 1,
    };
    if row_len < LONG_ROW || rows >= FEW_ROWS {
        let out = create_output(gpu, len, &[input])?;
        record(gpu, batch, scan, pass, (input, input), 0, &out)?;
        return Ok(out);
    }
    let pass = Pass {
        block_len: BLOCK_LEN,
        blocks: row_len.div_ceil(BLOCK_LEN),
        ..pass
    };
    let totals = create_output(gpu, rows * pass.blocks, &[input])?;
    record(gpu, batch, scan, pass, (input, input), TOTALS_ONLY, &totals)?;
    // Each block's first carry: the exclusive scan of the totals before it (in scan order
    // already, so never reversed), with the same combine over the result's dtype.
    let carries_scan = Scan {
        reverse: false,
        inclusive: false,
        input: scan.out,
        ..scan
    };
    let carries = dispatch(gpu, batch, carries_scan, &totals, 0, rows, pass.blocks)?;
    let out = create_output(gpu, len, &[input, &carries])?;
    record(gpu, batch, scan, pass, (input, &carries), SEEDED, &out)?;
    Ok(out)
}

/// Flag bits of the kernel's passes over blocks.
const TOTALS_ONLY: u32 = 4;
const SEEDED: u32 = 8;

/// One dispatch's shape: the rows, where they start, and how they are cut into blocks.
#[derive(Clone, Copy)]
struct Pass {
    rows: usize,
    row_len: usize,
    offset: usize,
    block_len: usize,
    blocks: usize,
}

/// Records one pass of the kernel over `pass`'s slices with the given extra flag bits.
fn record(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    scan: Scan,
    pass: Pass,
    (input, carries): (&GpuBuffer, &GpuBuffer),
    mode: u32,
    out: &GpuBuffer,
) -> Result<()> {
    let key = KernelKey::new("scan", scan.op.name(), &[scan.input, scan.out]);
    let kernel = gpu
        .pipelines
        .get_or_create(&gpu.device, key, "main", 2, || {
            source(scan.op, scan.input, scan.out)
        });
    let flags = u32::from(scan.reverse) | (u32::from(scan.inclusive) << 1) | mode;
    let params = [
        pass.rows as u32,
        pass.row_len as u32,
        flags,
        pass.offset as u32,
        pass.block_len as u32,
        pass.blocks as u32,
        0,
        0,
    ];
    // One workgroup per slice: `grid_of` with one-thread "workgroups" counts slices.
    let slices = pass.rows * pass.blocks;
    let (x, y) = grid_of(slices, 1, gpu.limits().max_compute_workgroups_per_dimension);
    batch.dispatch(&kernel, &params, &[input, carries, out], (x, y, 1))
}
