//! Dispatch of a 2-D convolution's patches (im2col, `wgsl/patches.wgsl`): one thread per
//! output element, or per four channels where they are whole `vec4`s, reading the row-major
//! input or writing a zero of the padding.

use crate::array::Array;
use crate::error::Result;
use crate::gpu::GpuContext;
use crate::gpu::device::buffers::{create_output, create_storage};
use crate::gpu::device::encoder::CommandBatch;
use crate::gpu::device::grid::grid_for;
use crate::gpu::device::pipelines::KernelKey;
use crate::gpu::input::{GpuInput, row_major};
use crate::graph::primitive::Patches;
use crate::memory::allocator::GpuBuffer;

const KERNEL: &str = include_str!("wgsl/patches.wgsl");

/// Records the patches of `inputs[0]` (`[N, H, W, C]`) into the node's `[N, OH, OW, taps, C]`.
pub fn dispatch(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    p: &Patches,
    node: &Array,
    inputs: &[Array],
    data: &[GpuInput],
) -> Result<GpuBuffer> {
    if node.size() == 0 {
        return create_storage(gpu, 0);
    }
    let x = row_major(gpu, batch, &inputs[0], &data[0])?;
    let (xs, os) = (inputs[0].shape(), node.shape());
    let lanes = if xs[3] % 4 == 0 && x.offset() % 4 == 0 {
        4
    } else {
        1
    };
    let params = [
        (node.size() / lanes) as u32,
        (x.offset() / lanes) as u32,
        xs[1] as u32,
        xs[2] as u32,
        (xs[3] / lanes) as u32,
        os[1] as u32,
        os[2] as u32,
        p.kernel[1] as u32,
        os[3] as u32,
        p.stride[0] as u32,
        p.stride[1] as u32,
        p.padding[0] as u32,
        p.padding[1] as u32,
        p.dilation[0] as u32,
        p.dilation[1] as u32,
        0,
    ];
    let out = create_output(gpu, node.size(), &[x.buffer()])?;
    let key = KernelKey::new("patches", "", &[]).variant(lanes as u32);
    let kernel = gpu
        .pipelines
        .get_or_create(&gpu.device, key, "main", 1, || {
            if lanes == 4 {
                KERNEL.replace("alias Value = f32;", "alias Value = vec4<f32>;")
            } else {
                KERNEL.to_string()
            }
        });
    let (gx, gy) = grid_for(
        node.size() / lanes,
        gpu.limits().max_compute_workgroups_per_dimension,
    );
    batch.dispatch(&kernel, &params, &[x.buffer(), &out], (gx, gy, 1))?;
    Ok(out)
}
