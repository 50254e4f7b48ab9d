//! Dispatch of elementwise binary ops (`kernels/binary.wgsl`).

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::gpu::GpuContext;
use crate::gpu::encoder::{CommandBatch, create_storage, uniform_words};
use crate::gpu::ops::{grid_for, wgsl_type};
use crate::primitive::BinaryOp;
use crate::shape::{collapse_dims, numel};

const SOURCE: &str = include_str!("../kernels/binary.wgsl");

/// The most dimensions the kernel walks; broadcasts collapse to far fewer in practice.
const MAX_RANK: usize = 8;

/// One input of a binary op: its buffer, dtype and strides over the output shape.
pub struct Operand<'a> {
    pub buffer: &'a wgpu::Buffer,
    pub dtype: DType,
    pub strides: &'a [isize],
}

/// Records `out = op(lhs, rhs)` over `shape` and returns the output buffer.
pub fn dispatch(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    op: BinaryOp,
    out_dtype: DType,
    shape: &[usize],
    lhs: Operand,
    rhs: Operand,
) -> Result<wgpu::Buffer> {
    let len = numel(shape);
    let out = create_storage(gpu, len)?;
    if len == 0 {
        return Ok(out);
    }
    let (dims, [lhs_strides, rhs_strides]) = collapse_dims(shape, [lhs.strides, rhs.strides]);
    if dims.len() > MAX_RANK {
        return Err(Error::Shape(format!(
            "{}: the GPU kernel walks at most {MAX_RANK} dimensions, and this broadcast needs {}",
            op.name(),
            dims.len()
        )));
    }
    let key = format!(
        "binary:{}:{}:{}:{}",
        op.name(),
        lhs.dtype.name(),
        rhs.dtype.name(),
        out_dtype.name()
    );
    let pipeline = gpu.pipelines.get_or_create(&gpu.device, &key, || {
        kernel_source(op, lhs.dtype, rhs.dtype, out_dtype)
    });
    let params = uniform_words(gpu, &dims_words(len, &dims, &lhs_strides, &rhs_strides));
    let bind_group = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(&key),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            entry(0, lhs.buffer),
            entry(1, rhs.buffer),
            entry(2, &out),
            entry(3, &params),
        ],
    });
    let (x, y) = grid_for(len, gpu.limits().max_compute_workgroups_per_dimension);
    let mut pass = batch
        .encoder()
        .begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(&key),
            timestamp_writes: None,
        });
    pass.set_pipeline(&pipeline);
    pass.set_bind_group(0, &bind_group, &[]);
    pass.dispatch_workgroups(x, y, 1);
    drop(pass);
    Ok(out)
}

fn entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: buffer.as_entire_binding(),
    }
}

/// The kernel with its type aliases and `op` prepended.
fn kernel_source(op: BinaryOp, lhs: DType, rhs: DType, out: DType) -> String {
    format!(
        "alias Lhs = {};\nalias Rhs = {};\nalias Out = {};\nfn op(a: Lhs, b: Rhs) -> Out {{ {} }}\n\n{SOURCE}",
        wgsl_type(lhs),
        wgsl_type(rhs),
        wgsl_type(out),
        op_body(op, out)
    )
}

/// The body of `op`. Operands are converted to the output type first, as the CPU kernel does;
/// WGSL integer arithmetic wraps, like the CPU's `wrapping_*`.
fn op_body(op: BinaryOp, out: DType) -> &'static str {
    match (op, out) {
        (BinaryOp::Add, DType::Bool) => "return select(0u, 1u, a != 0u || b != 0u);",
        (BinaryOp::Add, _) => "return Out(a) + Out(b);",
    }
}

/// The `Dims` uniform of `binary.wgsl`: len, rank, two offsets, then shape and both strides
/// padded to 8 entries each.
fn dims_words(len: usize, shape: &[usize], lhs: &[isize], rhs: &[isize]) -> Vec<u32> {
    let padded = |values: Vec<u32>| {
        let mut v = values;
        v.resize(MAX_RANK, 0);
        v
    };
    let mut words = vec![len as u32, shape.len() as u32, 0, 0];
    words.extend(padded(shape.iter().map(|&d| d as u32).collect()));
    words.extend(padded(lhs.iter().map(|&s| s as i32 as u32).collect()));
    words.extend(padded(rhs.iter().map(|&s| s as i32 as u32).collect()));
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_uniform_has_the_wgsl_struct_size() {
        let words = dims_words(6, &[2, 3], &[3, 1], &[0, 1]);
        assert_eq!(words.len() * 4, 112);
        assert_eq!(&words[..6], &[6, 2, 0, 0, 2, 3]);
        assert_eq!(words[12..14], [3, 1]);
        assert_eq!(words[20..22], [0, 1]);
    }

    #[test]
    fn source_declares_types_before_the_kernel() {
        let src = kernel_source(BinaryOp::Add, DType::Int32, DType::Float32, DType::Float32);
        assert!(src.starts_with("alias Lhs = i32;\nalias Rhs = f32;\nalias Out = f32;"));
        assert!(src.contains("@compute @workgroup_size(256)"));
    }
}
