//! The browser tests: the JS API in headless Chromium on its WebGPU adapter (SwiftShader on a
//! machine without a GPU). One wasm test binary with a module per subject, so that it is
//! linked, bound and started once; run with `cargo xtask test` or
//! `wasm-pack test --headless --chrome --test web`, and one subject with a filter
//! (`… --test web -- memory_tools::`).
//!
//! Six subjects are binaries of their own. Two change the page for whatever runs after them:
//! `tests/web_device_loss.rs` destroys the page's device, and `tests/web_no_gpu.rs` runs again
//! in a browser without WebGPU. Three count exact figures from a page no other test has
//! touched, with no earlier test's work still settling: `tests/web_allocator_policy.rs` (the
//! policy changes only while nothing is allocated), `tests/web_memory_tools.rs` (the exact
//! events of the memory history, raw blocks), `tests/web_torch_memory.rs` (PyTorch's figures after every step, the cache's
//! reserved bytes included) and `tests/web_interleave.rs` (active bytes back to the byte after
//! every random program, which an earlier test's array finalized by the collector midway
//! would move).
#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

mod common;
#[path = "../golden_cases/mod.rs"]
mod golden_cases;
#[path = "../grad_cases/mod.rs"]
mod grad_cases;

mod bad_input;
mod compile;
mod concurrency;
mod kernels;
mod math;
mod memory;
mod memory_api_map;
mod model_ops;
mod scatter;
mod soak;
mod startup;
mod streams;
mod threads;
mod weights;
