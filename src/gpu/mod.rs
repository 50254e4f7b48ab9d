//! The GPU evaluator: one dispatch module per primitive family, named as the CPU evaluator's
//! (`binary`, `unary`, `reduce`, …), with `eval` choosing among them and `fused` generating
//! the WGSL of fused programs; `device/` holds the WebGPU plumbing they share (the context,
//! command batches, the parameter ring, readback, the pipeline and bind group caches, error
//! scopes, submit timestamps); `wgsl/` holds the kernels. The same code drives the browser's
//! WebGPU (wasm) and Vulkan (native tests, Mesa lavapipe in CI).

pub mod binary;
pub mod cast;
pub mod device;
pub mod elementwise;
pub mod epilogue;
pub mod eval;
pub mod fill;
pub mod fused;
pub mod gather;
pub mod input;
pub mod matmul;
pub mod matmul_kernels;
pub mod norm;
pub mod packed;
pub mod patches;
pub mod random;
pub mod reduce;
pub mod row_norm;
pub mod scan;
pub mod scatter;
pub mod select;
pub mod sort;
pub mod unary;
pub mod vectorized;

pub use device::context::{AdapterSummary, GpuContext};
