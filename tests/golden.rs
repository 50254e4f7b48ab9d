//! MLX's golden values (`tests/golden/golden.json`) on both devices: the CPU kernels and the
//! GPU kernels on Vulkan (Mesa lavapipe in CI).
#![cfg(not(target_arch = "wasm32"))]

mod common;
mod golden_cases;

use tandem::Device;

#[test]
fn golden_values_match_on_the_cpu() {
    let runtime = common::gpu_runtime();
    let failures = pollster::block_on(golden_cases::run_all(&runtime, Device::Cpu));
    assert!(
        failures.is_empty(),
        "{} of {} cases fail:\n{}",
        failures.len(),
        golden_cases::cases().len(),
        failures.join("\n")
    );
}

#[test]
fn golden_values_match_on_the_gpu() {
    let runtime = common::gpu_runtime();
    let failures = pollster::block_on(golden_cases::run_all(&runtime, Device::Gpu));
    assert!(
        failures.is_empty(),
        "{} of {} cases fail:\n{}",
        failures.len(),
        golden_cases::cases().len(),
        failures.join("\n")
    );
}
