//! The WebGPU side: the device context, pipeline and bind group caches, command batching and readback, and one
//! dispatch module per op family. The same code drives the browser's WebGPU (wasm) and Vulkan
//! (native tests, Mesa lavapipe in CI).

pub mod bind_groups;
pub mod context;
pub mod encoder;
pub mod errors;
pub mod math_probe;
pub mod ops;
pub mod params;
pub mod pipelines;
pub mod readback;
pub mod submit_stamps;

pub use context::{AdapterSummary, GpuContext};
