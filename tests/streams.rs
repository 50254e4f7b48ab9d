//! Streams and the scheduler on Vulkan (Mesa lavapipe in CI): cross-device dependencies,
//! readbacks that share a submit and do not hold up other work, residency, and profiles.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{gpu_runtime, words};
use tandem::graph::primitive::{BinaryOp, ReduceOp, UnaryOp};
use tandem::memory::Scope;
use tandem::storage::drop_redundant_copies;
use tandem::{Array, Device, memory, ops};

fn exp(x: &Array, device: Device) -> Array {
    ops::unary(UnaryOp::Exp, x, device).unwrap()
}

fn mul(a: &Array, b: &Array, device: Device) -> tandem::Result<Array> {
    ops::binary(BinaryOp::Multiply, a, b, device)
}

fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
    pollster::block_on(future)
}

#[test]
fn chains_alternating_devices_100_times_match_a_single_device_run() {
    let runtime = gpu_runtime();
    let a = Array::from_f32(&[0.5, -1.25, 3.0, 0.0], &[4]).unwrap();
    let step = Array::from_f32(&[0.25, 0.5, -0.75, 1.0], &[4]).unwrap();
    let chain = |device_of: &dyn Fn(usize) -> Device| {
        let mut x = a.clone();
        for i in 0..100 {
            x = ops::add(&x, &step, device_of(i)).unwrap();
            x = mul(&x, &step, device_of(i)).unwrap();
        }
        x
    };
    let alternating = chain(&|i| if i % 2 == 0 { Device::Cpu } else { Device::Gpu });
    let cpu_only = chain(&|_| Device::Cpu);
    assert_eq!(words(&runtime, &alternating), words(&runtime, &cpu_only));
}

#[test]
fn readbacks_needed_together_share_one_submit() {
    let runtime = gpu_runtime();
    let gpu = runtime.gpu().unwrap();
    let x = Array::from_f32(&[1.0, 2.0, 3.0], &[3]).unwrap();
    let a = exp(&x, Device::Gpu);
    let b = ops::add(&x, &x, Device::Gpu).unwrap();
    let c = ops::add(&a, &b, Device::Cpu).unwrap();
    let before = gpu.submit_count();
    block_on(runtime.evaluate(std::slice::from_ref(&c))).unwrap();
    assert_eq!(
        gpu.submit_count() - before,
        1,
        "a and b's dispatches and both readbacks go in one submit"
    );

    let d = mul(&x, &x, Device::Gpu).unwrap();
    let e = exp(&x, Device::Gpu);
    let before = gpu.submit_count();
    let read = block_on(runtime.read_storages(&[d, e])).unwrap();
    assert_eq!(gpu.submit_count() - before, 1, "two outputs, one submit");
    assert_eq!(&read[0][..], words_of(&[1.0, 4.0, 9.0]));
}

fn words_of(values: &[f32]) -> &[u32] {
    bytemuck::cast_slice(values)
}

#[test]
fn cpu_work_goes_on_while_a_readback_is_in_flight() {
    let runtime = gpu_runtime();
    let x = Array::from_f32(&[0.5; 64], &[64]).unwrap();
    let needs_readback = exp(&exp(&x, Device::Gpu), Device::Cpu);
    let mut independent = Array::from_f32(&[0.0; 64], &[64]).unwrap();
    for _ in 0..5 {
        independent = ops::add(&independent, &x, Device::Cpu).unwrap();
    }
    runtime.profiler.start();
    block_on(runtime.evaluate(&[needs_readback.clone(), independent.clone()])).unwrap();
    let report = block_on(runtime.finish_profile()).unwrap();
    let ops: Vec<&str> = report.cpu.iter().map(|span| span.op).collect();
    assert_eq!(
        ops,
        ["fused", "exp"],
        "the five adds (fused into one op) come later in dependency order but ran while exp waited for its input"
    );
    assert_eq!(report.gpu.len(), 1);
    assert_eq!(report.gpu[0].dispatches.len(), 1);
    assert_eq!(report.gpu[0].dispatches[0].op, "exp");
    assert_eq!(report.gpu[0].dispatches[0].shape, [64]);
    assert_eq!(report.cpu[1].shape, [64]);
    assert!(report.cpu[0].start_ms >= report.gpu[0].submit_ms);
    // x went up for the GPU exp, and its result came back for the CPU exp.
    let moved: Vec<(Device, u64)> = report.transfers.iter().map(|t| (t.to, t.bytes)).collect();
    assert_eq!(moved, [(Device::Gpu, 256), (Device::Cpu, 256)]);
    assert!(report.transfers[1].at_ms >= report.gpu[0].submit_ms);
    let expected: Vec<f32> = [0.5f32; 64].iter().map(|v| v.exp().exp()).collect();
    let got = block_on(runtime.read_f32(&needs_readback)).unwrap();
    for (g, e) in got.iter().zip(&expected) {
        assert!((g - e).abs() <= 1e-5 * e.abs(), "{g} vs {e}");
    }
}

#[test]
fn profiles_time_gpu_dispatches_when_the_adapter_has_timestamps() {
    let runtime = gpu_runtime();
    let gpu = runtime.gpu().unwrap();
    let a = Array::from_f32(&vec![1.0; 128 * 128], &[128, 128]).unwrap();
    let product = ops::matmul(&a, &a, Device::Gpu).unwrap();
    let total = ops::reduce(ReduceOp::Sum, &product, None, false, Device::Gpu).unwrap();
    runtime.profiler.start();
    block_on(runtime.evaluate(std::slice::from_ref(&total))).unwrap();
    let report = block_on(runtime.finish_profile()).unwrap();
    let kernels: Vec<_> = report.gpu.iter().map(|b| &b.dispatches).collect();
    assert_eq!(report.gpu.len(), 1, "{kernels:?}");
    let batch = &report.gpu[0];
    let first = &batch.dispatches[0];
    assert!(first.kernel.starts_with("matmul"), "{:?}", batch.dispatches);
    assert_eq!((first.op, &first.shape[..]), ("matmul", &[128, 128][..]));
    assert_eq!(batch.dispatches.last().unwrap().shape, Vec::<usize>::new());
    assert!(batch.done_ms >= batch.submit_ms);
    if gpu.has_timestamps() {
        let times = batch.dispatch_ms.as_ref().unwrap();
        assert_eq!(times.len(), batch.dispatches.len());
        assert!(times.iter().all(|t| *t >= 0.0));
        assert!(batch.gpu_span_ms.unwrap() >= times.iter().copied().fold(0.0, f64::max));
    } else {
        assert_eq!(batch.dispatch_ms, None);
    }
    assert!(!runtime.profiler.is_active());
}

#[test]
fn both_copies_count_as_active_and_a_redundant_copy_can_be_dropped() {
    let runtime = gpu_runtime();
    let active = |scope| memory::stats().active_bytes.get(scope).current;
    let (cpu0, gpu0, all0) = (active(Scope::Cpu), active(Scope::Gpu), active(Scope::All));
    let a = Array::from_f32(&[1.5; 256], &[256]).unwrap();
    assert_eq!(active(Scope::Cpu) - cpu0, 1024);
    let doubled = ops::add(&a, &a, Device::Gpu).unwrap();
    words(&runtime, &doubled);
    assert_eq!(
        active(Scope::Gpu) - gpu0,
        2048,
        "a's upload and doubled's result"
    );
    assert_eq!(active(Scope::Cpu) - cpu0, 2048, "a, and doubled's readback");

    assert_eq!(
        drop_redundant_copies(Device::Gpu),
        2,
        "both arrays keep their host copy"
    );
    assert_eq!(active(Scope::Gpu), gpu0);
    let again = ops::add(&doubled, &a, Device::Gpu).unwrap();
    assert_eq!(
        block_on(runtime.read_f32(&again)).unwrap(),
        vec![4.5; 256],
        "dropped copies are re-derived from the host"
    );
    drop((a, doubled, again));
    assert_eq!(active(Scope::All), all0, "nothing is left behind");
    let end = memory::stats().active_bytes.get(Scope::All);
    assert_eq!(end.current, end.allocated - end.freed);
}

#[test]
fn reading_twice_transfers_once() {
    let runtime = gpu_runtime();
    let a = exp(&Array::from_f32(&[0.0; 10], &[10]).unwrap(), Device::Gpu);
    let before = memory::stats().gpu_to_cpu;
    words(&runtime, &a);
    words(&runtime, &a);
    assert_eq!(memory::stats().gpu_to_cpu - before, 40);
}
