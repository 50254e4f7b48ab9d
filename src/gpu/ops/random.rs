//! Dispatch of random number generation (`kernels/random.wgsl`).

use crate::error::Result;
use crate::gpu::GpuContext;
use crate::gpu::encoder::{CommandBatch, create_storage, uniform_words};
use crate::gpu::ops::elementwise::MATH;
use crate::gpu::ops::grid_for;
use crate::primitive::Distribution;

const KERNEL: &str = include_str!("../kernels/random.wgsl");

/// The kernel's full source.
pub fn source() -> String {
    format!("{MATH}\n{KERNEL}")
}

/// Records `len` draws from `distribution` under `key`.
pub fn dispatch(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    key: [u32; 2],
    distribution: Distribution,
    len: usize,
) -> Result<wgpu::Buffer> {
    let out = create_storage(gpu, len)?;
    if len == 0 {
        return Ok(out);
    }
    let pipeline = gpu.pipelines.get_or_create(&gpu.device, "random", source);
    let (normal, a, b) = distribution.parts();
    let params = uniform_words(
        gpu,
        &[
            key[0],
            key[1],
            len as u32,
            u32::from(normal),
            a.to_bits(),
            b.to_bits(),
            0,
            0,
        ],
    );
    let bind_group = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("random"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: params.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: out.as_entire_binding(),
            },
        ],
    });
    let (x, y) = grid_for(len, gpu.limits().max_compute_workgroups_per_dimension);
    let mut pass = batch
        .encoder()
        .begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("random"),
            timestamp_writes: None,
        });
    pass.set_pipeline(&pipeline);
    pass.set_bind_group(0, &bind_group, &[]);
    pass.dispatch_workgroups(x, y, 1);
    drop(pass);
    Ok(out)
}
