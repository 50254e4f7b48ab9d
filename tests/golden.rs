//! MLX's golden values (`tests/golden/golden.json`) on both devices: the CPU kernels and the
//! GPU kernels on Vulkan (Mesa lavapipe in CI).
#![cfg(not(target_arch = "wasm32"))]

mod common;
mod golden_cases;

use tandem::Device;

fn check(device: Device) {
    let runtime = common::gpu_runtime();
    let failures = pollster::block_on(golden_cases::run_all(&runtime, device));
    let total = golden_cases::cases().len();
    assert!(
        failures.is_empty(),
        "{} of {total} cases fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn golden_values_match_on_the_cpu() {
    check(Device::Cpu);
}

#[test]
fn golden_values_match_on_the_gpu() {
    check(Device::Gpu);
}
