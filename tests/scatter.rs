//! The scatter of `putAlongAxis` and `sliceUpdate`, natively: the GPU kernels against the CPU
//! reference over random shapes, layouts, indices and slices (proptest), a scatter's result
//! next to the array it copied, and memory back where it started. MLX's values for both ops
//! are in `tests/golden.rs`.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{Rng, gpu_runtime, random_words, runner, same_on_both, words};
use proptest::prelude::*;
use tandem::memory::{Scope, stats};
use tandem::{Array, DType, Device, ops};

/// An array of `shape` and `dtype`, laid out transposed when `transposed` (a strided input).
fn input(shape: &[usize], dtype: DType, seed: u64, transposed: bool) -> Array {
    let size = shape.iter().product();
    let data = random_words(dtype, size, seed);
    if !transposed || shape.len() < 2 {
        return Array::from_words(data, shape, dtype).unwrap();
    }
    let reversed: Vec<usize> = shape.iter().rev().copied().collect();
    let t = Array::from_words(data, &reversed, dtype).unwrap();
    ops::transpose(&t, None, Device::Cpu).unwrap()
}

/// Indices of `shape` whose lines along `axis` hold distinct slots of an axis of `extent`
/// (some written from the end), so that no element is written twice and the result is one.
fn distinct_indices(rng: &mut Rng, shape: &[usize], axis: usize, extent: usize) -> Vec<u32> {
    let stride: usize = shape[axis + 1..].iter().product();
    let lines = shape.iter().product::<usize>() / shape[axis].max(1);
    let mut out = vec![0u32; shape.iter().product()];
    for line in 0..lines {
        let (outer, inner) = (line / stride, line % stride);
        let mut slots: Vec<i64> = (0..extent as i64).collect();
        for i in (1..slots.len()).rev() {
            slots.swap(i, rng.next_u32() as usize % (i + 1));
        }
        for (k, &slot) in slots.iter().take(shape[axis]).enumerate() {
            let from_end = rng.next_u32().is_multiple_of(3);
            let value = if from_end { slot - extent as i64 } else { slot };
            out[(outer * shape[axis] + k) * stride + inner] = value as i32 as u32;
        }
    }
    out
}

#[test]
fn put_along_axis_matches_the_cpu_for_random_indices_and_layouts() {
    let runtime = gpu_runtime();
    let cases = (
        prop::collection::vec(1usize..6, 1..=4),
        any::<u64>(),
        any::<bool>(),
    );
    runner(150)
        .run(&cases, |(shape, seed, transposed)| {
            let mut rng = Rng::new(seed);
            let axis = rng.next_u32() as usize % shape.len();
            let dtype =
                [DType::Float32, DType::Int32, DType::Uint32, DType::Bool][seed as usize % 4];
            let x = input(&shape, dtype, seed, transposed);
            // Indices: 1 or the array's extent off the axis (broadcast), up to the extent on it.
            let mut ishape: Vec<usize> = shape
                .iter()
                .map(|&d| {
                    if rng.next_u32().is_multiple_of(2) {
                        1
                    } else {
                        d
                    }
                })
                .collect();
            ishape[axis] = rng.next_u32() as usize % (shape[axis] + 1);
            let idx = distinct_indices(&mut rng, &ishape, axis, shape[axis]);
            let idx = Array::from_words(idx, &ishape, DType::Int32).unwrap();
            // Values: the indices' shape with some axes broadcast, in float32 (cast to x's).
            let vshape: Vec<usize> = ishape
                .iter()
                .map(|&d| {
                    if rng.next_u32().is_multiple_of(3) {
                        1
                    } else {
                        d
                    }
                })
                .collect();
            let values = input(&vshape, DType::Float32, seed ^ 7, false);
            let what =
                format!("{shape:?} axis {axis} {dtype:?} indices {ishape:?} values {vshape:?}");
            same_on_both(&runtime, &what, |d| {
                ops::put_along_axis(&x, &idx, &values, Some(axis as isize), d)
            });
            Ok(())
        })
        .unwrap();
}

/// One axis's slice: a start and stop anywhere in (and past) the axis, a stride of either sign.
fn slice_axis(rng: &mut Rng, extent: usize) -> (isize, isize, isize) {
    let e = extent as isize;
    let mut pick = || rng.next_u32() as isize % (2 * e + 3) - e - 1;
    let (start, stop) = (pick(), pick());
    let step = 1 + rng.next_u32() as isize % 3;
    let sign = if rng.next_u32().is_multiple_of(3) {
        -1
    } else {
        1
    };
    (start, stop, sign * step)
}

#[test]
fn slice_update_matches_the_cpu_for_random_slices_and_layouts() {
    let runtime = gpu_runtime();
    let cases = (
        prop::collection::vec(1usize..7, 1..=4),
        any::<u64>(),
        any::<bool>(),
    );
    runner(150)
        .run(&cases, |(shape, seed, transposed)| {
            let mut rng = Rng::new(seed);
            let dtype =
                [DType::Float32, DType::Int32, DType::Uint32, DType::Bool][seed as usize % 4];
            let x = input(&shape, dtype, seed, transposed);
            let axes: Vec<_> = shape.iter().map(|&d| slice_axis(&mut rng, d)).collect();
            let start: Vec<isize> = axes.iter().map(|a| a.0).collect();
            let stop: Vec<isize> = axes.iter().map(|a| a.1).collect();
            let strides: Vec<isize> = axes.iter().map(|a| a.2).collect();
            let region = ops::slice(&x, &start, &stop, Some(&strides), Device::Cpu).unwrap();
            // The update: the slice's shape, some axes broadcast, sometimes transposed itself.
            let ushape: Vec<usize> = region
                .shape()
                .iter()
                .map(|&d| {
                    if rng.next_u32().is_multiple_of(3) {
                        1
                    } else {
                        d
                    }
                })
                .collect();
            let update = input(&ushape, dtype, seed ^ 11, seed % 5 == 0);
            let what = format!(
                "{shape:?} {dtype:?} slice {start:?}:{stop:?}:{strides:?} update {ushape:?}"
            );
            same_on_both(&runtime, &what, |d| {
                ops::slice_update(&x, &update, &start, &stop, Some(&strides), d)
            });
            // Reading the slice back gives the update; the rest is x's.
            let put =
                ops::slice_update(&x, &update, &start, &stop, Some(&strides), Device::Gpu).unwrap();
            let back = ops::slice(&put, &start, &stop, Some(&strides), Device::Gpu).unwrap();
            let expected = ops::broadcast_to(&update, region.shape(), Device::Cpu).unwrap();
            assert_eq!(words(&runtime, &back), words(&runtime, &expected), "{what}");
            Ok(())
        })
        .unwrap();
}

#[test]
fn a_scatter_leaves_its_input_as_it_was_and_memory_where_it_started() {
    let runtime = gpu_runtime();
    pollster::block_on(runtime.synchronize()).unwrap();
    let start = stats().active_bytes.get(Scope::All).current;
    for device in [Device::Cpu, Device::Gpu] {
        let x = ops::arange(0.0, 12.0, 1.0, DType::Float32, device).unwrap();
        let x = ops::reshape(&x, &[3, 4], device).unwrap();
        let before = words(&runtime, &x);
        let idx = Array::from_slice(&[3i32, -4, 1], &[3, 1]).unwrap();
        let values = Array::from_slice(&[-1.0f32], &[]).unwrap();
        let put = ops::put_along_axis(&x, &idx, &values, Some(1), device).unwrap();
        let update = Array::from_slice(&[7.0f32, 8.0], &[2]).unwrap();
        let sliced =
            ops::slice_update(&x, &update, &[2, 3], &[0, 0], Some(&[-2, -2]), device).unwrap();
        let flat = ops::put_along_axis(
            &x,
            &Array::from_slice(&[11i32], &[1]).unwrap(),
            &values,
            None,
            device,
        )
        .unwrap();
        let f = |a: &Array| {
            words(&runtime, a)
                .iter()
                .map(|&w| f32::from_bits(w))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            f(&put),
            [0., 1., 2., -1., -1., 5., 6., 7., 8., -1., 10., 11.],
            "{device:?}"
        );
        assert_eq!(
            f(&sliced),
            [0., 1., 2., 3., 4., 5., 6., 7., 8., 8., 10., 7.],
            "{device:?}"
        );
        assert_eq!(f(&flat)[11], -1.0, "{device:?}");
        assert_eq!(flat.shape(), [3, 4], "{device:?}");
        assert_eq!(
            words(&runtime, &x),
            before,
            "{device:?}: the input is unchanged"
        );
    }
    pollster::block_on(runtime.synchronize()).unwrap();
    assert_eq!(stats().active_bytes.get(Scope::All).current, start);
}
