//! Devices and streams. Each op names the stream it runs on; evaluation moves data between
//! devices as ops need it there.
//!
//! A stream is an ordered lane of work on one device. WebGPU gives a device one queue, and a
//! page's wasm runs on one thread, so the streams of a device share them: a stream's index
//! names it (for `synchronize`, and for MLX-style code that makes streams), but two streams
//! of one device do not run in parallel.

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

/// An ordered lane of work on a device, as MLX's `mx.Stream`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stream {
    pub device: Device,
    pub index: u32,
}

impl Stream {
    /// The default stream of `device`: index 0 on the GPU and 1 on the CPU, as MLX numbers them.
    pub fn default_for(device: Device) -> Stream {
        let index = match device {
            Device::Gpu => 0,
            Device::Cpu => 1,
        };
        Stream { device, index }
    }
}

/// A device stands for its default stream.
impl From<Device> for Stream {
    fn from(device: Device) -> Stream {
        Stream::default_for(device)
    }
}
