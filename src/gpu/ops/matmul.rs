//! Dispatch of batched matmul: `kernels/matmul.wgsl` (tiles in workgroup memory) or
//! `kernels/matmul_registers.wgsl` (a register tile per thread, no workgroup memory).

use std::cell::Cell;

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::gpu::GpuContext;
use crate::gpu::encoder::{CommandBatch, create_storage};
use crate::gpu::pipelines::KernelKey;
use crate::memory::allocator::GpuBuffer;

const WORKGROUP_TILED: &str = include_str!("../kernels/matmul.wgsl");
const REGISTER_TILED: &str = include_str!("../kernels/matmul_registers.wgsl");

/// The two matmul kernels. Workgroup-memory tiling wins on hardware GPUs; on software
/// adapters barriers are expensive and per-thread register tiles win by 2-20x
/// (PERFORMANCE.md), so each adapter gets the kind that suits it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatmulKernel {
    WorkgroupTiled,
    RegisterTiled,
}

impl MatmulKernel {
    /// The kernel for an adapter: register tiles on a fallback (software) adapter.
    pub fn for_adapter(is_fallback_adapter: bool) -> MatmulKernel {
        if is_fallback_adapter {
            MatmulKernel::RegisterTiled
        } else {
            MatmulKernel::WorkgroupTiled
        }
    }

    /// The workgroup grid for `batch` products with an m x n result.
    fn grid(self, batch: usize, m: usize, n: usize, max: usize) -> (usize, usize, usize) {
        match self {
            // 16 x 16 threads, each a 4 x 4 block.
            MatmulKernel::WorkgroupTiled => (n.div_ceil(64), m.div_ceil(64), batch),
            // 64 threads, each an 8 x 4 block, numbered across an x * y grid.
            MatmulKernel::RegisterTiled => {
                let groups = (m.div_ceil(8) * n.div_ceil(4)).div_ceil(64);
                let x = groups.min(max);
                (x, groups.div_ceil(x), batch)
            }
        }
    }

    fn pipeline_key(self) -> KernelKey {
        let kernel = match self {
            MatmulKernel::WorkgroupTiled => "matmul_workgroup",
            MatmulKernel::RegisterTiled => "matmul_registers",
        };
        KernelKey::new(kernel, "", &[DType::Float32])
    }

    fn source(self) -> &'static str {
        match self {
            MatmulKernel::WorkgroupTiled => WORKGROUP_TILED,
            MatmulKernel::RegisterTiled => REGISTER_TILED,
        }
    }
}

/// The kernel matmul uses, per GPU context; tests switch it to check both.
#[derive(Debug)]
pub struct MatmulChoice(Cell<MatmulKernel>);

impl MatmulChoice {
    pub fn new(kernel: MatmulKernel) -> MatmulChoice {
        MatmulChoice(Cell::new(kernel))
    }

    pub fn get(&self) -> MatmulKernel {
        self.0.get()
    }

    pub fn set(&self, kernel: MatmulKernel) {
        self.0.set(kernel);
    }
}

/// A matrix operand: its buffer, the offset of its first matrix, and the distance between
/// matrices (0 when broadcast across the batch).
pub struct MatrixOperand<'a> {
    pub buffer: &'a GpuBuffer,
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
) -> Result<GpuBuffer> {
    let out = create_storage(gpu, batch * m * n)?;
    if batch * m * n == 0 {
        return Ok(out);
    }
    let kernel = gpu.matmul.get();
    let max = gpu.limits().max_compute_workgroups_per_dimension as usize;
    let grid = kernel.grid(batch, m, n, max);
    if grid.0 > max || grid.1 > max || grid.2 > max {
        return Err(Error::Value(format!(
            "matmul: a batch of {batch} products of {m}x{k} by {k}x{n} needs more workgroups than the adapter's limit of {max} per dimension"
        )));
    }
    let pipeline =
        gpu.pipelines
            .get_or_create(&gpu.device, kernel.pipeline_key(), "main", 2, || {
                kernel.source().to_string()
            });
    let params = [
        m,
        n,
        k,
        a.offset,
        b.offset,
        a.batch_stride,
        b.batch_stride,
        grid.0,
    ]
    .map(|v| v as u32);
    let grid = (grid.0 as u32, grid.1 as u32, grid.2 as u32);
    batch_encoder.dispatch(&pipeline, &params, &[a.buffer, b.buffer, &out], grid);
    Ok(out)
}
