//! Dispatch of batched matmul: `wgsl/matmul.wgsl` (tiles in workgroup memory), or a
//! register tile per thread and no workgroup memory: `wgsl/matmul_vec4.wgsl` when the
//! operands' rows are whole `vec4`s, `wgsl/matmul_registers.wgsl` otherwise; their sources
//! are in `matmul_kernels.rs`.

pub use crate::gpu::matmul_kernels::{Dtypes, MatmulKernel, Tile, Variant};
use crate::gpu::matmul_kernels::{operands_text, vec4_text};

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::gpu::GpuContext;
use crate::gpu::cast;
use crate::gpu::device::{buffers::create_output, encoder::CommandBatch};
use crate::gpu::elementwise::Operand;
use crate::gpu::epilogue::{self, Epilogue};
use crate::gpu::input::{GpuInput, contiguous};
use crate::memory::allocator::GpuBuffer;

/// A matrix operand: its buffer and dtype, and how its matrices are walked.
pub struct MatrixOperand<'a> {
    pub buffer: &'a GpuBuffer,
    /// Float32, or a packed float dtype that the kernels widen as they read.
    pub dtype: DType,
    pub walk: Walk,
}

/// How a matmul walks an operand's matrices: the offset of the first, the distance between
/// matrices (0 when broadcast across the batch) and between rows (its columns when dense;
/// only the `vec4` kernel takes more). A `transposed` operand is stored column by column: its
/// `row_stride` is then the distance between columns (only the `vec4` kernel reads it).
#[derive(Debug, Clone, Copy)]
pub struct Walk {
    pub offset: usize,
    pub batch_stride: usize,
    pub row_stride: usize,
    pub transposed: bool,
}

/// The variant of the adapter's kernel for products of (m x k) by (k x n) walked so.
fn variant_for(gpu: &GpuContext, [m, n, k]: [usize; 3], [a, b]: [&Walk; 2]) -> Variant {
    let layout = [
        a.offset,
        b.offset,
        a.batch_stride,
        b.batch_stride,
        a.row_stride,
        b.row_stride,
    ];
    let transposed = [a.transposed, b.transposed];
    Variant::choose(gpu.choices.matmul.get(), [m, n, k], layout, transposed)
}

/// Records `batch` products of (m x k) by (k x n) row-major matrices in dtype `out`, through
/// `epilogue` where there is one (then `out` is the node's): in the `vec4` kernel's store when
/// it can, else over the product.
#[allow(clippy::too_many_arguments)]
pub fn dispatch(
    gpu: &GpuContext,
    batch_encoder: &mut CommandBatch,
    batch: usize,
    m: usize,
    n: usize,
    k: usize,
    [a, b]: [MatrixOperand; 2],
    out: DType,
    epilogue: Option<&Epilogue>,
) -> Result<GpuBuffer> {
    let (wa, wb) = (&a.walk, &b.walk);
    let variant = variant_for(gpu, [m, n, k], [wa, wb]);
    let transposed = [wa.transposed, wb.transposed];
    let dense_rows = wa.row_stride == k && wb.row_stride == n;
    if !variant.reads(transposed) || (!dense_rows && !matches!(variant, Variant::Vec4 { .. })) {
        return Err(Error::Value(format!(
            "matmul: only the vec4 kernel reads rows {} and {} apart, or transposed ({transposed:?}); copy them first",
            wa.row_stride, wb.row_stride
        )));
    }
    let sizes = Sizes { batch, m, n, k };
    let plan = match (epilogue, variant) {
        (Some(e), Variant::Vec4 { .. }) if batch * m * n > 0 => e.plan().map(|p| (e, p)),
        _ => None,
    };
    let operands = [&a, &b];
    match epilogue {
        Some(e) if plan.is_none() => {
            let product_dtype = e.product_dtype();
            let product = product(gpu, batch_encoder, sizes, operands, variant, product_dtype)?;
            epilogue::over_product(gpu, batch_encoder, e, &product, product_dtype)
        }
        Some(_) => {
            let dtypes = Dtypes {
                a: a.dtype,
                b: b.dtype,
                out,
            };
            record(gpu, batch_encoder, sizes, operands, variant, dtypes, plan)
        }
        None => product(gpu, batch_encoder, sizes, operands, variant, out),
    }
}

/// The product in dtype `out`: stored so by the `vec4` kernel; the other kernels store
/// float32, which a conversion then rounds.
fn product(
    gpu: &GpuContext,
    batch_encoder: &mut CommandBatch,
    sizes: Sizes,
    [a, b]: [&MatrixOperand; 2],
    variant: Variant,
    out: DType,
) -> Result<GpuBuffer> {
    let stores_packed = matches!(variant, Variant::Vec4 { .. });
    let stored = if stores_packed { out } else { DType::Float32 };
    let dtypes = Dtypes {
        a: a.dtype,
        b: b.dtype,
        out: stored,
    };
    let product = record(gpu, batch_encoder, sizes, [a, b], variant, dtypes, None)?;
    if stored == out {
        return Ok(product);
    }
    let shape = [sizes.batch * sizes.m * sizes.n];
    let operand = Operand {
        buffer: &product,
        strides: vec![1],
        offset: 0,
    };
    cast::dispatch(gpu, batch_encoder, (stored, out), &shape, operand)
}

/// A dispatch's product sizes.
#[derive(Clone, Copy)]
struct Sizes {
    batch: usize,
    m: usize,
    n: usize,
    k: usize,
}

/// Records the kernel of `variant`, with the epilogue's store where `plan` is given.
fn record(
    gpu: &GpuContext,
    batch_encoder: &mut CommandBatch,
    Sizes { batch, m, n, k }: Sizes,
    [a, b]: [&MatrixOperand; 2],
    variant: Variant,
    dtypes: Dtypes,
    plan: Option<(&Epilogue, epilogue::Plan)>,
) -> Result<GpuBuffer> {
    let mut reads = vec![a.buffer, b.buffer];
    if let Some((e, _)) = &plan {
        reads.extend(e.buffers());
    }
    let out = create_output(gpu, dtypes.out.words(batch * m * n), &reads)?;
    if batch * m * n == 0 {
        return Ok(out);
    }
    let max = gpu.limits().max_compute_workgroups_per_dimension as usize;
    let grid = variant.grid(batch, m, n, max);
    if grid.0 > max || grid.1 > max || grid.2 > max {
        return Err(Error::Value(format!(
            "matmul: a batch of {batch} products of {m}x{k} by {k}x{n} needs more workgroups than the adapter's limit of {max} per dimension"
        )));
    }
    let kernel = match (&plan, variant) {
        (
            Some((_, p)),
            Variant::Vec4 {
                rows,
                cols4,
                transposed,
            },
        ) => {
            let key = p.key(Variant::tile_code(rows, cols4, transposed), dtypes);
            gpu.pipelines
                .get_or_create(&gpu.device, key, "main", reads.len(), || {
                    let loads = operands_text(dtypes, true);
                    let kernel = vec4_text(rows, cols4, transposed, true);
                    p.source(format!("{loads}{kernel}"), dtypes)
                })
        }
        _ => gpu.pipelines.get_or_create(
            &gpu.device,
            variant.pipeline_key(dtypes),
            "main",
            2,
            || variant.source(dtypes),
        ),
    };
    let unit = variant.unit();
    let mut params: Vec<u32> = [
        m,
        n / unit,
        k / unit,
        a.walk.offset / unit,
        b.walk.offset / unit,
        a.walk.batch_stride / unit,
        b.walk.batch_stride / unit,
        grid.0,
        a.walk.row_stride / unit,
        b.walk.row_stride / unit,
        0,
        0,
    ]
    .map(|v| v as u32)
    .to_vec();
    if let Some((_, p)) = &plan {
        params.extend(p.params());
    }
    reads.push(&out);
    let grid = (grid.0 as u32, grid.1 as u32, grid.2 as u32);
    batch_encoder.dispatch(&kernel, &params, &reads, grid)?;
    Ok(out)
}

/// Matmul of two float inputs (float32, or packed and read in place) broadcast to one batch
/// shape, in dtype `out`. Matrices whose rows are contiguous and evenly spaced (a column slice
/// of a wider matrix: attention's heads), or whose columns are (a transposed view: a weight or
/// an activation in a backward pass), are read in place by the `vec4` kernel; every other
/// layout is copied first, as is any but a dense row-major one when the `vec4` kernel cannot
/// run.
pub fn eval(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    inputs: &[Array],
    data: &[GpuInput],
    out: DType,
    epilogue: Option<&Epilogue>,
) -> Result<GpuBuffer> {
    let (a, b) = (inputs[0].shape(), inputs[1].shape());
    let r = a.len();
    let (m, k, n) = (a[r - 2], a[r - 1], b[r - 1]);
    let cols = [k, n];
    let mut plan: Vec<Option<Walk>> = (0..2).map(|i| walk(&inputs[i], &data[i])).collect();
    let copied = |i: usize| Walk {
        offset: 0,
        batch_stride: inputs[i].shape()[r - 2] * cols[i],
        row_stride: cols[i],
        transposed: false,
    };
    let in_place = |w: &Walk, i: usize| !w.transposed && w.row_stride == cols[i];
    if plan
        .iter()
        .enumerate()
        .any(|(i, w)| w.as_ref().is_some_and(|w| !in_place(w, i)))
    {
        let [wa, wb] = [0, 1].map(|i| plan[i].unwrap_or_else(|| copied(i)));
        let variant = variant_for(gpu, [m, n, k], [&wa, &wb]);
        if !matches!(variant, Variant::Vec4 { .. }) {
            for (i, w) in plan.iter_mut().enumerate() {
                if w.as_ref().is_some_and(|w| !in_place(w, i)) {
                    *w = None;
                }
            }
        }
    }
    let mut copies = Vec::new();
    let mut placement = Vec::new();
    for i in 0..2 {
        match plan[i] {
            Some(walk) => placement.push((None, walk)),
            None => {
                copies.push(contiguous(gpu, batch, &inputs[i], &data[i])?);
                placement.push((Some(copies.len() - 1), copied(i)));
            }
        }
    }
    let operand = |i: usize| {
        let (copy, walk) = placement[i];
        MatrixOperand {
            buffer: copy.map_or(data[i].buffer(), |c| &copies[c]),
            dtype: inputs[i].dtype(),
            walk,
        }
    };
    let count = crate::graph::shape::numel(&a[..r - 2]);
    let operands = [operand(0), operand(1)];
    dispatch(gpu, batch, count, m, n, k, operands, out, epilogue)
}

/// The walk of an operand read in place, row by row or (a transposed view) column by column;
/// `None` where it must be copied.
fn walk(input: &Array, data: &GpuInput) -> Option<Walk> {
    use crate::graph::shape::{matrix_columns_walk, matrix_rows_walk};
    let layout = data.layout;
    let rows = matrix_rows_walk(input.shape(), layout).map(|w| (w, false));
    rows.or_else(|| matrix_columns_walk(input.shape(), layout).map(|w| (w, true)))
        .map(|((batch_stride, row_stride), transposed)| Walk {
            offset: layout.offset,
            batch_stride,
            row_stride,
            transposed,
        })
}
