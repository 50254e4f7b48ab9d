//! Compute pipelines, made once per kernel and specialization and then reused. Creating a
//! pipeline costs milliseconds (much more for big kernels), so nothing on a hot path makes one.
//!
//! Every kernel binds the same way: binding 0 is its parameter block (a uniform read at a
//! dynamic offset into the shared parameter ring, see `encoder.rs`), bindings 1..=n are its
//! read-only inputs and binding n + 1 is its output. So one explicit layout per input count
//! serves every kernel.

use std::cell::RefCell;
use std::collections::HashMap;

/// Pipelines keyed by a string that names the kernel, its entry point and everything it was
/// specialized on; and the bind group layouts by input count.
#[derive(Debug, Default)]
pub struct PipelineCache {
    pipelines: RefCell<HashMap<String, wgpu::ComputePipeline>>,
    layouts: RefCell<HashMap<usize, wgpu::BindGroupLayout>>,
}

impl PipelineCache {
    /// The pipeline for `key` (entry point `entry`, `inputs` read-only buffers), compiling
    /// `source()` on first use.
    pub fn get_or_create(
        &self,
        device: &wgpu::Device,
        key: &str,
        entry: &str,
        inputs: usize,
        source: impl FnOnce() -> String,
    ) -> wgpu::ComputePipeline {
        if let Some(pipeline) = self.pipelines.borrow().get(key) {
            return pipeline.clone();
        }
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(key),
            source: wgpu::ShaderSource::Wgsl(source().into()),
        });
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(key),
            bind_group_layouts: &[Some(&self.bind_group_layout(device, inputs))],
            immediate_size: 0,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(key),
            layout: Some(&layout),
            module: &module,
            entry_point: Some(entry),
            compilation_options: Default::default(),
            cache: None,
        });
        self.pipelines
            .borrow_mut()
            .insert(key.to_string(), pipeline.clone());
        pipeline
    }

    /// The layout of a kernel with `inputs` read-only storage buffers.
    pub fn bind_group_layout(&self, device: &wgpu::Device, inputs: usize) -> wgpu::BindGroupLayout {
        self.layouts
            .borrow_mut()
            .entry(inputs)
            .or_insert_with(|| create_layout(device, inputs))
            .clone()
    }

    /// Number of pipelines made so far.
    pub fn len(&self) -> usize {
        self.pipelines.borrow().len()
    }

    pub fn is_empty(&self) -> bool {
        self.pipelines.borrow().is_empty()
    }
}

fn create_layout(device: &wgpu::Device, inputs: usize) -> wgpu::BindGroupLayout {
    let storage = |binding: u32, read_only: bool| wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    };
    let mut entries = vec![wgpu::BindGroupLayoutEntry {
        binding: 0,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: true,
            min_binding_size: None,
        },
        count: None,
    }];
    entries.extend((1..=inputs as u32).map(|b| storage(b, true)));
    entries.push(storage(inputs as u32 + 1, false));
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("tandem kernel"),
        entries: &entries,
    })
}
