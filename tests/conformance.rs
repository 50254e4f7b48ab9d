//! Conformance: every elementwise op and view, on the GPU (Vulkan; Mesa lavapipe in CI)
//! against the CPU reference kernels, over random shapes (rank 0 to 4, broadcast, transposed
//! and sliced operands) and every dtype. Tolerances are stated per op.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{Rng, assert_matches, gpu_runtime, random_words, runner, words};
use proptest::prelude::*;
use tandem::dtype::packed::narrow_all;
use tandem::gpu::matmul::MatmulKernel;
use tandem::graph::primitive::{BinaryOp, UnaryOp};
use tandem::graph::shape::numel;
use tandem::{Array, DType, Device, Runtime, ops};

/// (rtol, atol) of the GPU against the CPU for a float result.
fn unary_tolerance(op: UnaryOp) -> (f32, f32) {
    use UnaryOp::*;
    match op {
        Abs | Neg | Sign | Square | Floor | Ceil | Round | Relu | LogicalNot | Cast => (0.0, 0.0),
        // WGSL allows 2.5 ULP for division and sqrt, 2 for inverseSqrt.
        Sqrt | Rsqrt | Reciprocal => (1e-6, 0.0),
        // The accurate math of wgsl/math.wgsl.
        _ => (1e-5, 1e-6),
    }
}

fn binary_tolerance(op: BinaryOp) -> (f32, f32) {
    match op {
        BinaryOp::Divide => (1e-6, 0.0),
        BinaryOp::Power | BinaryOp::LogAddExp | BinaryOp::Arctan2 => (1e-5, 1e-6),
        _ => (0.0, 0.0),
    }
}

/// How an operand of a given shape is made: fresh, as a transpose, or as a strided slice.
#[derive(Debug, Clone, Copy)]
enum Layout {
    Plain,
    Transposed,
    Sliced,
    /// Contiguous, from an offset into a bigger buffer (a multiple of 4 or not).
    Shifted,
}

/// An operand of `shape` whose data comes from `seed`, laid out as `layout`.
fn operand(
    shape: &[usize],
    dtype: DType,
    seed: u64,
    layout: Layout,
    data: impl Fn(DType, usize, u64) -> Vec<u32>,
) -> Array {
    // The packed dtypes' values are their compute dtype's, rounded or wrapped to them.
    let data = |dtype: DType, n, seed| narrow_all(&data(dtype.compute(), n, seed), dtype);
    match layout {
        Layout::Plain => Array::from_words(data(dtype, numel(shape), seed), shape, dtype).unwrap(),
        Layout::Transposed => {
            let reversed: Vec<usize> = shape.iter().rev().copied().collect();
            let base =
                Array::from_words(data(dtype, numel(&reversed), seed), &reversed, dtype).unwrap();
            ops::transpose(&base, None, Device::Cpu).unwrap()
        }
        Layout::Sliced => {
            // Every other element, walking backwards: indices 2n-1, 2n-3, …, 1 on each axis.
            let doubled: Vec<usize> = shape.iter().map(|d| 2 * d).collect();
            let base =
                Array::from_words(data(dtype, numel(&doubled), seed), &doubled, dtype).unwrap();
            let n = shape.len();
            let stop: Vec<isize> = doubled.iter().map(|&d| -(d as isize) - 1).collect();
            ops::slice(&base, &vec![-1; n], &stop, Some(&vec![-2; n]), Device::Cpu).unwrap()
        }
        Layout::Shifted => {
            let skip = (seed % 9) as usize;
            let len = numel(shape);
            let base =
                Array::from_words(data(dtype, len + skip, seed), &[len + skip], dtype).unwrap();
            let tail = ops::slice(
                &base,
                &[skip as isize],
                &[(len + skip) as isize],
                None,
                Device::Cpu,
            )
            .unwrap();
            let shape: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
            ops::reshape(&tail, &shape, Device::Cpu).unwrap()
        }
    }
}

fn shape_strategy() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(prop_oneof![8 => 1usize..7, 1 => Just(0usize)], 0..=4)
}

fn layout_strategy() -> impl Strategy<Value = Layout> {
    prop_oneof![
        Just(Layout::Plain),
        Just(Layout::Transposed),
        Just(Layout::Sliced),
        Just(Layout::Shifted)
    ]
}

fn dtype_strategy() -> impl Strategy<Value = DType> {
    prop::sample::select(DType::ALL.to_vec())
}

/// Evaluates `build(device)` on both devices and compares the GPU to the CPU.
fn compare(runtime: &Runtime, what: &str, tolerance: (f32, f32), build: impl Fn(Device) -> Array) {
    let on_gpu = build(Device::Gpu);
    let on_cpu = build(Device::Cpu);
    assert_eq!(on_gpu.shape(), on_cpu.shape(), "{what}: shapes");
    assert_eq!(on_gpu.dtype(), on_cpu.dtype(), "{what}: dtypes");
    let (got, expected) = (words(runtime, &on_gpu), words(runtime, &on_cpu));
    assert_matches(
        what,
        on_cpu.dtype(),
        &got,
        &expected,
        tolerance.0,
        tolerance.1,
    );
}

#[test]
fn unary_ops_match_the_cpu_on_every_dtype() {
    let runtime = gpu_runtime();
    let ops_and_cast = prop::sample::select([UnaryOp::ALL.to_vec(), vec![UnaryOp::Cast]].concat());
    let cases = (
        ops_and_cast,
        shape_strategy(),
        dtype_strategy(),
        dtype_strategy(),
        layout_strategy(),
        any::<u64>(),
    );
    runner(400)
        .run(&cases, |(op, shape, dtype, cast_to, layout, seed)| {
            let x = operand(&shape, dtype, seed, layout, random_words);
            let what = format!("{}({dtype:?} {shape:?} {layout:?}) seed {seed}", op.name());
            if op == UnaryOp::Neg && dtype == DType::Bool {
                prop_assert_eq!(
                    ops::unary(op, &x, Device::Gpu).unwrap_err().kind(),
                    "DTypeError"
                );
                return Ok(());
            }
            compare(&runtime, &what, unary_tolerance(op), |device| match op {
                UnaryOp::Cast => ops::astype(&x, cast_to, device),
                _ => ops::unary(op, &x, device).unwrap(),
            });
            Ok(())
        })
        .unwrap();
}

/// Operands for `power` stay where float results are finite and meaningful to compare.
fn binary_data(op: BinaryOp) -> impl Fn(DType, usize, u64) -> Vec<u32> {
    move |dtype, n, seed| {
        if op != BinaryOp::Power {
            return random_words(dtype, n, seed);
        }
        let mut rng = Rng::new(seed);
        (0..n)
            .map(|_| match dtype {
                DType::Float32 => rng.uniform(-6.0, 6.0).to_bits(),
                DType::Bool => rng.next_u32() & 1,
                _ => (rng.next_u32() % 9).wrapping_sub(2),
            })
            .collect()
    }
}

/// A shape and a second shape that broadcasts against it.
fn broadcast_pair() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    shape_strategy().prop_flat_map(|shape| {
        let rank = shape.len();
        let other = (0..=rank, prop::collection::vec(any::<bool>(), rank)).prop_map({
            let shape = shape.clone();
            move |(keep, ones)| {
                let tail = &shape[rank - keep..];
                tail.iter()
                    .zip(&ones[rank - keep..])
                    .map(|(&d, &one)| if one { 1 } else { d })
                    .collect::<Vec<_>>()
            }
        });
        (Just(shape), other)
    })
}

#[test]
fn binary_ops_match_the_cpu_with_broadcasting() {
    let runtime = gpu_runtime();
    let op = prop::sample::select(BinaryOp::ALL.to_vec());
    let sides = || (dtype_strategy(), layout_strategy());
    let cases = (
        op,
        broadcast_pair(),
        any::<bool>(),
        sides(),
        sides(),
        any::<u64>(),
    );
    runner(400)
        .run(&cases, |(op, (s1, s2), swap, (d1, l1), (d2, l2), seed)| {
            let (s1, s2) = if swap { (s2, s1) } else { (s1, s2) };
            let a = operand(&s1, d1, seed, l1, binary_data(op));
            let b = operand(&s2, d2, seed ^ 0x5bd1, l2, binary_data(op));
            let what = format!(
                "{}({d1:?} {s1:?} {l1:?}, {d2:?} {s2:?} {l2:?}) seed {seed}",
                op.name()
            );
            compare(&runtime, &what, binary_tolerance(op), |device| {
                ops::binary(op, &a, &b, device).unwrap()
            });
            Ok(())
        })
        .unwrap();
}

#[test]
fn where_matches_the_cpu() {
    let runtime = gpu_runtime();
    let cases = (
        broadcast_pair(),
        dtype_strategy(),
        dtype_strategy(),
        dtype_strategy(),
        layout_strategy(),
        any::<u64>(),
    );
    runner(120)
        .run(&cases, |((s1, s2), dc, dx, dy, layout, seed)| {
            let cond = operand(&s2, dc, seed, layout, random_words);
            let x = operand(&s1, dx, seed ^ 1, Layout::Plain, random_words);
            let y = operand(&s2, dy, seed ^ 2, layout, random_words);
            let what = format!("where({dc:?} {s2:?}, {dx:?} {s1:?}, {dy:?}) seed {seed}");
            compare(&runtime, &what, (0.0, 0.0), |device| {
                ops::where_(&cond, &x, &y, device).unwrap()
            });
            Ok(())
        })
        .unwrap();
}

/// The element of a row-major array of `shape` at `index`.
fn at(data: &[u32], shape: &[usize], index: &[usize]) -> u32 {
    let mut flat = 0;
    for (i, d) in index.iter().zip(shape) {
        flat = flat * d + i;
    }
    data[flat]
}

#[test]
fn views_read_the_elements_numpy_would() {
    let runtime = gpu_runtime();
    let data: Vec<u32> = (0..120).collect();
    let x = Array::from_words(data.clone(), &[2, 3, 4, 5], DType::Uint32).unwrap();
    for device in [Device::Cpu, Device::Gpu] {
        let t = ops::transpose(&x, Some(&[2, 0, 3, 1]), device).unwrap();
        let s = ops::slice(
            &t,
            &[3, 0, -1, 0],
            &[-100, 2, 0, 3],
            Some(&[-2, 1, -2, 2]),
            device,
        )
        .unwrap();
        assert_eq!(s.shape(), &[2, 2, 2, 2]);
        // Materialized on `device` by an op that reads the view.
        let zero = Array::from_words(vec![0], &[], DType::Uint32).unwrap();
        let read = ops::add(&s, &zero, device).unwrap();
        let mut expected = Vec::new();
        for i in [3usize, 1] {
            for j in [0usize, 1] {
                for k in [4usize, 2] {
                    for l in [0usize, 2] {
                        // t[i, j, k, l] = x[j, l, i, k]
                        expected.push(at(&data, &[2, 3, 4, 5], &[j, l, i, k]));
                    }
                }
            }
        }
        assert_eq!(
            words(&runtime, &s),
            expected,
            "slice of a transpose on {device:?}"
        );
        assert_eq!(
            words(&runtime, &read),
            expected,
            "an op reading the view on {device:?}"
        );
        // A reshape of a non-contiguous view copies; of a contiguous one it shares storage.
        let flat = ops::reshape(&s, &[-1], device).unwrap();
        assert_eq!(words(&runtime, &flat), expected);
        let same = ops::reshape(&x, &[6, 20], device).unwrap();
        words(&runtime, &same);
        assert!(std::rc::Rc::ptr_eq(
            &same.storage().unwrap(),
            &x.storage().unwrap()
        ));
        let b = ops::broadcast_to(
            &ops::expand_dims(&ops::flatten(&x, device), &[0], device).unwrap(),
            &[3, 120],
            device,
        )
        .unwrap();
        let squeezed = ops::squeeze(
            &ops::slice(&b, &[1, 0], &[2, 120], None, device).unwrap(),
            None,
            device,
        )
        .unwrap();
        assert_eq!(words(&runtime, &squeezed), data);
    }
}

#[test]
fn shape_errors_name_the_op_and_shapes() {
    let x = Array::from_f32(&[0.0; 6], &[2, 3]).unwrap();
    let err = ops::reshape(&x, &[4, 2], Device::Cpu).unwrap_err();
    assert_eq!(err.kind(), "ShapeError");
    assert!(
        err.message().contains("[2, 3]") && err.message().contains("[4, 2]"),
        "{}",
        err.message()
    );
    assert_eq!(
        ops::squeeze(&x, Some(&[0]), Device::Cpu)
            .unwrap_err()
            .kind(),
        "ShapeError"
    );
    assert_eq!(
        ops::broadcast_to(&x, &[3, 3], Device::Cpu)
            .unwrap_err()
            .kind(),
        "ShapeError"
    );
    assert_eq!(
        ops::transpose(&x, Some(&[0, 0]), Device::Cpu)
            .unwrap_err()
            .kind(),
        "ValueError"
    );
    assert_eq!(
        ops::slice(&x, &[0], &[1], None, Device::Cpu)
            .unwrap_err()
            .kind(),
        "ValueError"
    );
    let y = Array::from_f32(&[0.0; 4], &[4]).unwrap();
    let err = ops::binary(BinaryOp::Multiply, &x, &y, Device::Gpu).unwrap_err();
    assert_eq!(
        err.message(),
        "multiply: shapes [2, 3] and [4] cannot be broadcast together"
    );
    let err = ops::where_(&y, &x, &x, Device::Gpu).unwrap_err();
    assert_eq!(err.kind(), "ShapeError");
}

#[test]
fn trig_is_accurate_for_large_arguments_on_the_gpu() {
    let runtime = gpu_runtime();
    let xs = [
        12345.678f32,
        -12345.678,
        1e5,
        3.0e6,
        1e10,
        -1e20,
        1e30,
        3.0e38,
        1.5707964,
        1e-30,
    ];
    let x = Array::from_f32(&xs, &[xs.len()]).unwrap();
    for op in [UnaryOp::Sin, UnaryOp::Cos, UnaryOp::Tan] {
        let got = words(&runtime, &ops::unary(op, &x, Device::Gpu).unwrap());
        let reference = |v: f32| match op {
            UnaryOp::Sin => (v as f64).sin() as f32,
            UnaryOp::Cos => (v as f64).cos() as f32,
            _ => (v as f64).tan() as f32,
        };
        let expected: Vec<u32> = xs.iter().map(|&v| reference(v).to_bits()).collect();
        assert_matches(op.name(), DType::Float32, &got, &expected, 2e-6, 1e-7);
    }
    let _ = Rng::new(0);
}

/// Axes to reduce: none (all), or a random non-empty subset, possibly negative.
fn axes_strategy(rank: usize) -> impl Strategy<Value = Option<Vec<isize>>> {
    let subset = prop::collection::vec(any::<bool>(), rank).prop_map(move |pick| {
        let axes: Vec<isize> = (0..rank)
            .filter(|&a| pick[a])
            .map(|a| {
                if a % 2 == 0 {
                    a as isize
                } else {
                    a as isize - rank as isize
                }
            })
            .collect();
        if axes.is_empty() { None } else { Some(axes) }
    });
    prop_oneof![Just(None), subset]
}

/// Float data for reductions: moderate values, so sums are compared within a tolerance that
/// scales with the row length, and products stay finite.
fn reduce_data(op: ReduceOp) -> impl Fn(DType, usize, u64) -> Vec<u32> {
    move |dtype, n, seed| {
        let mut rng = Rng::new(seed);
        (0..n)
            .map(|_| match (dtype, op) {
                (DType::Float32, ReduceOp::Prod) => rng.uniform(0.8, 1.25).to_bits(),
                (DType::Float32, _) => rng.uniform(-4.0, 4.0).to_bits(),
                (DType::Bool, _) => rng.next_u32() & 1,
                _ => (rng.next_u32() % 41).wrapping_sub(20),
            })
            .collect()
    }
}

use tandem::graph::primitive::ReduceOp;

#[test]
fn reductions_match_the_cpu() {
    let runtime = gpu_runtime();
    let ops = prop::sample::select(ReduceOp::ALL.to_vec());
    let shape_and_axes = prop::collection::vec(1usize..9, 0..=4).prop_flat_map(|s| {
        let rank = s.len();
        (Just(s), axes_strategy(rank))
    });
    let cases = (
        ops,
        shape_and_axes,
        dtype_strategy(),
        layout_strategy(),
        any::<bool>(),
        any::<u64>(),
    );
    runner(200)
        .run(
            &cases,
            |(op, (shape, axes), dtype, layout, keepdims, seed)| {
                let x = operand(&shape, dtype, seed, layout, reduce_data(op));
                let axes = if op.is_arg() {
                    axes.map(|a| vec![a[0]])
                } else {
                    axes
                };
                let what = format!(
                    "{}({dtype:?} {shape:?} {layout:?}, axes {axes:?}) seed {seed}",
                    op.name()
                );
                let row = shape.iter().product::<usize>().max(1) as f32;
                compare(&runtime, &what, (1e-5, 4e-6 * row), |device| {
                    ops::reduce(op, &x, axes.as_deref(), keepdims, device).unwrap()
                });
                Ok(())
            },
        )
        .unwrap();
}

/// Each way the GPU folds: many rows (a thread per row), few long rows (split across threads,
/// or a workgroup tree for arg reductions), columns read in place, and few long columns
/// (moved last first); from an offset, in every dtype.
#[test]
fn reductions_match_the_cpu_on_every_kernel_path() {
    let runtime = gpu_runtime();
    let cases: [(&[usize], isize); 6] = [
        (&[3, 70_001], -1),
        (&[2500, 40], -1),
        (&[3000, 7], 0),
        (&[20_000, 3], 0),
        (&[64, 300], 0),
        (&[6, 50, 9], 1),
    ];
    let mut seed = 11;
    for (shape, axis) in cases {
        for dtype in DType::ALL {
            for op in ReduceOp::ALL {
                seed += 1;
                let x = operand(shape, dtype, seed, Layout::Shifted, reduce_data(op));
                let what = format!(
                    "{}({dtype:?} {shape:?}, axis {axis}) seed {seed}",
                    op.name()
                );
                let row = shape[axis.rem_euclid(shape.len() as isize) as usize] as f32;
                compare(&runtime, &what, (1e-5, 4e-6 * row), |device| {
                    ops::reduce(op, &x, Some(&[axis]), false, device).unwrap()
                });
            }
        }
    }
}

#[test]
fn big_reductions_take_two_passes_and_stay_exact_for_integers() {
    let runtime = gpu_runtime();
    let n = 3 * 256 * 64 + 17;
    let data: Vec<i32> = (0..n as i32).map(|i| (i % 7) - 3).collect();
    let x = Array::from_slice(&data, &[n]).unwrap();
    let expected: i32 = data.iter().sum();
    let sum = ops::reduce(ReduceOp::Sum, &x, None, false, Device::Gpu).unwrap();
    assert_eq!(
        pollster::block_on(runtime.read::<i32>(&sum)).unwrap(),
        vec![expected]
    );
    let mut floats: Vec<f32> = (0..n).map(|i| (i % 11) as f32 * 0.25).collect();
    floats[n - 5] = 100.0;
    let y = Array::from_f32(&floats, &[1, n]).unwrap();
    let arg = ops::reduce(ReduceOp::ArgMax, &y, Some(&[-1]), false, Device::Gpu).unwrap();
    assert_eq!(
        pollster::block_on(runtime.read::<u32>(&arg)).unwrap(),
        vec![(n - 5) as u32]
    );
    let total = ops::reduce(ReduceOp::Sum, &y, None, false, Device::Gpu).unwrap();
    let want: f64 = floats.iter().map(|&v| v as f64).sum();
    let got = pollster::block_on(runtime.read_f32(&total)).unwrap()[0] as f64;
    assert!((got - want).abs() < 1e-5 * want, "{got} vs {want}");
}

#[test]
fn mean_softmax_and_logsumexp_match_the_cpu() {
    let runtime = gpu_runtime();
    let data = random_words(DType::Float32, 6 * 7, 11)
        .into_iter()
        .map(|w| {
            let v = f32::from_bits(w);
            if v.is_finite() {
                v.clamp(-50.0, 50.0).to_bits()
            } else {
                w
            }
        })
        .collect::<Vec<_>>();
    let x = Array::from_words(data, &[6, 7], DType::Float32).unwrap();
    let ints = Array::from_slice(&[1i32, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
    compare(&runtime, "mean", (1e-6, 1e-6), |d| {
        ops::mean(&ints, Some(&[1]), false, d).unwrap()
    });
    compare(&runtime, "softmax", (1e-5, 1e-7), |d| {
        ops::softmax(&x, Some(&[-1]), d).unwrap()
    });
    compare(&runtime, "logsumexp", (1e-5, 1e-6), |d| {
        ops::logsumexp(&x, Some(&[0]), true, d).unwrap()
    });
    let means = pollster::block_on(
        runtime.read_f32(&ops::mean(&ints, Some(&[1]), false, Device::Gpu).unwrap()),
    )
    .unwrap();
    assert_eq!(means, vec![2.0, 5.0]);
    let rows = Array::from_f32(
        &[f32::NEG_INFINITY, f32::NEG_INFINITY, 1000.0, 1000.0],
        &[2, 2],
    )
    .unwrap();
    let lse = pollster::block_on(
        runtime.read_f32(&ops::logsumexp(&rows, Some(&[1]), false, Device::Gpu).unwrap()),
    )
    .unwrap();
    assert_eq!(lse[0], f32::NEG_INFINITY);
    assert!((lse[1] - (1000.0 + std::f32::consts::LN_2)).abs() < 1e-3);
}

#[test]
fn empty_reductions_follow_numpy() {
    let empty = Array::from_f32(&[], &[0, 3]).unwrap();
    let err = ops::reduce(ReduceOp::Max, &empty, Some(&[0]), false, Device::Cpu).unwrap_err();
    assert_eq!(err.kind(), "ValueError");
    let runtime = gpu_runtime();
    let sums = ops::reduce(ReduceOp::Sum, &empty, Some(&[0]), false, Device::Gpu).unwrap();
    assert_eq!(
        pollster::block_on(runtime.read_f32(&sums)).unwrap(),
        vec![0.0; 3]
    );
    let rows = ops::reduce(ReduceOp::Max, &empty, Some(&[1]), false, Device::Gpu).unwrap();
    assert_eq!(rows.shape(), &[0]);
    let err = ops::reduce(ReduceOp::ArgMax, &empty, Some(&[0, 1]), false, Device::Cpu).unwrap_err();
    assert_eq!(err.kind(), "ValueError");
}

/// Matmul shapes: batch axes that broadcast, sizes off the 64-wide tile, and 1-D operands.
fn matmul_case() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    let dims = (1usize..90, 1usize..90, 1usize..90);
    let batch = prop::collection::vec(1usize..4, 0..=2);
    (dims, batch.clone(), batch, 0u8..6).prop_map(|((m, k, n), ba, bb, kind)| match kind {
        0 => (vec![k], vec![k, n]),
        1 => (vec![m, k], vec![k]),
        2 => ([ba.clone(), vec![m, k]].concat(), vec![k, n]),
        3 => (vec![m, k], [bb.clone(), vec![k, n]].concat()),
        _ => {
            let shared: Vec<usize> = ba.iter().map(|&d| if d % 2 == 0 { 1 } else { d }).collect();
            ([ba, vec![m, k]].concat(), [shared, vec![k, n]].concat())
        }
    })
}

const MATMUL_KERNELS: [MatmulKernel; 5] = MatmulKernel::CANDIDATES;

#[test]
fn matmul_matches_the_cpu_for_odd_shapes_and_batches() {
    let runtime = gpu_runtime();
    let cases = (matmul_case(), layout_strategy(), any::<u64>());
    for kernel in MATMUL_KERNELS {
        runtime.gpu().unwrap().choices.matmul.set(kernel);
        matmul_cases_match(&runtime, &cases);
    }
}

/// Shapes whose rows are whole vec4s (k and n multiples of 4), which the register kernel reads
/// as vec4s: edges off every candidate tile, skinny products (n = 4), batches and offsets.
#[test]
fn matmul_vec4_tiles_match_the_cpu() {
    let runtime = gpu_runtime();
    let dims = (1usize..40, 1usize..20, 1usize..20);
    let batch = prop::collection::vec(1usize..4, 0..=2);
    let shapes = (dims, batch, any::<bool>()).prop_map(|((m, k4, n4), batch, broadcast)| {
        let (k, n) = (4 * k4, if n4 % 3 == 0 { 4 } else { 4 * n4 });
        let b = if broadcast {
            vec![k, n]
        } else {
            [batch.clone(), vec![k, n]].concat()
        };
        ([batch, vec![m, k]].concat(), b)
    });
    let layouts = prop_oneof![Just(Layout::Plain), Just(Layout::Shifted)];
    let cases = (shapes, layouts, any::<u64>());
    for kernel in MATMUL_KERNELS {
        if kernel != MatmulKernel::WorkgroupTiled {
            runtime.gpu().unwrap().choices.matmul.set(kernel);
            matmul_cases_match(&runtime, &cases);
        }
    }
}

fn matmul_cases_match(
    runtime: &tandem::Runtime,
    cases: &impl Strategy<Value = ((Vec<usize>, Vec<usize>), Layout, u64)>,
) {
    let kernel = runtime.gpu().unwrap().choices.matmul.get();
    runner(40)
        .run(cases, |((sa, sb), layout, seed)| {
            let small = |dtype, n, seed| reduce_data(ReduceOp::Sum)(dtype, n, seed);
            let a = operand(&sa, DType::Float32, seed, layout, small);
            let b = operand(&sb, DType::Float32, seed ^ 7, Layout::Plain, small);
            let k = sa[sa.len() - 1] as f32;
            let what = format!("matmul({sa:?} {layout:?}, {sb:?}) seed {seed}, {kernel:?}");
            compare(runtime, &what, (1e-5, 1e-5 * k), |device| {
                ops::matmul(&a, &b, device).unwrap()
            });
            Ok(())
        })
        .unwrap();
}

#[test]
fn matmul_1024_on_the_gpu_matches_the_cpu_within_1e_3() {
    let runtime = gpu_runtime();
    let n = 1024;
    let a = Array::from_words(
        reduce_data(ReduceOp::Sum)(DType::Float32, n * n, 1),
        &[n, n],
        DType::Float32,
    )
    .unwrap();
    let b = Array::from_words(
        reduce_data(ReduceOp::Sum)(DType::Float32, n * n, 2),
        &[n, n],
        DType::Float32,
    )
    .unwrap();
    let on_cpu =
        pollster::block_on(runtime.read_f32(&ops::matmul(&a, &b, Device::Cpu).unwrap())).unwrap();
    // Relative to the result's scale: entries are sums of 1024 products of values in [-4, 4].
    let scale = on_cpu.iter().fold(0f32, |m, v| m.max(v.abs()));
    for kernel in MATMUL_KERNELS {
        runtime.gpu().unwrap().choices.matmul.set(kernel);
        let on_gpu =
            pollster::block_on(runtime.read_f32(&ops::matmul(&a, &b, Device::Gpu).unwrap()))
                .unwrap();
        let worst = on_gpu
            .iter()
            .zip(&on_cpu)
            .fold(0f32, |m, (g, c)| m.max((g - c).abs()));
        assert!(
            worst <= 1e-3 * scale,
            "{kernel:?}: largest difference {worst} against a scale of {scale}"
        );
    }
}

#[test]
fn matmul_rejects_mismatched_and_integer_operands() {
    let a = Array::from_f32(&[0.0; 6], &[2, 3]).unwrap();
    let b = Array::from_f32(&[0.0; 8], &[4, 2]).unwrap();
    let err = ops::matmul(&a, &b, Device::Gpu).unwrap_err();
    assert_eq!(err.kind(), "ShapeError");
    assert!(err.message().contains("[2, 3]") && err.message().contains("[4, 2]"));
    let ints = Array::from_slice(&[1i32; 6], &[3, 2]).unwrap();
    let ints2 = Array::from_slice(&[1i32; 6], &[2, 3]).unwrap();
    assert_eq!(
        ops::matmul(&ints, &ints2, Device::Cpu).unwrap_err().kind(),
        "DTypeError"
    );
}

#[test]
fn concatenate_matches_the_cpu_and_split_undoes_it() {
    let runtime = gpu_runtime();
    let parts = prop::collection::vec((0usize..4, dtype_strategy(), layout_strategy()), 1..4);
    let base = prop::collection::vec(1usize..5, 1..=3);
    let cases = (base, parts, any::<prop::sample::Index>(), any::<u64>());
    runner(80)
        .run(&cases, |(base, parts, axis, seed)| {
            let axis = axis.index(base.len());
            let arrays: Vec<Array> = parts
                .iter()
                .enumerate()
                .map(|(i, &(extent, dtype, layout))| {
                    let mut shape = base.clone();
                    shape[axis] = extent;
                    operand(&shape, dtype, seed + i as u64, layout, random_words)
                })
                .collect();
            let what = format!("concatenate({parts:?} on {base:?}, axis {axis}) seed {seed}");
            compare(&runtime, &what, (0.0, 0.0), |device| {
                ops::concatenate(&arrays, axis as isize, device).unwrap()
            });
            let joined = ops::concatenate(&arrays, axis as isize, Device::Gpu).unwrap();
            let mut edges = Vec::new();
            let mut at = 0isize;
            for &(extent, _, _) in &parts[..parts.len() - 1] {
                at += extent as isize;
                edges.push(at);
            }
            let pieces = ops::split(
                &joined,
                ops::SplitAt::Indices(&edges),
                axis as isize,
                Device::Gpu,
            )
            .unwrap();
            for (piece, original) in pieces.iter().zip(&arrays) {
                let restored = ops::astype(original, joined.dtype(), Device::Cpu);
                prop_assert_eq!(words(&runtime, piece), words(&runtime, &restored));
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn stack_adds_an_axis_and_split_checks_its_sections() {
    let runtime = gpu_runtime();
    let a = Array::from_f32(&[1.0, 2.0, 3.0], &[3]).unwrap();
    let b = Array::from_f32(&[4.0, 5.0, 6.0], &[3]).unwrap();
    let s = ops::stack(&[a.clone(), b.clone()], -1, Device::Gpu).unwrap();
    assert_eq!(s.shape(), &[3, 2]);
    assert_eq!(
        pollster::block_on(runtime.read_f32(&s)).unwrap(),
        vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]
    );
    let parts = ops::split(&s, ops::SplitAt::Sections(3), 0, Device::Cpu).unwrap();
    assert_eq!(parts.len(), 3);
    assert_eq!(parts[2].shape(), &[1, 2]);
    assert_eq!(
        ops::split(&s, ops::SplitAt::Sections(2), 0, Device::Cpu)
            .unwrap_err()
            .kind(),
        "ValueError"
    );
    let c = Array::from_f32(&[0.0; 4], &[4]).unwrap();
    assert_eq!(
        ops::stack(&[a.clone(), c.clone()], 0, Device::Cpu)
            .unwrap_err()
            .kind(),
        "ShapeError"
    );
    let m = Array::from_f32(&[0.0; 4], &[2, 2]).unwrap();
    assert_eq!(
        ops::concatenate(&[a, m], 0, Device::Cpu)
            .unwrap_err()
            .kind(),
        "ShapeError"
    );
}

#[test]
fn the_same_key_draws_the_same_numbers_on_both_devices() {
    let runtime = gpu_runtime();
    for (normal, shape) in [(false, vec![1000]), (true, vec![17, 33]), (false, vec![0])] {
        let draw = |device| {
            if normal {
                ops::random::normal(&shape, [3, 4], 1.0, 2.0, device).unwrap()
            } else {
                ops::random::uniform(&shape, [3, 4], -1.0, 1.0, device).unwrap()
            }
        };
        let (on_gpu, on_cpu) = (
            words(&runtime, &draw(Device::Gpu)),
            words(&runtime, &draw(Device::Cpu)),
        );
        let tolerance = if normal { (1e-5, 1e-6) } else { (0.0, 0.0) };
        assert_matches(
            "random",
            DType::Float32,
            &on_gpu,
            &on_cpu,
            tolerance.0,
            tolerance.1,
        );
    }
    let other = words(
        &runtime,
        &ops::random::uniform(&[8], [3, 5], 0.0, 1.0, Device::Gpu).unwrap(),
    );
    let first = words(
        &runtime,
        &ops::random::uniform(&[8], [3, 4], 0.0, 1.0, Device::Gpu).unwrap(),
    );
    assert_ne!(other, first, "another key draws other numbers");
}

/// Sizes up to about 10^5: one or two axes, so that rows are long enough for the two-pass
/// reductions and grids span many workgroups.
fn large_shape() -> impl Strategy<Value = Vec<usize>> {
    prop_oneof![
        (1usize..100_000).prop_map(|n| vec![n]),
        (1usize..40, 1usize..2_500).prop_map(|(a, b)| vec![a, b]),
        (1usize..2_500, 1usize..40).prop_map(|(a, b)| vec![a, b]),
    ]
}

#[test]
fn large_arrays_match_the_cpu() {
    let runtime = gpu_runtime();
    let unary = prop::sample::select(vec![
        UnaryOp::Exp,
        UnaryOp::Sin,
        UnaryOp::Abs,
        UnaryOp::Cast,
    ]);
    let reduce = prop::sample::select(vec![ReduceOp::Sum, ReduceOp::Max, ReduceOp::ArgMin]);
    let cases = (
        large_shape(),
        unary,
        reduce,
        dtype_strategy(),
        any::<bool>(),
        any::<u64>(),
    );
    runner(12)
        .run(&cases, |(shape, uop, rop, dtype, transposed, seed)| {
            let layout = if transposed && shape.len() == 2 {
                Layout::Transposed
            } else {
                Layout::Plain
            };
            let x = operand(&shape, dtype, seed, layout, reduce_data(ReduceOp::Sum));
            let row: Vec<usize> = shape.iter().rev().take(1).copied().collect();
            let y = operand(&row, dtype, seed ^ 3, Layout::Plain, random_words);
            let what = format!("{shape:?} {dtype:?} {layout:?} seed {seed}");
            compare(
                &runtime,
                &format!("{} {what}", uop.name()),
                unary_tolerance(uop),
                |d| match uop {
                    UnaryOp::Cast => ops::astype(&x, DType::Float32, d),
                    _ => ops::unary(uop, &x, d).unwrap(),
                },
            );
            compare(&runtime, &format!("add {what}"), (0.0, 0.0), |d| {
                ops::binary(BinaryOp::Add, &x, &y, d).unwrap()
            });
            let n = shape.iter().product::<usize>() as f32;
            compare(
                &runtime,
                &format!("{} {what}", rop.name()),
                (1e-5, 4e-6 * n),
                |d| ops::reduce(rop, &x, Some(&[-1]), false, d).unwrap(),
            );
            Ok(())
        })
        .unwrap();
}

#[test]
fn mean_softmax_and_logsumexp_match_the_cpu_on_random_shapes() {
    let runtime = gpu_runtime();
    let which = 0u8..3;
    let shape_and_axes = prop::collection::vec(1usize..9, 1..=4).prop_flat_map(|s| {
        let rank = s.len();
        (Just(s), axes_strategy(rank))
    });
    let cases = (
        which,
        shape_and_axes,
        dtype_strategy(),
        layout_strategy(),
        any::<u64>(),
    );
    runner(120)
        .run(&cases, |(which, (shape, axes), dtype, layout, seed)| {
            let x = operand(&shape, dtype, seed, layout, reduce_data(ReduceOp::Sum));
            let what =
                format!("#{which}({dtype:?} {shape:?} {layout:?}, axes {axes:?}) seed {seed}");
            compare(&runtime, &what, (1e-5, 1e-6), |d| match which {
                0 => ops::mean(&x, axes.as_deref(), false, d).unwrap(),
                1 => ops::softmax(&x, axes.as_deref(), d).unwrap(),
                _ => ops::logsumexp(&x, axes.as_deref(), true, d).unwrap(),
            });
            Ok(())
        })
        .unwrap();
}

/// The fused softmax and logsumexp (over trailing axes) against the unfused chain (the same
/// op over a leading axis of the transpose), on both devices, through each GPU path: a thread
/// per row, per-thread partials merged per row, and empty rows. Rows hold NaN, +inf, all -inf
/// and large values.
#[test]
fn fused_softmax_and_logsumexp_match_the_unfused_ops() {
    let runtime = gpu_runtime();
    let shapes: [[usize; 2]; 4] = [[3000, 5], [3, 5000], [100, 300], [1, 70_000]];
    for (case, shape) in shapes.into_iter().enumerate() {
        let [rows, len] = shape;
        let mut rng = Rng::new(case as u64);
        let mut data: Vec<f32> = (0..rows * len).map(|_| rng.uniform(-30.0, 30.0)).collect();
        if len > 0 && rows >= 3 {
            data[0] = f32::NAN;
            data[len + 1] = f32::INFINITY;
            data[2 * len..3 * len].fill(f32::NEG_INFINITY);
        }
        if let Some(v) = data.last_mut() {
            *v = 1e30;
        }
        let x = Array::from_f32(&data, &shape).unwrap();
        let xt = ops::transpose(&x, None, Device::Cpu).unwrap();
        for device in [Device::Cpu, Device::Gpu] {
            let what = |op: &str| format!("{op} {shape:?} on {device:?}");
            let fused = ops::softmax(&x, Some(&[-1]), device).unwrap();
            let unfused = ops::transpose(
                &ops::softmax(&xt, Some(&[0]), device).unwrap(),
                None,
                device,
            )
            .unwrap();
            let (got, want) = (words(&runtime, &fused), words(&runtime, &unfused));
            assert_matches(&what("softmax"), DType::Float32, &got, &want, 1e-5, 1e-7);
            let fused = ops::logsumexp(&x, Some(&[-1]), false, device).unwrap();
            let unfused = ops::logsumexp(&xt, Some(&[0]), false, device).unwrap();
            let (got, want) = (words(&runtime, &fused), words(&runtime, &unfused));
            assert_matches(&what("logsumexp"), DType::Float32, &got, &want, 1e-5, 1e-6);
        }
    }
    // Empty rows, which the unfused ops reject (a max of nothing): as in MLX, softmax keeps
    // the empty shape and logsumexp is the log of an empty sum.
    let empty = Array::from_f32(&[], &[4, 0]).unwrap();
    for device in [Device::Cpu, Device::Gpu] {
        let s = ops::softmax(&empty, Some(&[-1]), device).unwrap();
        assert_eq!(s.shape(), &[4, 0]);
        assert!(pollster::block_on(runtime.read_f32(&s)).unwrap().is_empty());
        let l = ops::logsumexp(&empty, Some(&[-1]), false, device).unwrap();
        let got = pollster::block_on(runtime.read_f32(&l)).unwrap();
        assert_eq!(got, vec![f32::NEG_INFINITY; 4], "on {device:?}");
    }
}

type Build = Box<dyn Fn(Device) -> Array>;

/// Creation ops run where their stream says, and the GPU's fill kernels give the CPU's words:
/// sizes off the vec4, every dtype, values that round.
#[test]
fn creation_ops_match_across_devices_and_fill_on_the_gpu() {
    let runtime = gpu_runtime();
    for dtype in DType::ALL {
        for n in [0usize, 1, 3, 4, 5, 17, 1000] {
            let cases: Vec<(&str, Build)> = vec![
                (
                    "zeros",
                    Box::new(move |d| ops::zeros(&[n, 2], dtype, d).unwrap()),
                ),
                (
                    "full",
                    Box::new(move |d| ops::full(&[n], -2.7, dtype, d).unwrap()),
                ),
                ("eye", Box::new(move |d| ops::eye(n, dtype, d).unwrap())),
                (
                    "arange",
                    Box::new(move |d| ops::arange(-1.0, n as f64 / 3.0, 0.1, dtype, d).unwrap()),
                ),
                (
                    "linspace",
                    Box::new(move |d| ops::linspace(-1.0, 7.3, n, dtype, d).unwrap()),
                ),
            ];
            for (name, build) in cases {
                compare(
                    &runtime,
                    &format!("{name} {n} {dtype:?}"),
                    (0.0, 0.0),
                    &build,
                );
            }
        }
    }
    let zeros = ops::zeros(&[1 << 20], DType::Float32, Device::Gpu).unwrap();
    pollster::block_on(runtime.evaluate(std::slice::from_ref(&zeros))).unwrap();
    let storage = zeros.storage().unwrap();
    assert!(
        storage.on_gpu() && !storage.on_host(),
        "filled on the GPU, nothing in host memory"
    );
}

/// Every `step`th float32 bit pattern, both signs, and the special values.
fn float_sweep(step: u32) -> Array {
    let specials = [0x7f80_0000, 0xff80_0000, 0x7fc0_0000, 0, 0x8000_0000];
    let words: Vec<u32> = (0..u32::MAX / step)
        .map(|i| i * step)
        .chain(specials)
        .collect();
    let n = words.len();
    Array::from_words(words, &[n], DType::Float32).unwrap()
}

/// The transcendentals over the whole float32 range: the GPU's own range reductions against
/// the CPU's, to 1e-5 relative (the API's promise). It found log1p twice too big near 6e-8 on
/// Mesa.
#[test]
fn transcendentals_hold_their_accuracy_over_float32() {
    use UnaryOp::*;
    let runtime = gpu_runtime();
    let x = float_sweep(4093);
    for op in [
        Exp, Expm1, Log, Log1p, Sin, Cos, Tan, Tanh, Sigmoid, Erf, Gelu, Log2, Log10, Sinh, Cosh,
        Arcsin, Arccos, Arctan, Arcsinh, Arccosh, Arctanh, Erfinv,
    ] {
        compare(&runtime, op.name(), (1e-5, 1e-37), |device| {
            ops::unary(op, &x, device).unwrap()
        });
    }
    let y = ops::reshape(&float_sweep(4093 * 7), &[-1], Device::Cpu).unwrap();
    let n = y.shape()[0] as isize;
    let x = ops::slice(&x, &[0], &[n], None, Device::Cpu).unwrap();
    for op in [BinaryOp::Arctan2, BinaryOp::LogAddExp, BinaryOp::Remainder] {
        compare(&runtime, op.name(), (1e-5, 1e-37), |device| {
            ops::binary(op, &x, &y, device).unwrap()
        });
    }
}
