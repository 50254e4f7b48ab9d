//! Adapter and device acquisition, and what they report.

use crate::error::{Error, Result};
use std::cell::Cell;

use crate::gpu::device::bind_groups::BindGroupCache;
use crate::gpu::device::choices::{ExpChoice, KernelChoices};
use crate::gpu::device::errors::GpuErrors;
use crate::gpu::device::params::ParamRing;
use crate::gpu::device::pipelines::PipelineCache;
use crate::gpu::device::timestamps::Timestamps;
use crate::gpu::matmul::MatmulKernel;
use crate::observe::busy::Monitor;

/// The adapter, in the terms of WebGPU's `GPUAdapterInfo`.
///
/// wgpu's browser backend only forwards the description and the fallback flag; the JS layer
/// fills in vendor and architecture from the page's own `GPUAdapterInfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdapterSummary {
    pub vendor: String,
    pub architecture: String,
    pub device: String,
    pub description: String,
    /// A software adapter (SwiftShader in Chromium, llvmpipe natively).
    pub is_fallback_adapter: bool,
    /// The wgpu backend: `"browser-webgpu"` or `"vulkan"`.
    pub backend: String,
}

/// Features the runtime reports, by their WebGPU names. These are the ones that decide kernel
/// choices; the rest are irrelevant to compute.
const REPORTED_FEATURES: [(&str, wgpu::Features); 3] = [
    ("shader-f16", wgpu::Features::SHADER_F16),
    ("subgroups", wgpu::Features::SUBGROUP),
    ("timestamp-query", wgpu::Features::TIMESTAMP_QUERY),
];

/// An adapter's device and queue, what they are, and what belongs to them: the caches, the
/// error scopes, the timestamp queries, the kernel choices start-up made, and the busy spans
/// of the queue that `smi()` reads.
#[derive(Debug)]
pub struct GpuContext {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    adapter: AdapterSummary,
    limits: wgpu::Limits,
    features: wgpu::Features,
    pub pipelines: PipelineCache,
    pub bind_groups: BindGroupCache,
    /// Every dispatch's parameters, in one uniform buffer.
    pub params: ParamRing,
    /// Errors the GPU reports after the fact, checked before results are returned.
    pub errors: GpuErrors,
    /// The one timestamp query set, where the adapter has `timestamp-query`.
    pub timestamps: Option<Timestamps>,
    /// Which `exp` and which matmul kernel the kernels use.
    pub choices: KernelChoices,
    /// When the queue was busy (the device emits spans to it; `smi()` reads it).
    pub monitor: Monitor,
    /// Command buffers submitted so far.
    submits: Cell<u64>,
}

impl GpuContext {
    /// Requests an adapter and a device with the adapter's full limits and the features in
    /// [`REPORTED_FEATURES`] that it has. `decide_exp` chooses the `exp` its kernels use, given
    /// the adapter and the new device (start-up remembers or measures it).
    pub async fn new(
        power_preference: wgpu::PowerPreference,
        decide_exp: impl AsyncFnOnce(&AdapterSummary, &wgpu::Device, &wgpu::Queue) -> ExpChoice,
    ) -> Result<GpuContext> {
        webgpu_served()?;
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: backends(),
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference,
                ..Default::default()
            })
            .await
            .map_err(|e| Error::Device(format!("no GPU adapter was found ({e})")))?;
        let features = adapter.features() & wanted_features();
        let limits = adapter.limits();
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("tandem"),
                required_features: features,
                required_limits: limits.clone(),
                ..Default::default()
            })
            .await
            .map_err(|e| Error::Device(format!("the GPU adapter refused a device ({e})")))?;
        let errors = GpuErrors::new(&device);
        let summary = summarize(&adapter.get_info());
        let exp = decide_exp(&summary, &device, &queue).await;
        let matmul = MatmulKernel::for_adapter(summary.is_fallback_adapter);
        Ok(GpuContext {
            pipelines: PipelineCache::new(exp.builtin),
            choices: KernelChoices {
                exp,
                matmul: Cell::new(matmul),
            },
            errors,
            params: ParamRing::new(&device, limits.max_buffer_size)?,
            submits: Cell::new(0),
            monitor: Monitor::default(),
            timestamps: features
                .contains(wgpu::Features::TIMESTAMP_QUERY)
                .then(|| Timestamps::new(&device, &queue)),
            device,
            queue,
            bind_groups: BindGroupCache::default(),
            adapter: summary,
            limits,
            features,
        })
    }

    /// Command buffers submitted so far: batching keeps this far below the dispatch count.
    pub fn submit_count(&self) -> u64 {
        self.submits.get()
    }

    /// Counts a submit made just now and times its work for the monitor: until the queue
    /// reports it done and, if the batch took timestamps in `stamp`, by them.
    pub(crate) fn count_submit(&self, stamp: Option<usize>) {
        self.submits.set(self.submits.get() + 1);
        let end = self.monitor.gpu.begin();
        if let (Some(slot), Some(stamps)) = (stamp, &self.timestamps) {
            let timed = end.clone();
            stamps.read_submit(slot, move |ms| timed.gpu_time(ms));
        }
        self.queue.on_submitted_work_done(move || end.done());
    }

    /// Lets the queue move past buffers destroyed since the last submit, so that their memory
    /// is released (see `allocator::take_destroyed`).
    pub fn release_destroyed(&self) {
        if crate::memory::allocator::take_destroyed() {
            self.queue.submit([]);
        }
    }

    /// Whether passes can write GPU timestamps (for profiles).
    pub fn has_timestamps(&self) -> bool {
        self.timestamps.is_some()
    }

    pub fn adapter(&self) -> &AdapterSummary {
        &self.adapter
    }

    pub fn limits(&self) -> &wgpu::Limits {
        &self.limits
    }

    /// The device's WebGPU feature names among those tandem reports.
    pub fn feature_names(&self) -> Vec<&'static str> {
        REPORTED_FEATURES
            .iter()
            .filter(|(_, f)| self.features.contains(*f))
            .map(|(name, _)| *name)
            .collect()
    }

    /// The limits that matter for compute, by their WebGPU names.
    pub fn limit_table(&self) -> Vec<(&'static str, u64)> {
        let l = &self.limits;
        vec![
            ("maxBufferSize", l.max_buffer_size),
            (
                "maxStorageBufferBindingSize",
                l.max_storage_buffer_binding_size,
            ),
            (
                "maxStorageBuffersPerShaderStage",
                l.max_storage_buffers_per_shader_stage.into(),
            ),
            (
                "maxUniformBufferBindingSize",
                l.max_uniform_buffer_binding_size,
            ),
            (
                "maxComputeWorkgroupStorageSize",
                l.max_compute_workgroup_storage_size.into(),
            ),
            (
                "maxComputeInvocationsPerWorkgroup",
                l.max_compute_invocations_per_workgroup.into(),
            ),
            (
                "maxComputeWorkgroupSizeX",
                l.max_compute_workgroup_size_x.into(),
            ),
            (
                "maxComputeWorkgroupsPerDimension",
                l.max_compute_workgroups_per_dimension.into(),
            ),
        ]
    }
}

impl Drop for GpuContext {
    fn drop(&mut self) {
        crate::memory::allocator::release_device(&self.device);
    }
}

fn wanted_features() -> wgpu::Features {
    REPORTED_FEATURES
        .iter()
        .fold(wgpu::Features::empty(), |all, (_, f)| all | *f)
}

#[cfg(target_arch = "wasm32")]
fn backends() -> wgpu::Backends {
    wgpu::Backends::BROWSER_WEBGPU
}

/// wgpu's browser backend works from a window or a dedicated worker and panics anywhere else
/// (a shared or service worker, Node): there the runtime runs without a GPU instead.
#[cfg(target_arch = "wasm32")]
fn webgpu_served() -> Result<()> {
    use wasm_bindgen::JsCast;
    let global = js_sys::global();
    if global.has_type::<web_sys::Window>()
        || global.has_type::<web_sys::DedicatedWorkerGlobalScope>()
    {
        return Ok(());
    }
    Err(Error::Device(
        "WebGPU is used from a window or a dedicated worker only, and this is neither".into(),
    ))
}

#[cfg(not(target_arch = "wasm32"))]
fn webgpu_served() -> Result<()> {
    Ok(())
}

#[cfg(not(target_arch = "wasm32"))]
fn backends() -> wgpu::Backends {
    wgpu::Backends::VULKAN
}

fn summarize(info: &wgpu::AdapterInfo) -> AdapterSummary {
    let backend = match info.backend {
        wgpu::Backend::BrowserWebGpu => "browser-webgpu".to_string(),
        other => other.to_str().to_string(),
    };
    AdapterSummary {
        vendor: vendor_name(info.vendor),
        architecture: String::new(),
        device: info.name.clone(),
        description: if info.driver_info.is_empty() {
            info.name.clone()
        } else {
            format!("{} ({} {})", info.name, info.driver, info.driver_info)
        },
        is_fallback_adapter: info.device_type == wgpu::DeviceType::Cpu,
        backend,
    }
}

/// PCI vendor ids as WebGPU's lowercase vendor names; unknown ids stay numeric.
fn vendor_name(id: u32) -> String {
    match id {
        0 => String::new(),
        0x1002 => "amd".into(),
        0x10de => "nvidia".into(),
        0x8086 => "intel".into(),
        0x13b5 => "arm".into(),
        0x5143 => "qualcomm".into(),
        0x106b => "apple".into(),
        0x10005 => "mesa".into(),
        other => format!("0x{other:04x}"),
    }
}
