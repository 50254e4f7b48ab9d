//! tandem: an in-browser tensor runtime on WebGPU with MLX-style lazy arrays.
//!
//! The core (everything but [`js`]) is plain Rust and runs natively on Vulkan, so it is tested
//! with `cargo test`. The wasm build adds the wasm-bindgen layer in `js`.
//!
//! ```
//! use tandem::{Array, Device, Runtime, ops};
//!
//! async fn one_plus_ten() -> tandem::Result<Vec<f32>> {
//!     let runtime = Runtime::new(Default::default()).await?;
//!     let a = Array::from_f32(&[1.0, 2.0, 3.0], &[3])?;
//!     let b = Array::from_f32(&[10.0, 20.0, 30.0], &[3])?;
//!     let c = ops::add(&a, &b, Device::Gpu)?; // builds a node; nothing runs yet
//!     runtime.read_f32(&c).await // evaluates on the GPU and reads back [11, 22, 33]
//! }
//! ```

// The threaded build (wasm atomics, a nightly compiler: see docs/threads.md) sleeps its pool's
// workers with `memory.atomic.wait32`, whose intrinsic is not yet stable.
#![cfg_attr(
    all(target_arch = "wasm32", target_feature = "atomics"),
    feature(stdarch_wasm_atomic_wait)
)]

pub mod array;
pub mod cpu;
pub mod dtype;
pub mod error;
pub mod gpu;
pub mod graph;
pub mod memory;
pub mod observe;
pub mod ops;
pub mod optimizers;
pub mod raw_block;
pub mod runtime;
pub mod scheduler;
pub mod startup;
pub mod storage;
pub mod stream;
pub mod transforms;
pub mod weights;

#[cfg(target_arch = "wasm32")]
pub mod js;

pub use array::Array;
pub use dtype::DType;
pub use error::{Error, Result};
pub use runtime::{Runtime, RuntimeInfo, RuntimeOptions};
pub use stream::Device;
