//! Dispatch of the fused softmax and logsumexp (`wgsl/row_norm.wgsl`): one thread per row
//! when rows are many, else a pass of per-thread partial (max, sum) pairs, a pass that merges
//! each row's pairs, and for softmax a pass that writes every element.

use crate::dtype::DType;
use crate::error::Result;
use crate::gpu::device::grid::grid_for;
use crate::gpu::device::pipelines::KernelKey;
use crate::gpu::device::{
    buffers::{create_output, create_storage},
    encoder::CommandBatch,
};
use crate::gpu::elementwise::MATH;
use crate::gpu::reduce::{Block, MANY_ROWS, parts_per_row};
use crate::gpu::{GpuContext, packed};
use crate::graph::primitive::RowNorm;
use crate::memory::allocator::GpuBuffer;

const COMMON: &str = include_str!("wgsl/row_norm.wgsl");
const ENTRIES: &str = include_str!("wgsl/row_norm_entries.wgsl");
const WRITE: &str = include_str!("wgsl/softmax_write.wgsl");

/// With rows this short (or as many as a reduction takes a thread per row for), a thread takes
/// a whole row.
const SHORT_ROW: usize = 256;

/// The source of the row entries (`ENTRIES`) or of `softmax_write`, reading `x` of `dtype`
/// (a packed input in place, or the float32 partial pairs of the merges).
pub fn source(write: bool, dtype: DType) -> String {
    format!(
        "{MATH}\n{}\n{}{COMMON}\n{}",
        packed::source_for(&[dtype], ""),
        packed::input_text("x", 1, dtype),
        if write { WRITE } else { ENTRIES }
    )
}

/// Records `op` over the contiguous rows of `block` (its `inner` is 1) in `input` (of
/// `dtype`, a packed one read in place), and returns the float32 output: the input's shape
/// for softmax, one value per row for logsumexp.
pub fn dispatch(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    op: RowNorm,
    (input, dtype): (&GpuBuffer, DType),
    block: Block,
) -> Result<GpuBuffer> {
    let (rows, row_len) = (block.rows, block.row_len);
    let len = match op {
        RowNorm::Softmax => rows * row_len,
        RowNorm::LogSumExp => rows,
    };
    if len == 0 {
        return create_storage(gpu, 0);
    }
    let parts = parts_per_row(rows, row_len);
    if rows >= MANY_ROWS || row_len <= SHORT_ROW || parts == 1 {
        let entry = match op {
            RowNorm::Softmax => "softmax_rows",
            RowNorm::LogSumExp => "logsumexp_rows",
        };
        let out = create_output(gpu, len, &[input])?;
        let params = [rows, row_len, 1, block.offset];
        pass(gpu, batch, (entry, dtype), params, &[input, &out], rows)?;
        return Ok(out);
    }
    let partial = create_output(gpu, 2 * rows * parts, &[input])?;
    let params = [rows, row_len, parts, block.offset];
    pass(
        gpu,
        batch,
        ("stats_parts", dtype),
        params,
        &[input, &partial],
        rows * parts,
    )?;
    let params = [rows, row_len, parts, 0];
    if op == RowNorm::LogSumExp {
        let out = create_output(gpu, rows, &[&partial])?;
        pass(
            gpu,
            batch,
            ("logsumexp_merge", DType::Float32),
            params,
            &[&partial, &out],
            rows,
        )?;
        return Ok(out);
    }
    let stats = create_output(gpu, 2 * rows, &[&partial])?;
    pass(
        gpu,
        batch,
        ("softmax_merge", DType::Float32),
        params,
        &[&partial, &stats],
        rows,
    )?;
    let out = create_output(gpu, len, &[input, &stats])?;
    let params = [rows, row_len, 1, block.offset];
    pass(
        gpu,
        batch,
        ("softmax_write", dtype),
        params,
        &[input, &stats, &out],
        len,
    )?;
    Ok(out)
}

/// One dispatch of `entry` with `threads` threads, its `x` of `dtype`; `buffers` are its
/// inputs, then its output.
fn pass(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    (entry, dtype): (&'static str, DType),
    params: [usize; 4],
    buffers: &[&GpuBuffer],
    threads: usize,
) -> Result<()> {
    let write = entry == "softmax_write";
    let key = KernelKey::new("row_norm", entry, &[dtype]);
    let inputs = buffers.len() - 1;
    let kernel = gpu
        .pipelines
        .get_or_create(&gpu.device, key, entry, inputs, || source(write, dtype));
    let (x, y) = grid_for(threads, gpu.limits().max_compute_workgroups_per_dimension);
    batch.dispatch(&kernel, &params.map(|v| v as u32), buffers, (x, y, 1))?;
    Ok(())
}
