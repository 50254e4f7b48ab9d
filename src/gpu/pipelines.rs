//! Compute pipelines, made once per kernel and specialization and then reused. Creating a
//! pipeline costs milliseconds (much more for big kernels), so nothing on a hot path makes one.

use std::cell::RefCell;
use std::collections::HashMap;

/// Pipelines keyed by a string that names the kernel and everything it was specialized on.
#[derive(Debug, Default)]
pub struct PipelineCache {
    pipelines: RefCell<HashMap<String, wgpu::ComputePipeline>>,
}

impl PipelineCache {
    /// The pipeline for `key`, compiling `source()` (entry point `main`) on first use.
    pub fn get_or_create(
        &self,
        device: &wgpu::Device,
        key: &str,
        source: impl FnOnce() -> String,
    ) -> wgpu::ComputePipeline {
        self.get_or_create_entry(device, key, "main", source)
    }

    /// The pipeline for `key` with entry point `entry` (which `key` must name too).
    pub fn get_or_create_entry(
        &self,
        device: &wgpu::Device,
        key: &str,
        entry: &str,
        source: impl FnOnce() -> String,
    ) -> wgpu::ComputePipeline {
        if let Some(pipeline) = self.pipelines.borrow().get(key) {
            return pipeline.clone();
        }
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(key),
            source: wgpu::ShaderSource::Wgsl(source().into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(key),
            layout: None,
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

    /// Number of pipelines made so far.
    pub fn len(&self) -> usize {
        self.pipelines.borrow().len()
    }

    pub fn is_empty(&self) -> bool {
        self.pipelines.borrow().is_empty()
    }
}
