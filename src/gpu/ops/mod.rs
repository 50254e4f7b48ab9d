//! GPU dispatch per op family: each module picks the kernel, binds the buffers and records the
//! dispatch into the open [`crate::gpu::encoder::CommandBatch`].

pub mod binary;

use crate::array::Array;
use crate::error::Result;
use crate::gpu::GpuContext;
use crate::gpu::encoder::CommandBatch;
use crate::primitive::Primitive;
use crate::shape::contiguous_broadcast_strides;

/// Records the dispatch that computes `node` from its inputs' buffers and returns the output
/// buffer.
pub fn eval(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    node: &Array,
    inputs: &[Array],
    buffers: &[wgpu::Buffer],
) -> Result<wgpu::Buffer> {
    // Unevaluated nodes always have a primitive: only arrays made from data lack one.
    let primitive = node
        .primitive()
        .expect("an unevaluated node has a primitive");
    match primitive {
        Primitive::Binary(op) => {
            let strides: Vec<Vec<isize>> = inputs
                .iter()
                .map(|x| contiguous_broadcast_strides(x.shape(), node.shape()))
                .collect();
            let operand = |k: usize| binary::Operand {
                buffer: &buffers[k],
                dtype: inputs[k].dtype(),
                strides: &strides[k],
            };
            binary::dispatch(
                gpu,
                batch,
                op,
                node.dtype(),
                node.shape(),
                operand(0),
                operand(1),
            )
        }
    }
}

/// Threads per workgroup of the elementwise kernels.
pub const WORKGROUP_SIZE: u32 = 256;

/// The WGSL scalar type that stores a dtype (bool is stored as a 0/1 `u32`).
pub fn wgsl_type(dtype: crate::DType) -> &'static str {
    match dtype {
        crate::DType::Float32 => "f32",
        crate::DType::Int32 => "i32",
        crate::DType::Uint32 | crate::DType::Bool => "u32",
    }
}

/// The workgroup grid for `threads` one-element threads: x is capped at the per-dimension limit
/// and y takes the rest.
pub fn grid_for(threads: usize, max_per_dimension: u32) -> (u32, u32) {
    let groups = threads.div_ceil(WORKGROUP_SIZE as usize).max(1) as u64;
    let x = groups.min(max_per_dimension as u64);
    let y = groups.div_ceil(x);
    (x as u32, y as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_covers_every_thread_within_limits() {
        assert_eq!(grid_for(1, 65535), (1, 1));
        assert_eq!(grid_for(256 * 65535, 65535), (65535, 1));
        let (x, y) = grid_for(256 * 65535 + 1, 65535);
        assert_eq!((x, y), (65535, 2));
        assert!(x as usize * y as usize * 256 > 256 * 65535);
    }
}
