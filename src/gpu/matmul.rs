//! Dispatch of batched matmul: `wgsl/matmul.wgsl` (tiles in workgroup memory), or a
//! register tile per thread and no workgroup memory: `wgsl/matmul_vec4.wgsl` when the
//! operands' rows are whole `vec4`s, `wgsl/matmul_registers.wgsl` otherwise.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::gpu::GpuContext;
use crate::gpu::device::pipelines::KernelKey;
use crate::gpu::device::{buffers::create_output, encoder::CommandBatch};
use crate::gpu::epilogue::{self, Epilogue};
use crate::gpu::input::{GpuInput, contiguous};
use crate::memory::allocator::GpuBuffer;

const WORKGROUP_TILED: &str = include_str!("wgsl/matmul.wgsl");
const REGISTER_TILED: &str = include_str!("wgsl/matmul_registers.wgsl");
const REGISTER_VEC4: &str = include_str!("wgsl/matmul_vec4.wgsl");

/// A register tile: `rows` x 4 `cols4` outputs per thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tile {
    pub rows: u32,
    pub cols4: u32,
}

/// The two kinds of matmul kernel. Workgroup-memory tiling usually wins on hardware GPUs; on
/// software adapters barriers are expensive and per-thread register tiles win by 2-20x
/// (measured on SwiftShader). Which kind, and which tile, is measured per adapter
/// (`crate::startup::matmul_tuning`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatmulKernel {
    WorkgroupTiled,
    /// Register tiles of this size with `vec4` loads when the operands' rows are whole
    /// `vec4`s, else 8 x 4 scalar tiles.
    RegisterTiled(Tile),
}

impl MatmulKernel {
    /// The 8 x 8 register tile, measured best on SwiftShader.
    pub const REGISTERS_8X8: MatmulKernel = MatmulKernel::RegisterTiled(Tile { rows: 8, cols4: 2 });

    /// Every kernel the tuner measures, the likeliest winners first so that it can stop the
    /// slow ones early.
    pub const CANDIDATES: [MatmulKernel; 5] = [
        MatmulKernel::REGISTERS_8X8,
        MatmulKernel::RegisterTiled(Tile { rows: 4, cols4: 2 }),
        MatmulKernel::RegisterTiled(Tile { rows: 8, cols4: 1 }),
        MatmulKernel::RegisterTiled(Tile { rows: 4, cols4: 4 }),
        MatmulKernel::WorkgroupTiled,
    ];

    /// The kernel used before (or without) a measurement: register tiles on a fallback
    /// (software) adapter.
    pub fn for_adapter(is_fallback_adapter: bool) -> MatmulKernel {
        if is_fallback_adapter {
            MatmulKernel::REGISTERS_8X8
        } else {
            MatmulKernel::WorkgroupTiled
        }
    }

    /// A short name for reports: `"registers 8x8"`, `"workgroup 64x64"`.
    pub fn name(self) -> String {
        match self {
            MatmulKernel::WorkgroupTiled => "workgroup 64x64".into(),
            MatmulKernel::RegisterTiled(Tile { rows, cols4 }) => {
                format!("registers {rows}x{}", 4 * cols4)
            }
        }
    }
}

/// One compiled variant: which kernel, and for the `vec4` one its tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    WorkgroupTiled,
    /// 8 x 4 outputs per thread, scalar loads: any shape and offset.
    Scalar,
    /// `rows` x 4 `cols4` outputs per thread.
    Vec4 {
        rows: u32,
        cols4: u32,
    },
}

impl Variant {
    /// The variant of `kernel` for `batch` products of (m x k) by (k x n) at these offsets,
    /// batch strides and row strides (in elements).
    pub fn choose(kernel: MatmulKernel, n: usize, k: usize, layout: [usize; 6]) -> Variant {
        match kernel {
            MatmulKernel::WorkgroupTiled => Variant::WorkgroupTiled,
            MatmulKernel::RegisterTiled(tile)
                if n.is_multiple_of(4)
                    && k.is_multiple_of(4)
                    && layout.iter().all(|v| v.is_multiple_of(4)) =>
            {
                Variant::Vec4 {
                    rows: tile.rows,
                    // A skinny product (n = 4) would leave the rest of a wider tile idle.
                    cols4: if n == 4 { 1 } else { tile.cols4 },
                }
            }
            MatmulKernel::RegisterTiled(_) => Variant::Scalar,
        }
    }

    /// Elements each size and offset parameter counts: 4 for the `vec4` kernel.
    fn unit(self) -> usize {
        match self {
            Variant::Vec4 { .. } => 4,
            _ => 1,
        }
    }

    /// The workgroup grid for `batch` products with an m x n result.
    fn grid(self, batch: usize, m: usize, n: usize, max: usize) -> (usize, usize, usize) {
        let numbered = |rows: usize, cols: usize| {
            let groups = (m.div_ceil(rows) * n.div_ceil(cols)).div_ceil(64);
            let x = groups.min(max);
            (x, groups.div_ceil(x), batch)
        };
        match self {
            // 16 x 16 threads, each a 4 x 4 block.
            Variant::WorkgroupTiled => (n.div_ceil(64), m.div_ceil(64), batch),
            // 64 threads, each a block, numbered across an x * y grid.
            Variant::Scalar => numbered(8, 4),
            Variant::Vec4 { rows, cols4 } => numbered(rows as usize, 4 * cols4 as usize),
        }
    }

    fn pipeline_key(self) -> KernelKey {
        let (kernel, variant) = match self {
            Variant::WorkgroupTiled => ("matmul_workgroup", 0),
            Variant::Scalar => ("matmul_registers", 0),
            Variant::Vec4 { rows, cols4 } => ("matmul_vec4", rows << 8 | cols4),
        };
        KernelKey::new(kernel, "", &[DType::Float32]).variant(variant)
    }

    pub fn source(self) -> String {
        match self {
            Variant::WorkgroupTiled => WORKGROUP_TILED.to_string(),
            Variant::Scalar => REGISTER_TILED.to_string(),
            Variant::Vec4 { rows, cols4 } => vec4_source(rows, cols4),
        }
    }
}

/// `matmul_vec4.wgsl` for a `rows` x `cols4` tile, its markers filled with the tile unrolled;
/// with `epilogue`, each stored `vec4` goes through `fn epilogue(v, value)` first (see
/// `epilogue.rs`, which also declares the output).
fn vec4_source(rows: u32, cols4: u32) -> String {
    vec4_text(rows, cols4, false)
}

fn vec4_text(rows: u32, cols4: u32, epilogue: bool) -> String {
    let tile = || (0..rows).flat_map(|i| (0..cols4).map(move |j| (i, j)));
    let mut declare = String::new();
    for i in 0..rows {
        declare += &format!("let a{i} = a_base + min(row0 + {i}u, params.m - 1u) * params.lda4;\n");
    }
    for j in 0..cols4 {
        declare += &format!("let b{j} = b_base + min(col0 + {j}u, params.n4 - 1u);\n");
    }
    for (i, j) in tile() {
        declare += &format!("var acc{i}_{j} = vec4<f32>(0.0);\n");
    }
    let mut step = String::new();
    for i in 0..rows {
        step += &format!("let av{i} = a[a{i} + kk];\n");
    }
    for r in 0..4 {
        for j in 0..cols4 {
            step += &format!("let bv{r}_{j} = b[b{j} + kb + {r}u * params.ldb4];\n");
        }
    }
    for (r, lane) in ["x", "y", "z", "w"].iter().enumerate() {
        for (i, j) in tile() {
            step += &format!("acc{i}_{j} = fma(vec4<f32>(av{i}.{lane}), bv{r}_{j}, acc{i}_{j});\n");
        }
    }
    let mut store = String::new();
    for (i, j) in tile() {
        let at = format!("out_base + (row0 + {i}u) * params.n4 + col0 + {j}u");
        let value = if epilogue {
            format!("epilogue({at}, acc{i}_{j})")
        } else {
            format!("acc{i}_{j}")
        };
        store += &format!(
            "if (row0 + {i}u < params.m && col0 + {j}u < params.n4) {{ out[{at}] = {value}; }}\n"
        );
    }
    format!("const TM: u32 = {rows}u;\nconst TN4: u32 = {cols4}u;\n{REGISTER_VEC4}")
        .replace("//{DECLARE}", &declare)
        .replace("//{STEP}", &step)
        .replace("//{STORE}", &store)
}

/// A matrix operand: its buffer, the offset of its first matrix, the distance between
/// matrices (0 when broadcast across the batch) and between rows (its columns when dense;
/// only the `vec4` kernel takes more).
pub struct MatrixOperand<'a> {
    pub buffer: &'a GpuBuffer,
    pub offset: usize,
    pub batch_stride: usize,
    pub row_stride: usize,
}

/// Records `batch` products of (m x k) by (k x n) row-major matrices, through `epilogue`
/// where there is one: in the `vec4` kernel's store when it can, else over the product.
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
    epilogue: Option<&Epilogue>,
) -> Result<GpuBuffer> {
    let layout = [
        a.offset,
        b.offset,
        a.batch_stride,
        b.batch_stride,
        a.row_stride,
        b.row_stride,
    ];
    let variant = Variant::choose(gpu.choices.matmul.get(), n, k, layout);
    let dense_rows = a.row_stride == k && b.row_stride == n;
    if !dense_rows && !matches!(variant, Variant::Vec4 { .. }) {
        return Err(Error::Value(format!(
            "matmul: only the vec4 kernel reads rows {} and {} apart; copy them first",
            a.row_stride, b.row_stride
        )));
    }
    let sizes = Sizes { batch, m, n, k };
    let plan = match (epilogue, variant) {
        (Some(e), Variant::Vec4 { .. }) if batch * m * n > 0 => e.plan().map(|p| (e, p)),
        _ => None,
    };
    match epilogue {
        Some(e) if plan.is_none() => {
            let product = record(gpu, batch_encoder, sizes, [&a, &b], variant, None)?;
            epilogue::over_product(gpu, batch_encoder, e, &product)
        }
        _ => record(gpu, batch_encoder, sizes, [&a, &b], variant, plan),
    }
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
    plan: Option<(&Epilogue, epilogue::Plan)>,
) -> Result<GpuBuffer> {
    let mut reads = vec![a.buffer, b.buffer];
    if let Some((e, _)) = &plan {
        reads.extend(e.buffers());
    }
    let out = create_output(gpu, batch * m * n, &reads)?;
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
        (Some((_, p)), Variant::Vec4 { rows, cols4 }) => {
            let key = p.key(rows << 8 | cols4);
            gpu.pipelines
                .get_or_create(&gpu.device, key, "main", reads.len(), || {
                    p.source(vec4_text(rows, cols4, true))
                })
        }
        _ => gpu
            .pipelines
            .get_or_create(&gpu.device, variant.pipeline_key(), "main", 2, || {
                variant.source()
            }),
    };
    let unit = variant.unit();
    let mut params: Vec<u32> = [
        m,
        n / unit,
        k / unit,
        a.offset / unit,
        b.offset / unit,
        a.batch_stride / unit,
        b.batch_stride / unit,
        grid.0,
        a.row_stride / unit,
        b.row_stride / unit,
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

/// Matmul of two float32 inputs broadcast to one batch shape, row-major. Matrices whose rows
/// are contiguous and evenly spaced (a column slice of a wider matrix: attention's heads) are
/// read in place, by the `vec4` kernel where rows are apart; every other layout is copied
/// first, as are strided rows when the `vec4` kernel cannot run.
pub fn eval(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    inputs: &[Array],
    data: &[GpuInput],
    epilogue: Option<&Epilogue>,
) -> Result<GpuBuffer> {
    let (a, b) = (inputs[0].shape(), inputs[1].shape());
    let r = a.len();
    let (m, k, n) = (a[r - 2], a[r - 1], b[r - 1]);
    let cols = [k, n];
    // (offset, batch stride, row stride) of each operand read in place; `None`: copied.
    let mut plan: Vec<Option<(usize, usize, usize)>> = (0..2)
        .map(|i| {
            crate::graph::shape::matrix_rows_walk(inputs[i].shape(), data[i].layout)
                .map(|(matrices, rows)| (data[i].layout.offset, matrices, rows))
        })
        .collect();
    let copied = |i: usize| (0, inputs[i].shape()[r - 2] * cols[i], cols[i]);
    let strided = |plan: &[Option<(usize, usize, usize)>], i: usize| {
        plan[i].is_some_and(|(_, _, rows)| rows != cols[i])
    };
    if strided(&plan, 0) || strided(&plan, 1) {
        let [(ao, am, ar), (bo, bm, br)] = [0, 1].map(|i| plan[i].unwrap_or_else(|| copied(i)));
        let layout = [ao, bo, am, bm, ar, br];
        let variant = Variant::choose(gpu.choices.matmul.get(), n, k, layout);
        if !matches!(variant, Variant::Vec4 { .. }) {
            for i in 0..2 {
                if strided(&plan, i) {
                    plan[i] = None;
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
        let (copy, (offset, batch_stride, row_stride)) = placement[i];
        MatrixOperand {
            buffer: copy.map_or(data[i].buffer(), |c| &copies[c]),
            offset,
            batch_stride,
            row_stride,
        }
    };
    let count = crate::graph::shape::numel(&a[..r - 2]);
    dispatch(gpu, batch, count, m, n, k, operand(0), operand(1), epilogue)
}
