//! The runtime: the GPU context when WebGPU (or Vulkan, natively) is available, and the device
//! that ops use when they name none. A page has one runtime per JS realm (page or worker).

use crate::error::{Error, Result};
use crate::gpu::{AdapterSummary, GpuContext};
use crate::stream::Device;

/// How to start the runtime.
#[derive(Debug, Clone, Default)]
pub struct RuntimeOptions {
    /// Passed to the adapter request.
    pub power_preference: wgpu::PowerPreference,
    /// Fail instead of running the `gpu` device on the CPU when no adapter is found.
    pub require_gpu: bool,
}

/// What the runtime found, reported to JS by `initRuntime`.
#[derive(Debug, Clone)]
pub struct RuntimeInfo {
    /// Whether a GPU adapter and device were obtained.
    pub gpu: bool,
    /// The adapter, when there is one.
    pub adapter: Option<AdapterSummary>,
    /// Device limits by their WebGPU names.
    pub limits: Vec<(&'static str, u64)>,
    /// WebGPU feature names the device has.
    pub features: Vec<&'static str>,
    /// The device ops use when they name none.
    pub default_device: Device,
    /// Why that device was chosen.
    pub default_device_reason: String,
}

/// The runtime that evaluates arrays.
#[derive(Debug)]
pub struct Runtime {
    gpu: Option<GpuContext>,
    info: RuntimeInfo,
}

impl Runtime {
    /// Requests an adapter and device. Without one, the runtime still works and runs the `gpu`
    /// device's ops on the CPU, unless `options.require_gpu` is set.
    pub async fn new(options: RuntimeOptions) -> Result<Runtime> {
        match GpuContext::new(options.power_preference).await {
            Ok(gpu) => Ok(Runtime::with_gpu(gpu)),
            Err(err) if options.require_gpu => Err(Error::Device(format!(
                "initRuntime: requireGpu is set but {}",
                err.message()
            ))),
            Err(err) => Ok(Runtime::cpu_only(err.message())),
        }
    }

    fn with_gpu(gpu: GpuContext) -> Runtime {
        let adapter = gpu.adapter().clone();
        let kind = if adapter.is_fallback_adapter {
            "a software (fallback) GPU adapter, which runs on the CPU,"
        } else {
            "a GPU adapter"
        };
        let info = RuntimeInfo {
            gpu: true,
            limits: gpu.limit_table(),
            features: gpu.feature_names(),
            default_device: Device::Gpu,
            default_device_reason: format!("{kind} is available ({})", adapter.device),
            adapter: Some(adapter),
        };
        Runtime {
            gpu: Some(gpu),
            info,
        }
    }

    fn cpu_only(why: &str) -> Runtime {
        let info = RuntimeInfo {
            gpu: false,
            adapter: None,
            limits: Vec::new(),
            features: Vec::new(),
            default_device: Device::Cpu,
            default_device_reason: format!("no GPU: {why}; the gpu device runs on the CPU"),
        };
        Runtime { gpu: None, info }
    }

    /// The GPU context, if a GPU was found.
    pub fn gpu(&self) -> Option<&GpuContext> {
        self.gpu.as_ref()
    }

    pub fn info(&self) -> &RuntimeInfo {
        &self.info
    }

    /// The device that ops use when they name none.
    pub fn default_device(&self) -> Device {
        self.info.default_device
    }
}
