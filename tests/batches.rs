//! Batches past the parameter ring's size: one node that records more dispatches than the
//! ring has blocks (a `concatenate` of thousands of arrays) is submitted by the scheduler,
//! after the buffers it uses are confirmed, never by the batch on its own (issue 29).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{gpu_runtime, words};
use tandem::memory::device_errors::fail_next_buffers_for_tests;
use tandem::memory::{Scope, stats};
use tandem::{Array, Device, ops};

fn pieces(count: usize) -> Vec<Array> {
    (0..count)
        .map(|i| Array::from_f32(&[i as f32, -(i as f32)], &[1, 2]).unwrap())
        .collect()
}

fn expected(count: usize) -> Vec<u32> {
    (0..count)
        .flat_map(|i| [(i as f32).to_bits(), (-(i as f32)).to_bits()])
        .collect()
}

#[test]
fn a_concatenate_of_2000_small_gpu_arrays_gives_the_right_values() {
    let runtime = gpu_runtime();
    let before = stats().active_bytes.get(Scope::All).current;
    let arrays = pieces(2000);
    let joined = ops::shape::concatenate(&arrays, 0, Device::Gpu).unwrap();
    assert_eq!(words(&runtime, &joined), expected(2000));
    // Along the other axis too: every piece lands in a strided column pair.
    let columns = ops::shape::concatenate(&arrays, 1, Device::Gpu).unwrap();
    assert_eq!(words(&runtime, &columns), expected(2000));
    drop((arrays, joined, columns));
    pollster::block_on(runtime.synchronize()).unwrap();
    // The ring grew for the batch and went back to one chunk once it was submitted.
    let after = stats().active_bytes.get(Scope::All).current;
    assert!(after <= before, "active bytes {before} -> {after}");
}

#[test]
fn an_oversized_batch_with_a_buffer_the_gpu_failed_to_create_is_rerun() {
    let runtime = gpu_runtime();
    let arrays = pieces(1500);
    let joined = ops::shape::concatenate(&arrays, 0, Device::Gpu).unwrap();
    // One of the uploads reports out of memory: the whole batch must be discarded and run
    // again, which only the scheduler's verified submit does.
    fail_next_buffers_for_tests(1);
    assert_eq!(words(&runtime, &joined), expected(1500));
}
