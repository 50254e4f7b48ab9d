//! Dispatch of batched matmul (`kernels/matmul.wgsl`).

use crate::error::{Error, Result};
use crate::gpu::GpuContext;
use crate::gpu::encoder::{CommandBatch, create_storage};

const KERNEL: &str = include_str!("../kernels/matmul.wgsl");
const TILE: usize = 64;

/// A matrix operand: its buffer, the offset of its first matrix, and the distance between
/// matrices (0 when broadcast across the batch).
pub struct MatrixOperand<'a> {
    pub buffer: &'a wgpu::Buffer,
    pub offset: usize,
    pub batch_stride: usize,
}

/// Records `batch` products of (m x k) by (k x n) row-major matrices.
#[allow(clippy::too_many_arguments)]
pub fn dispatch(
    gpu: &GpuContext,
    batch_encoder: &mut CommandBatch,
    batch: usize,
    m: usize,
    n: usize,
    k: usize,
    a: MatrixOperand,
    b: MatrixOperand,
) -> Result<wgpu::Buffer> {
    let out = create_storage(gpu, batch * m * n)?;
    if batch * m * n == 0 {
        return Ok(out);
    }
    let max = gpu.limits().max_compute_workgroups_per_dimension as usize;
    let grid = (n.div_ceil(TILE), m.div_ceil(TILE), batch);
    if grid.0 > max || grid.1 > max || grid.2 > max {
        return Err(Error::Value(format!(
            "matmul: a batch of {batch} products of {m}x{k} by {k}x{n} needs more workgroups than the adapter's limit of {max} per dimension"
        )));
    }
    let pipeline = gpu
        .pipelines
        .get_or_create(&gpu.device, "matmul:float32", "main", 2, || {
            KERNEL.to_string()
        });
    let params = [
        m,
        n,
        k,
        a.offset,
        b.offset,
        a.batch_stride,
        b.batch_stride,
        0,
    ]
    .map(|v| v as u32);
    let grid = (grid.0 as u32, grid.1 as u32, grid.2 as u32);
    batch_encoder.dispatch(
        &pipeline,
        "matmul",
        &params,
        &[a.buffer, b.buffer, &out],
        grid,
    );
    Ok(out)
}
