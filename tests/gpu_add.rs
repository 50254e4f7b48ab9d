//! The add kernel on Vulkan (Mesa lavapipe in CI) against the CPU reference kernel.
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use tandem::{Array, DType, Device, Runtime, RuntimeOptions, ops};

fn gpu_runtime() -> Runtime {
    let options = RuntimeOptions {
        require_gpu: true,
        ..Default::default()
    };
    pollster::block_on(Runtime::new(options))
        .expect("a Vulkan adapter (install mesa-vulkan-drivers)")
}

fn words(runtime: &Runtime, a: &Array) -> Vec<u32> {
    pollster::block_on(a.to_words(runtime)).unwrap().to_vec()
}

#[test]
fn runtime_reports_a_vulkan_adapter() {
    let runtime = gpu_runtime();
    let info = runtime.info();
    assert!(info.gpu);
    let adapter = info.adapter.as_ref().unwrap();
    assert_eq!(adapter.backend, "vulkan");
    assert!(!adapter.device.is_empty());
    assert_eq!(info.default_device, Device::Gpu);
    let limit = |name| info.limits.iter().find(|(n, _)| *n == name).unwrap().1;
    assert!(limit("maxStorageBufferBindingSize") >= 128 << 20);
}

#[test]
fn gpu_add_of_the_readme_example() {
    let runtime = gpu_runtime();
    let a = Array::from_f32(&[1.0, 2.0, 3.0], &[3]).unwrap();
    let b = Array::from_f32(&[10.0, 20.0, 30.0], &[3]).unwrap();
    let c = ops::add(&a, &b, Device::Gpu).unwrap();
    let out = pollster::block_on(c.to_f32_vec(&runtime)).unwrap();
    assert_eq!(out, vec![11.0, 22.0, 33.0]);
    assert!(c.storage().unwrap().on_gpu(), "the add ran on the GPU");
}

#[test]
fn gpu_int_add_wraps_like_the_cpu() {
    let runtime = gpu_runtime();
    let a = Array::from_slice(&[i32::MAX, -5], &[2]).unwrap();
    let b = Array::from_slice(&[1i32, 3], &[2]).unwrap();
    let c = ops::add(&a, &b, Device::Gpu).unwrap();
    assert_eq!(
        pollster::block_on(c.to_vec::<i32>(&runtime)).unwrap(),
        vec![i32::MIN, -2]
    );
}

#[test]
fn empty_and_scalar_arrays_add_on_both_devices() {
    let runtime = gpu_runtime();
    for device in [Device::Cpu, Device::Gpu] {
        let empty = Array::from_f32(&[], &[0, 3]).unwrap();
        let row = Array::from_f32(&[1.0, 2.0, 3.0], &[3]).unwrap();
        let sum = ops::add(&empty, &row, device).unwrap();
        assert_eq!(sum.shape(), &[0, 3]);
        assert!(words(&runtime, &sum).is_empty());

        let scalar = Array::from_f32(&[2.5], &[]).unwrap();
        let sum = ops::add(&scalar, &row, device).unwrap();
        assert_eq!(
            pollster::block_on(sum.to_f32_vec(&runtime)).unwrap(),
            vec![3.5, 4.5, 5.5]
        );
    }
}

#[test]
fn gpu_result_feeds_a_cpu_op_and_back() {
    let runtime = gpu_runtime();
    let one = Array::from_f32(&[1.0; 4], &[4]).unwrap();
    let mut x = Array::from_f32(&[0.0; 4], &[4]).unwrap();
    for i in 0..20 {
        let device = if i % 2 == 0 { Device::Gpu } else { Device::Cpu };
        x = ops::add(&x, &one, device).unwrap();
    }
    assert_eq!(
        pollster::block_on(x.to_f32_vec(&runtime)).unwrap(),
        vec![20.0; 4]
    );
}

#[test]
fn deep_chain_evaluates_without_recursion() {
    let runtime = gpu_runtime();
    let one = Array::from_f32(&[1.0], &[]).unwrap();
    let mut x = Array::from_f32(&[0.0], &[]).unwrap();
    for _ in 0..10_000 {
        x = ops::add(&x, &one, Device::Cpu).unwrap();
    }
    assert_eq!(
        pollster::block_on(x.to_f32_vec(&runtime)).unwrap(),
        vec![10_000.0]
    );
    assert!(
        x.inputs().is_empty(),
        "an evaluated node lets go of its inputs"
    );
}

/// A shape of rank 0 to 4 and a second shape that broadcasts against it.
fn broadcast_pair() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    prop::collection::vec(1usize..7, 0..=4).prop_flat_map(|shape| {
        let rank = shape.len();
        let other = (0..=rank, prop::collection::vec(any::<bool>(), rank)).prop_map({
            let shape = shape.clone();
            move |(keep, ones)| {
                shape[rank - keep..]
                    .iter()
                    .zip(&ones[rank - keep..])
                    .map(|(&d, &one)| if one { 1 } else { d })
                    .collect::<Vec<_>>()
            }
        });
        (Just(shape), other)
    })
}

/// Words of `n` random elements of `dtype`, with floats in a range where addition is exact
/// enough to compare bit for bit and no denormals are flushed.
fn data(dtype: DType, n: usize, seed: u64) -> Vec<u32> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let bits = (state >> 32) as u32;
            match dtype {
                DType::Float32 => ((bits % 20001) as f32 / 10.0 - 1000.0).to_bits(),
                DType::Bool => bits & 1,
                DType::Int32 | DType::Uint32 => bits,
            }
        })
        .collect()
}

fn dtype_strategy() -> impl Strategy<Value = DType> {
    prop::sample::select(DType::ALL.to_vec())
}

#[test]
fn gpu_add_matches_the_cpu_kernel() {
    // One device for every case: making a device per case would dominate the run.
    let runtime = gpu_runtime();
    let cases = (
        broadcast_pair(),
        any::<bool>(),
        dtype_strategy(),
        dtype_strategy(),
        any::<u64>(),
    );
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(64));
    runner
        .run(
            &cases,
            |((lhs_shape, rhs_shape), swap, lhs_dtype, rhs_dtype, seed)| {
                let (lhs_shape, rhs_shape) = if swap {
                    (rhs_shape, lhs_shape)
                } else {
                    (lhs_shape, rhs_shape)
                };
                let lhs_words = data(lhs_dtype, tandem::shape::numel(&lhs_shape), seed);
                let rhs_words = data(rhs_dtype, tandem::shape::numel(&rhs_shape), seed ^ 0x9e37);
                let lhs = Array::from_words(lhs_words, &lhs_shape, lhs_dtype).unwrap();
                let rhs = Array::from_words(rhs_words, &rhs_shape, rhs_dtype).unwrap();
                let on_gpu = ops::add(&lhs, &rhs, Device::Gpu).unwrap();
                let on_cpu = ops::add(&lhs, &rhs, Device::Cpu).unwrap();
                prop_assert_eq!(on_gpu.shape(), on_cpu.shape());
                prop_assert_eq!(words(&runtime, &on_gpu), words(&runtime, &on_cpu));
                Ok(())
            },
        )
        .unwrap();
}
