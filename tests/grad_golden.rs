//! MLX's gradients of tandem's ops on both devices natively (see `grad_cases`): every case
//! passes, and the ops without a reverse rule are listed by name, so that a rule that goes
//! missing, or one that is added, is noticed.
#![cfg(not(target_arch = "wasm32"))]

mod common;
mod golden_cases;
mod grad_cases;

use tandem::Device;

fn check(device: Device) {
    let runtime = common::gpu_runtime();
    let (failures, missing) = pollster::block_on(grad_cases::run_all(&runtime, device));
    assert!(
        failures.is_empty(),
        "{} of {} cases fail on {device:?}:\n{}",
        failures.len(),
        grad_cases::count(),
        failures.join("\n")
    );
    let names: Vec<&str> = missing.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        grad_cases::WITHOUT_RULES,
        "ops without a reverse rule on {device:?} ({missing:?})"
    );
}

#[test]
fn mlx_gradients_match_on_the_cpu() {
    check(Device::Cpu);
}

#[test]
fn mlx_gradients_match_on_the_gpu() {
    check(Device::Gpu);
}
