//! Dispatch of the row sorts (`wgsl/sort*.wgsl`): (key, index) pairs made from each row,
//! the bitonic network's stages one dispatch each (log2(N) (log2(N) + 1) / 2 of them for rows
//! padded to N), and the first `keep` of each row written as values or indices.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::Result;
use crate::gpu::GpuContext;
use crate::gpu::device::buffers::{create_output, create_storage};
use crate::gpu::device::encoder::CommandBatch;
use crate::gpu::device::grid::grid_for;
use crate::gpu::device::pipelines::KernelKey;
use crate::gpu::input::{GpuInput, row_major};
use crate::memory::allocator::GpuBuffer;

const COMMON: &str = include_str!("wgsl/sort.wgsl");

/// What a sort writes: from which end, how many of each row, and whether values or indices.
#[derive(Debug, Clone, Copy)]
pub struct SortOutput {
    pub indices: bool,
    pub descending: bool,
    pub keep: usize,
}

/// The key function of `dtype`: unsigned order is the value order, NaN above +inf and -0 equal
/// to +0 (so that the index decides between them, as a stable sort keeps them).
fn header(dtype: DType) -> String {
    let key = match dtype {
        DType::Float32 => {
            "let b = select(bitcast<u32>(x), 0u, x == 0.0);\n    \
             if ((b & 0x7fffffffu) > 0x7f800000u) { return 0xfffffffeu; }\n    \
             return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);"
        }
        DType::Int32 => "return bitcast<u32>(x) ^ 0x80000000u;",
        _ => "return x;",
    };
    let alias = crate::gpu::elementwise::wgsl_type(dtype);
    format!("alias In = {alias};\nfn key(x: In) -> u32 {{\n    {key}\n}}\n{COMMON}")
}

/// The source of one stage's kernel.
fn source(stage: &str, dtype: DType, indices: bool) -> String {
    let body = match stage {
        "pairs" => include_str!("wgsl/sort_pairs.wgsl").to_string(),
        "step" => include_str!("wgsl/sort_step.wgsl").to_string(),
        _ => include_str!("wgsl/sort_write.wgsl").replace(
            "OUTPUT",
            if indices {
                "index"
            } else {
                "x[params.x_offset + row * params.n + index]"
            },
        ),
    };
    format!("{}\n{body}", header(dtype))
}

/// Sorts `input`'s rows (its last axis), read in place when row-major, else from a copy.
pub fn eval(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    input: &Array,
    data: &GpuInput,
    output: SortOutput,
) -> Result<GpuBuffer> {
    let n = input.shape().last().copied().unwrap_or(1);
    let rows = input.size().checked_div(n).unwrap_or(0);
    if rows * output.keep == 0 {
        return create_storage(gpu, 0);
    }
    let rows_of_x = row_major(gpu, batch, input, data)?;
    let (x, offset) = (rows_of_x.buffer(), rows_of_x.offset());
    let padded = n.next_power_of_two();
    let threads = rows * padded;
    let mut params = [
        rows,
        n,
        padded,
        0,
        0,
        offset,
        usize::from(output.descending),
        output.keep,
    ]
    .map(|v| v as u32);
    let dtype = input.dtype();
    let kernel = |stage: &'static str, inputs: usize| {
        // The write stage differs between values and indices; the others only by dtype.
        let key = KernelKey {
            variant: u32::from(stage == "write" && output.indices),
            ..KernelKey::new("sort", stage, &[dtype])
        };
        gpu.pipelines
            .get_or_create(&gpu.device, key, "main", inputs, || {
                source(stage, dtype, output.indices)
            })
    };
    let limit = gpu.limits().max_compute_workgroups_per_dimension;
    let pairs = create_output(gpu, 2 * threads, &[x])?;
    batch.dispatch(
        &kernel("pairs", 1),
        &params,
        &[x, &pairs],
        dims(grid_for(threads, limit)),
    )?;
    let step = kernel("step", 0);
    let mut k = 2;
    while k <= padded {
        let mut j = k / 2;
        while j > 0 {
            (params[3], params[4]) = (k as u32, j as u32);
            batch.dispatch(&step, &params, &[&pairs], dims(grid_for(threads, limit)))?;
            j /= 2;
        }
        k *= 2;
    }
    let out = create_output(gpu, rows * output.keep, &[&pairs, x])?;
    let write = kernel("write", 2);
    let grid = dims(grid_for(rows * output.keep, limit));
    batch.dispatch(&write, &params, &[&pairs, x, &out], grid)?;
    Ok(out)
}

fn dims((x, y): (u32, u32)) -> (u32, u32, u32) {
    (x, y, 1)
}
