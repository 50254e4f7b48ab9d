//! Devices. Each op names the device it runs on; evaluation moves data between them.

use crate::error::{Error, Result};

/// Where an op runs: Rust kernels in the host (wasm) thread, or WGSL kernels on WebGPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Device {
    Cpu,
    Gpu,
}

impl Device {
    /// The name used by the JS API.
    pub fn name(self) -> &'static str {
        match self {
            Device::Cpu => "cpu",
            Device::Gpu => "gpu",
        }
    }

    /// Parses `"cpu"` or `"gpu"`.
    ///
    /// ```
    /// use tandem::Device;
    /// assert_eq!(Device::parse("gpu"), Ok(Device::Gpu));
    /// assert!(Device::parse("tpu").is_err());
    /// ```
    pub fn parse(name: &str) -> Result<Device> {
        match name {
            "cpu" => Ok(Device::Cpu),
            "gpu" => Ok(Device::Gpu),
            other => Err(Error::Value(format!(
                "unknown device \"{other}\"; expected \"cpu\" or \"gpu\""
            ))),
        }
    }
}
