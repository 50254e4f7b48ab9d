//! Memory that nothing holds: after every array is dropped and `synchronize` resolves, active
//! bytes are back where they started (issue 29).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::gpu_runtime;
use tandem::graph::primitive::UnaryOp;
use tandem::memory::{Scope, stats};
use tandem::{Array, Device, ops};

fn active() -> u64 {
    stats().active_bytes.get(Scope::All).current
}

#[test]
fn an_empty_gpu_result_lets_go_of_its_inputs() {
    let runtime = gpu_runtime();
    pollster::block_on(runtime.synchronize()).unwrap();
    let before = active();
    let row = Array::from_f32(&[1.0, 2.0, 3.0], &[1, 3]).unwrap();
    let empty = Array::from_f32(&[], &[0, 3]).unwrap();
    let sum = ops::add(&empty, &row, Device::Gpu).unwrap();
    let negated = ops::unary(UnaryOp::Neg, &sum, Device::Gpu).unwrap();
    pollster::block_on(runtime.evaluate(std::slice::from_ref(&negated))).unwrap();
    drop((row, empty, sum, negated));
    pollster::block_on(runtime.synchronize()).unwrap();
    assert_eq!(active(), before);
}

/// The number goes to the kernel as a parameter word; its host copy is a wasm `Vec`, which
/// torch's `num_device_alloc` (device allocation calls) does not count.
#[test]
fn a_number_operand_makes_no_device_buffer() {
    let runtime = gpu_runtime();
    let base = ops::random::uniform(&[1 << 20], [1, 2], 0.0, 1.0, Device::Gpu).unwrap();
    pollster::block_on(runtime.evaluate(std::slice::from_ref(&base))).unwrap();
    let before = stats();
    for i in 0..1000 {
        let scalar = Array::from_f32(&[i as f32], &[]).unwrap();
        let a = ops::binary(
            tandem::graph::primitive::BinaryOp::Multiply,
            &base,
            &scalar,
            Device::Gpu,
        )
        .unwrap();
        pollster::block_on(runtime.evaluate(std::slice::from_ref(&a))).unwrap();
    }
    let after = stats();
    let grown = after.num_device_alloc - before.num_device_alloc;
    assert!(
        grown <= 2,
        "{grown} device buffers for 1,000 ops with a number operand"
    );
    let gpu_segments = |s: &tandem::memory::Stats| s.segment.get(Scope::Gpu).allocated;
    assert!(gpu_segments(&after) - gpu_segments(&before) <= 2);
}
