//! The ops a model needs, natively: their GPU kernels against the CPU reference over random
//! shapes, layouts and indices (proptest), and memory back where it started once every array
//! is gone. MLX's values for them are in `tests/golden.rs`.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{Rng, assert_matches, gpu_runtime, random_words, runner, same_on_both, words};
use proptest::prelude::*;
use tandem::graph::primitive::ScanOp;
use tandem::memory::{Scope, stats};
use tandem::ops::fast::AttentionMask;
use tandem::{Array, DType, Device, ops};

/// Indices for an axis of `extent`: mostly in range, some negative, some past either end.
fn indices(rng: &mut Rng, n: usize, extent: usize, dtype: DType) -> Vec<u32> {
    let e = extent.max(1) as i64;
    (0..n)
        .map(|_| {
            let v = match rng.next_u32() % 8 {
                0 => -(rng.next_u32() as i64 % e) - 1,
                1 => e + (rng.next_u32() % 3) as i64,
                2 if dtype == DType::Int32 => i64::from(i32::MIN),
                2 => i64::from(u32::MAX),
                _ => rng.next_u32() as i64 % e,
            };
            if dtype == DType::Uint32 {
                v.max(0) as u32
            } else {
                v as i32 as u32
            }
        })
        .collect()
}

#[test]
fn gathers_match_the_cpu_for_random_indices_and_layouts() {
    let runtime = gpu_runtime();
    let shapes = prop::collection::vec(1usize..6, 1..=4);
    let cases = (
        shapes,
        any::<u64>(),
        any::<bool>(),
        any::<bool>(),
        0usize..4,
    );
    runner(200)
        .run(&cases, |(shape, seed, transposed, along, count)| {
            let mut rng = Rng::new(seed);
            let n = shape.len();
            let axis = rng.next_u32() as usize % n;
            let dtype =
                [DType::Float32, DType::Int32, DType::Uint32, DType::Bool][seed as usize % 4];
            let index_dtype = if seed % 3 == 0 {
                DType::Uint32
            } else {
                DType::Int32
            };
            let size = shape.iter().product();
            let base = Array::from_words(random_words(dtype, size, seed), &shape, dtype).unwrap();
            let x = if transposed && n > 1 {
                let reversed: Vec<usize> = shape.iter().rev().copied().collect();
                let t =
                    Array::from_words(random_words(dtype, size, seed), &reversed, dtype).unwrap();
                ops::transpose(&t, None, Device::Cpu).unwrap()
            } else {
                base
            };
            let what =
                format!("{shape:?} axis {axis} {dtype:?} transposed {transposed} seed {seed}");
            if along {
                // takeAlongAxis: indices of the same rank, 1 or the array's extent elsewhere.
                let mut ishape: Vec<usize> = x
                    .shape()
                    .iter()
                    .map(|&d| {
                        if rng.next_u32().is_multiple_of(2) {
                            1
                        } else {
                            d
                        }
                    })
                    .collect();
                ishape[axis] = count;
                let idx = indices(
                    &mut rng,
                    ishape.iter().product(),
                    x.shape()[axis],
                    index_dtype,
                );
                let idx = Array::from_words(idx, &ishape, index_dtype).unwrap();
                same_on_both(&runtime, &what, |d| {
                    ops::take_along_axis(&x, &idx, Some(axis as isize), d)
                });
            } else {
                let ishape: Vec<usize> = (0..count % 3)
                    .map(|_| 1 + rng.next_u32() as usize % 3)
                    .collect();
                let idx = indices(
                    &mut rng,
                    ishape.iter().product(),
                    x.shape()[axis],
                    index_dtype,
                );
                let idx = Array::from_words(idx, &ishape, index_dtype).unwrap();
                same_on_both(&runtime, &what, |d| {
                    ops::take(&x, &idx, Some(axis as isize - n as isize), d)
                });
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn model_ops_leave_memory_where_it_started() {
    let runtime = gpu_runtime();
    pollster::block_on(runtime.synchronize()).unwrap();
    let start = stats().active_bytes.get(Scope::All).current;
    for device in [Device::Cpu, Device::Gpu] {
        let x = ops::random::uniform(&[4, 6, 5], [7, 1], -1.0, 1.0, device).unwrap();
        let idx = Array::from_slice(&[3i32, -1, 0], &[3]).unwrap();
        let two = Array::from_slice(&[2.0f32], &[]).unwrap();
        let q = ops::reshape(&x, &[2, 2, 6, 5], device).unwrap();
        let conv = ops::conv::ConvParams {
            stride: vec![1, 2],
            padding: vec![1, 0],
            dilation: vec![1, 1],
            groups: 1,
        };
        let rope = ops::fast::Rope {
            dims: 4,
            traditional: true,
            base: 100.0,
            scale: 1.0,
            offset: 3,
        };
        let results = [
            ops::take(&x, &idx, Some(1), device).unwrap(),
            ops::take(&x, &idx, None, device).unwrap(),
            ops::var(&x, Some(&[1]), false, 1, device).unwrap(),
            ops::any(&x, None, false, device).unwrap(),
            ops::triu(&x, -1, device).unwrap(),
            ops::nan_to_num(&x, 0.0, None, None, device).unwrap(),
            ops::scan(ScanOp::Sum, &x, Some(0), true, false, device).unwrap(),
            ops::fast::layer_norm(&x, None, None, 1e-5, device).unwrap(),
            ops::argsort(&x, Some(1), device).unwrap(),
            ops::topk(&x, 2, None, device).unwrap(),
            ops::fast::rope(&x, &rope, device).unwrap(),
            ops::fast::scaled_dot_product_attention(&q, &q, &q, 0.5, AttentionMask::Causal, device)
                .unwrap(),
            ops::conv::conv("conv2d", &q, &q, &conv, device).unwrap(),
            ops::conv::conv_transpose("convTranspose2d", &q, &q, &conv, &[0, 1], device).unwrap(),
            ops::put_along_axis(
                &x,
                &ops::reshape(&idx, &[1, 3, 1], device).unwrap(),
                &two,
                Some(1),
                device,
            )
            .unwrap(),
            ops::slice_update(
                &x,
                &two,
                &[0, -1, 0],
                &[4, -7, 5],
                Some(&[2, -1, 3]),
                device,
            )
            .unwrap(),
        ];
        pollster::block_on(runtime.evaluate(&results)).unwrap();
        for r in &results {
            words(&runtime, r);
        }
    }
    pollster::block_on(runtime.synchronize()).unwrap();
    assert_eq!(stats().active_bytes.get(Scope::All).current, start);
}

/// Scan inputs: floats in [0.5, 1.5) so that sums and products stay well conditioned (their
/// order differs between the devices), NaN now and then for the running extrema.
fn scan_words(op: ScanOp, dtype: DType, n: usize, seed: u64) -> Vec<u32> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| match dtype {
            DType::Float32
                if matches!(op, ScanOp::Max | ScanOp::Min) && rng.next_u32().is_multiple_of(50) =>
            {
                f32::NAN.to_bits()
            }
            DType::Float32 if op == ScanOp::Prod => rng.uniform(0.99, 1.01).to_bits(),
            DType::Float32 => rng.uniform(0.5, 1.5).to_bits(),
            _ => random_words(dtype, 1, u64::from(rng.next_u32()))[0],
        })
        .collect()
}

#[test]
fn scans_match_the_cpu_on_random_lengths_axes_and_directions() {
    let runtime = gpu_runtime();
    let ops_list = [
        ScanOp::Sum,
        ScanOp::Prod,
        ScanOp::Max,
        ScanOp::Min,
        ScanOp::LogAddExp,
    ];
    // Rows past 16384 among few take the GPU's three passes over blocks.
    let lengths = prop_oneof![1usize..40, 1000usize..3000, 16384usize..40000];
    let cases = (
        prop::sample::select(ops_list.to_vec()),
        lengths,
        1usize..4,
        any::<u64>(),
        any::<bool>(),
        any::<bool>(),
    );
    runner(120)
        .run(&cases, |(op, long, rows, seed, reverse, inclusive)| {
            let dtype = if op == ScanOp::LogAddExp {
                DType::Float32
            } else {
                [DType::Float32, DType::Int32, DType::Uint32, DType::Bool][seed as usize % 4]
            };
            // The long axis is first or last; the scan runs along either.
            let (shape, axis) = if seed % 2 == 0 { (vec![rows, long], 1) } else { (vec![long, rows], 0) };
            let x = Array::from_words(scan_words(op, dtype, rows * long, seed), &shape, dtype).unwrap();
            let what = format!("{}({dtype:?} {shape:?} axis {axis} reverse {reverse} inclusive {inclusive}) seed {seed}", op.name());
            let (gpu, cpu) = [Device::Gpu, Device::Cpu].map(|d| ops::scan(op, &x, Some(axis), reverse, inclusive, d).unwrap()).into();
            let rtol = if op == ScanOp::Max || op == ScanOp::Min { 0.0 } else { 1e-4 };
            assert_matches(&what, cpu.dtype(), &words(&runtime, &gpu), &words(&runtime, &cpu), rtol, 0.0);
            Ok(())
        })
        .unwrap();
}

/// Few rows take the workgroup-per-row kernel; on a software adapter (lavapipe, SwiftShader),
/// 32 rows or more take the thread-per-row one.
#[test]
fn norms_match_the_cpu_on_random_rows() {
    let runtime = gpu_runtime();
    let cases = (
        prop_oneof![1usize..5, 30usize..80],
        prop_oneof![1usize..40, 500usize..2000],
        any::<u64>(),
        any::<(bool, bool, bool)>(),
    );
    runner(60)
        .run(&cases, |(rows, len, seed, (rms, weight, bias))| {
            let mut rng = Rng::new(seed);
            let mut floats = |n: usize, spread: f32| -> Array {
                let v: Vec<f32> = (0..n).map(|_| rng.uniform(-spread, spread)).collect();
                Array::from_f32(&v, &[n]).unwrap()
            };
            let x = ops::reshape(
                &floats(rows * len, 3.0),
                &[rows as isize, len as isize],
                Device::Cpu,
            )
            .unwrap();
            let (w, b) = (floats(len, 2.0), floats(len, 1.0));
            let (w, b) = (weight.then_some(&w), bias.then_some(&b));
            let what = format!("rms {rms} [{rows}, {len}] weight {weight} bias {bias} seed {seed}");
            let build = |d: Device| {
                if rms {
                    ops::fast::rms_norm(&x, w, 1e-5, d).unwrap()
                } else {
                    ops::fast::layer_norm(&x, w, b, 1e-5, d).unwrap()
                }
            };
            let (gpu, cpu) = (build(Device::Gpu), build(Device::Cpu));
            assert_matches(
                &what,
                DType::Float32,
                &words(&runtime, &gpu),
                &words(&runtime, &cpu),
                1e-4,
                1e-5,
            );
            Ok(())
        })
        .unwrap();
}

#[test]
fn sorts_match_the_cpu_on_random_lengths_with_ties_and_nan() {
    let runtime = gpu_runtime();
    let cases = (
        prop_oneof![1usize..70, 900usize..3000],
        1usize..4,
        any::<u64>(),
        0usize..3,
    );
    runner(60)
        .run(&cases, |(len, rows, seed, what_kind)| {
            let mut rng = Rng::new(seed);
            let dtype =
                [DType::Float32, DType::Int32, DType::Uint32, DType::Bool][seed as usize % 4];
            // Few distinct values, so that ties are many; NaN and both zeros among the floats.
            let words: Vec<u32> = (0..rows * len)
                .map(|_| match (dtype, rng.next_u32() % 12) {
                    (DType::Float32, 0) => f32::NAN.to_bits(),
                    (DType::Float32, 1) => (-0.0f32).to_bits(),
                    (DType::Float32, r) => (r as f32 - 6.0).to_bits(),
                    (DType::Bool, r) => r & 1,
                    (_, r) => r.wrapping_sub(5).wrapping_mul(0x1000_0001),
                })
                .collect();
            let axis = if seed % 2 == 0 { 1 } else { 0 };
            let shape = if axis == 1 {
                vec![rows, len]
            } else {
                vec![len, rows]
            };
            let x = Array::from_words(words, &shape, dtype).unwrap();
            let k = 1 + (seed as usize / 7) % len;
            let what =
                format!("kind {what_kind} {dtype:?} {shape:?} axis {axis} k {k} seed {seed}");
            same_on_both(&runtime, &what, |d| match what_kind {
                0 => ops::sort(&x, Some(axis), d),
                1 => ops::argsort(&x, Some(axis), d),
                _ => ops::topk(&x, k, Some(axis), d),
            });
            Ok(())
        })
        .unwrap();
}

#[test]
fn convolutions_match_the_cpu_with_random_strides_padding_dilation_and_groups() {
    let runtime = gpu_runtime();
    let cases = (
        any::<u64>(),
        1usize..3,
        1usize..3,
        1usize..4,
        0usize..3,
        1usize..3,
        any::<bool>(),
    );
    runner(40)
        .run(&cases, |(seed, n, groups, stride, padding, dilation, two_d)| {
            let mut rng = Rng::new(seed);
            let (c, o) = (groups * (1 + rng.next_u32() as usize % 4), groups * (1 + rng.next_u32() as usize % 3));
            let k = 1 + rng.next_u32() as usize % 3;
            let size = dilation * (k - 1) + 1 + rng.next_u32() as usize % 6;
            let spatial = if two_d { 2 } else { 1 };
            let mut xs = vec![n];
            xs.extend(std::iter::repeat_n(size, spatial));
            xs.push(c);
            let mut ws = vec![o];
            ws.extend(std::iter::repeat_n(k, spatial));
            ws.push(c / groups);
            let (x, w) = (rng.floats(&xs), rng.floats(&ws));
            let params = ops::conv::ConvParams {
                stride: vec![stride; spatial],
                padding: vec![padding; spatial],
                dilation: vec![dilation; spatial],
                groups,
            };
            let what = format!("x {xs:?} w {ws:?} stride {stride} padding {padding} dilation {dilation} groups {groups}");
            let (gpu, cpu) = [Device::Gpu, Device::Cpu].map(|d| ops::conv::conv("conv", &x, &w, &params, d).unwrap()).into();
            assert_matches(&what, DType::Float32, &words(&runtime, &gpu), &words(&runtime, &cpu), 1e-5, 1e-5);
            // The transpose of the same parameters, with an output padding below the stride.
            let extra = vec![rng.next_u32() as usize % stride.max(dilation); spatial];
            let transposed = |d| ops::conv::conv_transpose("convTranspose", &x, &w, &params, &extra, d);
            if let (Ok(gpu), Ok(cpu)) = (transposed(Device::Gpu), transposed(Device::Cpu)) {
                let what = format!("transposed {what} output padding {extra:?}");
                assert_matches(&what, DType::Float32, &words(&runtime, &gpu), &words(&runtime, &cpu), 1e-5, 1e-5);
            }
            Ok(())
        })
        .unwrap();
}

/// A norm's output is carved apart from its weight and bias as well as its input: small arrays
/// share 2 MiB GPU buffers, and WebGPU rejects a dispatch that reads and writes one buffer
/// (the random programs found a layerNorm whose output landed beside its weight). Here the
/// weight and bias fill the start of one buffer, three 512 KiB fillers most of the rest, x
/// (512 KiB) a second buffer; a filler freed leaves just the room the output needs beside the
/// weight.
#[test]
fn a_norm_output_never_shares_a_buffer_with_its_weight_or_bias() {
    let runtime = gpu_runtime();
    let uniform = |shape: &[usize], seed: u32| {
        ops::random::uniform(shape, [seed, 7], -1.0, 1.0, Device::Gpu).unwrap()
    };
    let (weight, bias) = (uniform(&[128], 1), uniform(&[128], 2));
    pollster::block_on(runtime.evaluate(&[weight.clone(), bias.clone()])).unwrap();
    let mut fillers: Vec<Array> = (0..3).map(|i| uniform(&[131072], 10 + i)).collect();
    pollster::block_on(runtime.evaluate(&fillers)).unwrap();
    let x = uniform(&[1024, 128], 3);
    pollster::block_on(runtime.evaluate(std::slice::from_ref(&x))).unwrap();
    fillers.remove(0);
    pollster::block_on(runtime.synchronize()).unwrap();
    let y = ops::fast::layer_norm(&x, Some(&weight), Some(&bias), 1e-5, Device::Gpu).unwrap();
    let r = ops::fast::rms_norm(&x, Some(&weight), 1e-5, Device::Gpu).unwrap();
    let expected =
        ops::fast::layer_norm(&x, Some(&weight), Some(&bias), 1e-5, Device::Cpu).unwrap();
    assert_matches(
        "layerNorm",
        DType::Float32,
        &words(&runtime, &y),
        &words(&runtime, &expected),
        1e-5,
        1e-6,
    );
    let expected = ops::fast::rms_norm(&x, Some(&weight), 1e-5, Device::Cpu).unwrap();
    assert_matches(
        "rmsNorm",
        DType::Float32,
        &words(&runtime, &r),
        &words(&runtime, &expected),
        1e-5,
        1e-6,
    );
    drop(fillers);
}
