//! A convolution with a bias and an activation on the CPU stream: fusion makes it one
//! `PatchesThen` node whose product makes the patches a block of rows at a time. It must give
//! the bits of the unfused ops (im2col, matmul, then the epilogue) for any stride, padding and
//! dilation, on one thread and split over the pool, fold nothing a page holds, and keep memory
//! exact.

#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{Rng, gpu_runtime, words};
use tandem::graph::primitive::{Primitive, UnaryOp};
use tandem::memory::allocator::stats;
use tandem::memory::stats::Scope;
use tandem::ops::conv::ConvParams;
use tandem::transforms::fuse::{When, fuse};
use tandem::{Array, Device, ops};

fn active() -> u64 {
    stats().active_bytes.get(Scope::All).current
}

/// An input, a weight, stride, padding and dilation (height, width).
type Case = ([usize; 4], [usize; 4], [usize; 2], [usize; 2], [usize; 2]);

const CASES: [Case; 9] = [
    // An RGB image's 3x3 taps (27 a row), padding 1.
    ([2, 9, 7, 3], [5, 3, 3, 3], [1, 1], [1, 1], [1, 1]),
    // The peer benchmark's second layer, smaller: 288 a row, 64 columns.
    ([1, 16, 16, 32], [64, 3, 3, 32], [2, 2], [1, 1], [1, 1]),
    // 576 a row: two panels of B, and a B wider than the in-place path's 64 columns.
    ([1, 12, 12, 64], [96, 3, 3, 64], [1, 1], [1, 1], [1, 1]),
    // Large enough that the pool's threads share B's panels (576 rows by 128 columns).
    ([1, 24, 24, 16], [128, 3, 3, 16], [1, 1], [1, 1], [1, 1]),
    // Dilation across the width: the taps of a kernel row are not one run.
    ([1, 10, 11, 4], [8, 3, 2, 4], [1, 2], [2, 1], [2, 2]),
    // Padding wider than the kernel: whole rows and runs of zeros.
    ([3, 5, 6, 2], [7, 2, 2, 2], [1, 1], [3, 3], [1, 1]),
    // One output position: fewer rows than a register tile.
    ([1, 3, 3, 2], [4, 3, 3, 2], [1, 1], [0, 0], [1, 1]),
    // No channels: a product over nothing, the bias alone.
    ([1, 5, 5, 0], [2, 3, 3, 0], [1, 1], [1, 1], [1, 1]),
    // A stride past the kernel's reach skips input.
    ([2, 13, 9, 5], [3, 1, 2, 5], [3, 4], [0, 1], [1, 1]),
];

fn params(case: &Case) -> ConvParams {
    ConvParams {
        stride: case.2.to_vec(),
        padding: case.3.to_vec(),
        dilation: case.4.to_vec(),
        groups: 1,
    }
}

/// relu(conv(x, w) + b) on the CPU stream.
fn layer(x: &Array, w: &Array, b: &Array, p: &ConvParams) -> (Array, Array) {
    let conv = ops::conv::conv("conv2d", x, w, p, Device::Cpu).unwrap();
    let biased = ops::add(&conv, b, Device::Cpu).unwrap();
    (
        conv,
        ops::unary(UnaryOp::Relu, &biased, Device::Cpu).unwrap(),
    )
}

fn check_cases(threads: &str) {
    let runtime = gpu_runtime();
    let mut rng = Rng::new(43);
    for case in CASES {
        let what = format!("{case:?} ({threads})");
        let (x, w) = (rng.floats(&case.0), rng.floats(&case.1));
        let b = rng.floats(&[case.1[0]]);
        pollster::block_on(runtime.evaluate(&[x.clone(), w.clone(), b.clone()])).unwrap();
        let p = params(&case);
        let before = active();
        // Held, the convolution is computed on its own (im2col and a matmul), and the bias
        // and activation after it.
        let (held, unfused) = layer(&x, &w, &b, &p);
        let want = words(&runtime, &unfused);
        assert!(!matches!(
            unfused.primitive(),
            Some(Primitive::PatchesThen(..))
        ));
        drop((held, unfused));
        let (_, out) = layer(&x, &w, &b, &p);
        assert_eq!(
            fuse(std::slice::from_ref(&out), When::Repeated),
            1,
            "{what}"
        );
        assert!(
            matches!(out.primitive(), Some(Primitive::PatchesThen(..))),
            "{what}: {:?}",
            out.primitive().map(|p| p.name())
        );
        assert_eq!(words(&runtime, &out), want, "{what}");
        drop(out);
        pollster::block_on(runtime.synchronize()).unwrap();
        assert_eq!(active(), before, "{what}: memory back where it started");
    }
}

#[test]
fn a_fused_convolution_gives_the_unfused_bits_on_one_thread_and_on_the_pool() {
    check_cases("one thread");
    tandem::cpu::pool::start_native(2);
    check_cases("2 threads");
}

/// Patches a page holds (here, through the columns a test keeps) are computed on their own:
/// the product reads them and is a plain `MatmulThen`.
#[test]
fn held_patches_are_not_folded() {
    let runtime = gpu_runtime();
    let mut rng = Rng::new(7);
    let (x, w, b) = (
        rng.floats(&[1, 6, 6, 3]),
        rng.floats(&[4, 3, 3, 3]),
        rng.floats(&[4]),
    );
    let p = params(&CASES[0]);
    let (_, want) = layer(&x, &w, &b, &p);
    let want = words(&runtime, &want);
    let (_, out) = layer(&x, &w, &b, &p);
    // The patches node: the matmul's A, behind the reshapes and transpose of `ops/conv.rs`.
    let mut patches = out.inputs()[0].inputs()[0].clone();
    while !matches!(patches.primitive(), Some(Primitive::Patches(_))) {
        patches = patches.inputs()[0].clone();
    }
    fuse(std::slice::from_ref(&out), When::Repeated);
    assert!(
        matches!(out.primitive(), Some(Primitive::MatmulThen(_))),
        "{:?}",
        out.primitive().map(|p| p.name())
    );
    assert_eq!(words(&runtime, &out), want);
    assert_eq!(words(&runtime, &patches).len(), 6 * 6 * 9 * 3);
}

/// Sent to the pool's workers as a batch (no work on the calling thread), with a number for
/// its bias: the same bits, and every block freed.
#[test]
fn a_fused_convolution_run_by_the_workers_frees_its_memory() {
    let runtime = gpu_runtime();
    tandem::cpu::pool::start_native(2);
    let mut rng = Rng::new(9);
    let (x, w) = (rng.floats(&[2, 32, 32, 8]), rng.floats(&[16, 3, 3, 8]));
    pollster::block_on(runtime.evaluate(&[x.clone(), w.clone()])).unwrap();
    let p = params(&CASES[0]);
    let layer = || {
        let conv = ops::conv::conv("conv2d", &x, &w, &p, Device::Cpu).unwrap();
        let quarter = Array::from_f32(&[0.25], &[]).unwrap();
        let biased = ops::add(&conv, &quarter, Device::Cpu).unwrap();
        ops::unary(UnaryOp::Relu, &biased, Device::Cpu).unwrap()
    };
    let want = words(&runtime, &layer());
    for work in [0, tandem::scheduler::DEFAULT_OFFLOAD_WORK] {
        tandem::scheduler::set_offload_work(work);
        let before = active();
        let out = layer();
        fuse(std::slice::from_ref(&out), When::Repeated);
        assert!(matches!(out.primitive(), Some(Primitive::PatchesThen(..))));
        assert_eq!(words(&runtime, &out), want, "offload work {work}");
        drop(out);
        pollster::block_on(runtime.synchronize()).unwrap();
        assert_eq!(active(), before, "offload work {work}");
    }
}
