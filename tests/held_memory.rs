//! Memory that nothing holds: after every array is dropped and `synchronize` resolves, active
//! bytes are back where they started (issue 29).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::gpu_runtime;
use tandem::memory::{Scope, stats};
use tandem::primitive::UnaryOp;
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
