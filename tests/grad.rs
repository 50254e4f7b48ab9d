//! Reverse mode (`tandem::transforms::grad`): every rule against central differences of the
//! function on the CPU, on both devices; MLX's conventions at kinks; broadcasting; memory.

#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{Rng, gpu_runtime};
use tandem::graph::primitive::{BinaryOp, ReduceOp, ScanOp, UnaryOp};
use tandem::ops::conv::ConvParams;
use tandem::transforms::grad::{jvp, value_and_grad, vjp};
use tandem::{Array, DType, Device, Runtime, ops};

type Fun = dyn Fn(&[Array], Device) -> Array;

fn read(runtime: &Runtime, a: &Array) -> Vec<f32> {
    pollster::block_on(runtime.read_f32(a)).unwrap()
}

/// `sum(y * w)` for fixed weights `w`, so that every element's cotangent differs.
fn weighted(y: &Array, device: Device) -> Array {
    let n = y.size();
    let w: Vec<f32> = (0..n).map(|i| 0.5 + (i % 7) as f32 * 0.25).collect();
    let w = Array::from_f32(&w, y.shape()).unwrap();
    let p = ops::binary(BinaryOp::Multiply, y, &w, device).unwrap();
    ops::reduce(ReduceOp::Sum, &p, None, false, device).unwrap()
}

/// The gradient of `f` at `xs` on both devices against central differences on the CPU.
fn check(runtime: &Runtime, what: &str, f: &Fun, xs: &[Array]) {
    let h = 1e-2f32;
    let values: Vec<Vec<f32>> = xs.iter().map(|x| read(runtime, x)).collect();
    let at = |k: usize, i: usize, d: f32| {
        let moved: Vec<Array> = (0..xs.len())
            .map(|j| {
                let mut v = values[j].clone();
                if j == k {
                    v[i] += d;
                }
                Array::from_f32(&v, xs[j].shape()).unwrap()
            })
            .collect();
        read(runtime, &f(&moved, Device::Cpu))[0] as f64
    };
    for device in [Device::Cpu, Device::Gpu] {
        let (value, grads) = value_and_grad(|v| Ok(f(v, device)), xs).unwrap();
        let want = read(runtime, &f(xs, Device::Cpu))[0];
        let got = read(runtime, &value)[0];
        assert!(
            (got - want).abs() <= 1e-4 * want.abs().max(1.0),
            "{what}: value {got} != {want}"
        );
        for (k, g) in grads.iter().enumerate() {
            assert_eq!(g.shape(), xs[k].shape(), "{what}: the gradient's shape");
            let g = read(runtime, g);
            for (i, &gi) in g.iter().enumerate() {
                let numeric = (at(k, i, h) - at(k, i, -h)) / (2.0 * h as f64);
                let close = (gi as f64 - numeric).abs() <= 2e-2 * numeric.abs().max(1.0);
                assert!(
                    close,
                    "{what} on {device:?}: d/dx{k}[{i}] is {gi}, differences give {numeric}"
                );
            }
        }
    }
}

fn uniform(rng: &mut Rng, shape: &[usize], lo: f32, hi: f32) -> Array {
    let v: Vec<f32> = (0..shape.iter().product())
        .map(|_| rng.uniform(lo, hi))
        .collect();
    Array::from_f32(&v, shape).unwrap()
}

#[test]
fn every_unary_rule_matches_central_differences() {
    let runtime = gpu_runtime();
    let mut rng = Rng::new(1);
    for op in UnaryOp::ALL {
        if !op.out_dtype(DType::Float32).is_float()
            || matches!(
                op,
                UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Round | UnaryOp::Sign
            )
        {
            continue;
        }
        // Inside every op's domain and away from its kinks.
        let (lo, hi) = if op == UnaryOp::Arccosh {
            (1.2, 2.0)
        } else {
            (0.2, 0.8)
        };
        let x = uniform(&mut rng, &[3, 4], lo, hi);
        let f = move |v: &[Array], d: Device| weighted(&ops::unary(op, &v[0], d).unwrap(), d);
        check(&runtime, op.name(), &f, &[x]);
    }
}

#[test]
fn every_binary_rule_matches_central_differences_with_broadcasting() {
    let runtime = gpu_runtime();
    let mut rng = Rng::new(2);
    for op in BinaryOp::ALL {
        if !op.out_dtype(DType::Float32).is_float()
            || matches!(op, BinaryOp::FloorDivide | BinaryOp::Remainder)
        {
            continue;
        }
        let a = uniform(&mut rng, &[3, 4], 0.5, 1.5);
        // b broadcasts along the rows; for maximum and minimum it is kept away from a.
        let b = match op {
            BinaryOp::Maximum | BinaryOp::Minimum => uniform(&mut rng, &[4], 2.0, 3.0),
            _ => uniform(&mut rng, &[4], 0.5, 1.5),
        };
        let f =
            move |v: &[Array], d: Device| weighted(&ops::binary(op, &v[0], &v[1], d).unwrap(), d);
        check(&runtime, op.name(), &f, &[a.clone(), b.clone()]);
        let f =
            move |v: &[Array], d: Device| weighted(&ops::binary(op, &v[1], &v[0], d).unwrap(), d);
        check(&runtime, &format!("{} swapped", op.name()), &f, &[a, b]);
    }
}

#[test]
fn structure_reductions_and_matmul_match_central_differences() {
    let runtime = gpu_runtime();
    let mut rng = Rng::new(3);
    let x = uniform(&mut rng, &[2, 3, 4], -1.0, 1.0);
    type Case = (&'static str, Box<Fun>);
    let cases: Vec<Case> = vec![
        (
            "reshape",
            Box::new(|v, d| weighted(&ops::reshape(&v[0], &[4, 6], d).unwrap(), d)),
        ),
        (
            "transpose",
            Box::new(|v, d| weighted(&ops::transpose(&v[0], Some(&[2, 0, 1]), d).unwrap(), d)),
        ),
        (
            "slice with a negative step",
            Box::new(|v, d| {
                weighted(
                    &ops::slice(&v[0], &[1, 2, 3], &[2, 0, 0], Some(&[1, -1, -2]), d).unwrap(),
                    d,
                )
            }),
        ),
        (
            "broadcastTo",
            Box::new(|v, d| weighted(&ops::broadcast_to(&v[0], &[5, 2, 3, 4], d).unwrap(), d)),
        ),
        (
            "sum over two axes",
            Box::new(|v, d| {
                weighted(
                    &ops::reduce(ReduceOp::Sum, &v[0], Some(&[0, 2]), false, d).unwrap(),
                    d,
                )
            }),
        ),
        (
            "mean",
            Box::new(|v, d| weighted(&ops::mean(&v[0], Some(&[1]), true, d).unwrap(), d)),
        ),
        (
            "max",
            Box::new(|v, d| {
                weighted(
                    &ops::reduce(ReduceOp::Max, &v[0], Some(&[1]), false, d).unwrap(),
                    d,
                )
            }),
        ),
        (
            "min",
            Box::new(|v, d| {
                weighted(
                    &ops::reduce(ReduceOp::Min, &v[0], None, false, d).unwrap(),
                    d,
                )
            }),
        ),
        (
            "softmax",
            Box::new(|v, d| weighted(&ops::softmax(&v[0], Some(&[-1]), d).unwrap(), d)),
        ),
        (
            "logsumexp",
            Box::new(|v, d| weighted(&ops::logsumexp(&v[0], Some(&[1, 2]), false, d).unwrap(), d)),
        ),
        (
            "concatenate",
            Box::new(|v, d| {
                let parts = [v[0].clone(), ops::unary(UnaryOp::Exp, &v[0], d).unwrap()];
                weighted(&ops::concatenate(&parts, 1, d).unwrap(), d)
            }),
        ),
        (
            "split, its parts used apart and one not at all (their cotangents joined)",
            Box::new(|v, d| {
                let parts = ops::split(&v[0], ops::SplitAt::Indices(&[1, 2, 3]), 2, d).unwrap();
                let e = ops::unary(UnaryOp::Exp, &parts[0], d).unwrap();
                let s = ops::unary(UnaryOp::Sin, &parts[3], d).unwrap();
                let both = ops::binary(BinaryOp::Multiply, &e, &s, d).unwrap();
                let twice = ops::binary(BinaryOp::Add, &parts[1], &parts[1], d).unwrap();
                let sum = ops::binary(BinaryOp::Add, &weighted(&both, d), &weighted(&twice, d), d);
                sum.unwrap()
            }),
        ),
        (
            "slices that overlap, and slices of different axes (their cotangents added)",
            Box::new(|v, d| {
                let slice = |start: [isize; 3], stop: [isize; 3]| {
                    ops::slice(&v[0], &start, &stop, None, d).unwrap()
                };
                let a = slice([0, 0, 0], [2, 3, 3]);
                let b = ops::unary(UnaryOp::Exp, &slice([0, 0, 1], [2, 3, 4]), d).unwrap();
                let c = slice([0, 1, 0], [2, 3, 4]);
                let ab = ops::binary(BinaryOp::Multiply, &a, &b, d).unwrap();
                ops::binary(BinaryOp::Add, &weighted(&ab, d), &weighted(&c, d), d).unwrap()
            }),
        ),
        (
            "where",
            Box::new(|v, d| {
                let zero = Array::from_f32(&[0.05], &[]).unwrap();
                let c = ops::binary(BinaryOp::Greater, &v[0], &zero, d).unwrap();
                let y = ops::unary(UnaryOp::Exp, &v[0], d).unwrap();
                weighted(
                    &ops::where_(&c, &y, &ops::unary(UnaryOp::Sin, &v[0], d).unwrap(), d).unwrap(),
                    d,
                )
            }),
        ),
    ];
    // For max, min and where, elements at least 0.1 apart and 0.05 from where's threshold: a
    // difference step must not change the winner or the branch.
    let spread: Vec<f32> = (0..24).map(|i| ((i * 7) % 24) as f32 * 0.1 - 1.2).collect();
    let distinct = Array::from_f32(&spread, &[2, 3, 4]).unwrap();
    for (what, f) in &cases {
        let x = if ["max", "min", "where"].contains(what) {
            &distinct
        } else {
            &x
        };
        check(&runtime, what, f.as_ref(), std::slice::from_ref(x));
    }
    // The norms with their weight and bias, the gather (repeated and negative indices, and
    // indices broadcast against x), and running sums each way.
    let (w, b) = (
        uniform(&mut rng, &[4], 0.5, 1.5),
        uniform(&mut rng, &[4], -0.5, 0.5),
    );
    let layer = |v: &[Array], d: Device| {
        weighted(
            &ops::fast::layer_norm(&v[0], Some(&v[1]), Some(&v[2]), 1e-5, d).unwrap(),
            d,
        )
    };
    check(&runtime, "layerNorm", &layer, &[x.clone(), w.clone(), b]);
    let rms = |v: &[Array], d: Device| {
        weighted(
            &ops::fast::rms_norm(&v[0], Some(&v[1]), 1e-5, d).unwrap(),
            d,
        )
    };
    check(&runtime, "rmsNorm", &rms, &[x.clone(), w]);
    let idx = Array::from_slice(&[0i32, -1, 2, 0, 3, 3], &[1, 6, 1]).unwrap();
    let gather = move |v: &[Array], d: Device| {
        weighted(&ops::take_along_axis(&v[0], &idx, Some(1), d).unwrap(), d)
    };
    check(&runtime, "takeAlongAxis", &gather, std::slice::from_ref(&x));
    let rows = Array::from_slice(&[2i32, 0, 2], &[3]).unwrap();
    let take =
        move |v: &[Array], d: Device| weighted(&ops::take(&v[0], &rows, Some(2), d).unwrap(), d);
    check(&runtime, "take", &take, std::slice::from_ref(&x));
    // Every running reduction each way, over values 0.1 apart (a zero among them).
    let scans = [
        ScanOp::Sum,
        ScanOp::Prod,
        ScanOp::Max,
        ScanOp::Min,
        ScanOp::LogAddExp,
    ];
    for op in scans {
        for (reverse, inclusive) in [(false, true), (true, true), (false, false), (true, false)] {
            let scan = move |v: &[Array], d: Device| {
                let y = ops::scan(op, &v[0], Some(1), reverse, inclusive, d).unwrap();
                // An exclusive scan's first output is the op's identity (±inf for max, min
                // and logaddexp): left out of the sum.
                let (from, to) = match (inclusive, reverse) {
                    (true, _) => (0, 3),
                    (false, false) => (1, 3),
                    (false, true) => (0, 2),
                };
                weighted(
                    &ops::slice(&y, &[0, from, 0], &[2, to, 4], None, d).unwrap(),
                    d,
                )
            };
            let what = format!("{} reverse {reverse} inclusive {inclusive}", op.name());
            check(&runtime, &what, &scan, std::slice::from_ref(&distinct));
        }
    }
    // Products (and a zero among the factors), sorts, a slice update and a convolution.
    let prod = |v: &[Array], d: Device| {
        weighted(
            &ops::reduce(ReduceOp::Prod, &v[0], Some(&[1, 2]), false, d).unwrap(),
            d,
        )
    };
    check(&runtime, "prod", &prod, std::slice::from_ref(&distinct));
    let zeroed = Array::from_f32(&[2.0, 0.0, 3.0, 0.5, 0.0, 0.0], &[2, 3]).unwrap();
    let (_, g) = value_and_grad(
        |v| {
            ops::reduce(ReduceOp::Prod, &v[0], Some(&[1]), false, Device::Cpu)
                .and_then(|y| ops::reduce(ReduceOp::Sum, &y, None, false, Device::Cpu))
        },
        &[zeroed],
    )
    .unwrap();
    assert_eq!(
        read(&runtime, &g[0]),
        [0.0, 6.0, 0.0, 0.0, 0.0, 0.0],
        "prod with zeros"
    );
    let sort = |v: &[Array], d: Device| weighted(&ops::sort(&v[0], Some(1), d).unwrap(), d);
    check(&runtime, "sort", &sort, std::slice::from_ref(&distinct));
    let topk = |v: &[Array], d: Device| weighted(&ops::topk(&v[0], 2, Some(-1), d).unwrap(), d);
    check(&runtime, "topk", &topk, std::slice::from_ref(&distinct));
    let update = uniform(&mut rng, &[2, 1, 2], -1.0, 1.0);
    let slice_update = |v: &[Array], d: Device| {
        let y =
            ops::slice_update(&v[0], &v[1], &[0, 1, 0], &[2, 2, 4], Some(&[1, 1, 2]), d).unwrap();
        weighted(&ops::unary(UnaryOp::Exp, &y, d).unwrap(), d)
    };
    check(&runtime, "sliceUpdate", &slice_update, &[x.clone(), update]);
    let image = uniform(&mut rng, &[2, 5, 6, 3], -1.0, 1.0);
    let kernel = uniform(&mut rng, &[4, 3, 3, 3], -0.5, 0.5);
    for (stride, padding, dilation) in [(1, 1, 1), (2, 1, 1), (1, 2, 2)] {
        let params = ConvParams {
            stride: vec![stride; 2],
            padding: vec![padding; 2],
            dilation: vec![dilation; 2],
            groups: 1,
        };
        let conv = move |v: &[Array], d: Device| {
            weighted(
                &ops::conv::conv("conv2d", &v[0], &v[1], &params, d).unwrap(),
                d,
            )
        };
        let what = format!("conv2d stride {stride} padding {padding} dilation {dilation}");
        check(&runtime, &what, &conv, &[image.clone(), kernel.clone()]);
    }
    // The transposed convolution of MLX's golden case with every parameter set.
    let signal = uniform(&mut rng, &[2, 4, 4], -1.0, 1.0);
    let taps = uniform(&mut rng, &[4, 3, 2], -0.5, 0.5);
    let transposed = |v: &[Array], d: Device| {
        let params = ConvParams {
            stride: vec![3],
            padding: vec![1],
            dilation: vec![2],
            groups: 2,
        };
        let y =
            ops::conv::conv_transpose("convTranspose1d", &v[0], &v[1], &params, &[2], d).unwrap();
        weighted(&y, d)
    };
    check(&runtime, "convTranspose1d", &transposed, &[signal, taps]);
    // A batched matmul with the weight broadcast across the batch, and a 1-D operand.
    let a = uniform(&mut rng, &[2, 3, 5], -1.0, 1.0);
    let w = uniform(&mut rng, &[5, 4], -1.0, 1.0);
    let f = |v: &[Array], d: Device| weighted(&ops::matmul(&v[0], &v[1], d).unwrap(), d);
    check(&runtime, "matmul", &f, &[a, w.clone()]);
    let u = uniform(&mut rng, &[5], -1.0, 1.0);
    check(&runtime, "vector @ matrix", &f, &[u, w]);
}

/// MLX's conventions where the derivative is not defined: `abs'(0) = 0`, `relu'(0) = 0`, a
/// tie of `maximum`/`minimum` goes to the second operand (so `clip` at a bound passes
/// none), and a tie of the `max` reduction shares the gradient equally.
#[test]
fn kinks_follow_mlx() {
    let runtime = gpu_runtime();
    let grad_of = |f: &dyn Fn(&[Array], Device) -> Array, xs: &[Array], device: Device| {
        let (_, grads) = value_and_grad(|v| Ok(f(v, device)), xs).unwrap();
        grads.iter().map(|g| read(&runtime, g)).collect::<Vec<_>>()
    };
    let sum = |y: &Array, d: Device| ops::reduce(ReduceOp::Sum, y, None, false, d).unwrap();
    let x = Array::from_f32(&[0.0, -2.0, 3.0], &[3]).unwrap();
    for device in [Device::Cpu, Device::Gpu] {
        let abs = |v: &[Array], d: Device| sum(&ops::unary(UnaryOp::Abs, &v[0], d).unwrap(), d);
        assert_eq!(
            grad_of(&abs, std::slice::from_ref(&x), device),
            [vec![0.0, -1.0, 1.0]]
        );
        let relu = |v: &[Array], d: Device| sum(&ops::unary(UnaryOp::Relu, &v[0], d).unwrap(), d);
        assert_eq!(
            grad_of(&relu, std::slice::from_ref(&x), device),
            [vec![0.0, 0.0, 1.0]]
        );
        let tie = [
            Array::from_f32(&[1.0], &[]).unwrap(),
            Array::from_f32(&[1.0], &[]).unwrap(),
        ];
        let max = |v: &[Array], d: Device| ops::binary(BinaryOp::Maximum, &v[0], &v[1], d).unwrap();
        assert_eq!(grad_of(&max, &tie, device), [vec![0.0], vec![1.0]]);
        let min = |v: &[Array], d: Device| ops::binary(BinaryOp::Minimum, &v[0], &v[1], d).unwrap();
        assert_eq!(grad_of(&min, &tie, device), [vec![0.0], vec![1.0]]);
        let lo = Array::from_f32(&[0.0], &[]).unwrap();
        let clip =
            move |v: &[Array], d: Device| sum(&ops::clip(&v[0], Some(&lo), None, d).unwrap(), d);
        assert_eq!(
            grad_of(&clip, std::slice::from_ref(&x), device),
            [vec![0.0, 0.0, 1.0]]
        );
        let ties = Array::from_f32(&[2.0, 5.0, 5.0, 1.0], &[4]).unwrap();
        let rmax =
            |v: &[Array], d: Device| ops::reduce(ReduceOp::Max, &v[0], None, false, d).unwrap();
        assert_eq!(grad_of(&rmax, &[ties], device), [vec![0.0, 0.5, 0.5, 0.0]]);
    }
}

/// The floor division has a zero derivative; the remainder passes `g` to `a` and
/// `-g * floor(a / b)` to `b`. Integer inputs and outputs carry no gradient, a primal the
/// output does not read gets zeros, and a float16 primal gets a float16 gradient.
#[test]
fn integers_unused_primals_and_half_precision() {
    let runtime = gpu_runtime();
    let a = Array::from_f32(&[7.5, -3.0], &[2]).unwrap();
    let b = Array::from_f32(&[2.0, 2.0], &[2]).unwrap();
    for device in [Device::Cpu, Device::Gpu] {
        let sum = |y: &Array| ops::reduce(ReduceOp::Sum, y, None, false, device).unwrap();
        let (_, g) = value_and_grad(
            |v| {
                Ok(sum(&ops::binary(
                    BinaryOp::Remainder,
                    &v[0],
                    &v[1],
                    device,
                )?))
            },
            &[a.clone(), b.clone()],
        )
        .unwrap();
        assert_eq!(read(&runtime, &g[0]), [1.0, 1.0]);
        assert_eq!(read(&runtime, &g[1]), [-3.0, 2.0]);
        let (_, g) = value_and_grad(
            |v| {
                let i = ops::astype(&v[0], DType::Int32, device);
                let back = ops::astype(&i, DType::Float32, device);
                Ok(sum(&ops::binary(BinaryOp::Multiply, &back, &v[0], device)?))
            },
            &[a.clone(), b.clone()],
        )
        .unwrap();
        // Through the int32 cast nothing flows: d/da (int(a) * a) = int(a).
        assert_eq!(read(&runtime, &g[0]), [7.0, -3.0]);
        assert_eq!(read(&runtime, &g[1]), [0.0, 0.0], "b is not read");
        let h = ops::astype(&a, DType::Float16, device);
        let (_, g) = value_and_grad(
            |v| Ok(sum(&ops::binary(BinaryOp::Multiply, &v[0], &v[0], device)?)),
            &[h],
        )
        .unwrap();
        assert_eq!(g[0].dtype(), DType::Float16);
        let g = ops::astype(&g[0], DType::Float32, device);
        assert_eq!(read(&runtime, &g), [15.0, -6.0]);
    }
}

/// `vjp` with a cotangent per output, a primal passed twice getting two gradients, clear
/// errors for a cotangent of the wrong shape or a non-scalar loss, and memory exact after.
#[test]
fn vjp_takes_cotangents_and_leaves_memory_exact() {
    use tandem::memory::{Scope, stats};
    let runtime = gpu_runtime();
    let active = || stats().active_bytes.get(Scope::All).current;
    let x = Array::from_f32(&[1.0, 2.0, 3.0], &[3]).unwrap();
    let mut before = 0;
    // The first round leaves x a copy on the GPU, which it keeps; the second must add nothing.
    for (round, device) in [
        (0, Device::Cpu),
        (0, Device::Gpu),
        (1, Device::Cpu),
        (1, Device::Gpu),
    ] {
        if round == 1 && device == Device::Cpu {
            pollster::block_on(runtime.synchronize()).unwrap();
            before = active();
        }
        let c = Array::from_f32(&[1.0, 0.0, 2.0], &[3]).unwrap();
        let (outs, grads) = vjp(
            |v| Ok(vec![ops::binary(BinaryOp::Multiply, &v[0], &v[1], device)?]),
            &[x.clone(), x.clone()],
            &[c],
        )
        .unwrap();
        assert_eq!(read(&runtime, &outs[0]), [1.0, 4.0, 9.0]);
        assert_eq!(read(&runtime, &grads[0]), [1.0, 0.0, 6.0]);
        assert_eq!(read(&runtime, &grads[1]), [1.0, 0.0, 6.0]);
        let wrong = Array::from_f32(&[1.0], &[1]).unwrap();
        let err = vjp(
            |v| Ok(vec![v[0].clone()]),
            std::slice::from_ref(&x),
            &[wrong],
        );
        assert!(format!("{:?}", err.unwrap_err()).contains("cotangent 0 has shape"));
        let err = value_and_grad(|v| Ok(v[0].clone()), std::slice::from_ref(&x));
        assert!(format!("{:?}", err.unwrap_err()).contains("must return one element"));
    }
    pollster::block_on(runtime.synchronize()).unwrap();
    assert_eq!(active(), before, "nothing is left behind");
}

/// Transforms compose: the gradient of a gradient, and `jvp` (the transpose of reverse mode)
/// with a tangent per primal, on both devices.
#[test]
fn second_derivatives_and_jvp() {
    let runtime = gpu_runtime();
    let xs = [0.3f32, -1.2, 2.0];
    let x = Array::from_f32(&xs, &[3]).unwrap();
    let y = Array::from_f32(&[0.5, 1.5, -2.0], &[3]).unwrap();
    for d in [Device::Cpu, Device::Gpu] {
        let sum = |v: &Array| ops::reduce(ReduceOp::Sum, v, None, false, d);
        let mul = |a: &Array, b: &Array| ops::binary(BinaryOp::Multiply, a, b, d);
        // f = sum(sin(x) * x); f' = cos(x) x + sin(x); f'' = 2 cos(x) - sin(x) x.
        let f = |v: &[Array]| sum(&mul(&ops::unary(UnaryOp::Sin, &v[0], d)?, &v[0])?);
        let df = |v: &[Array]| {
            let (_, g) = value_and_grad(f, v)?;
            sum(&g[0])
        };
        let (_, g2) = value_and_grad(df, std::slice::from_ref(&x)).unwrap();
        let want: Vec<f32> = xs.iter().map(|&v| 2.0 * v.cos() - v.sin() * v).collect();
        let got = read(&runtime, &g2[0]);
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() < 1e-4, "{d:?}: f'' {got:?}, want {want:?}");
        }
        // jvp of (sin(x), x * y) at tangents (t, s): (cos(x) t, t y + x s).
        let t = Array::from_f32(&[1.0, 2.0, 3.0], &[3]).unwrap();
        let s = Array::from_f32(&[-1.0, 0.5, 0.0], &[3]).unwrap();
        let two = |v: &[Array]| {
            Ok(vec![
                ops::unary(UnaryOp::Sin, &v[0], d)?,
                mul(&v[0], &v[1])?,
            ])
        };
        let (outs, tangents) = jvp(two, &[x.clone(), y.clone()], &[t, s]).unwrap();
        assert_eq!(outs.len(), 2);
        let got = read(&runtime, &tangents[0]);
        for (i, g) in got.iter().enumerate() {
            let w = xs[i].cos() * (i + 1) as f32;
            assert!((g - w).abs() < 1e-5, "{d:?}: jvp of sin {got:?}");
        }
        assert_eq!(
            read(&runtime, &tangents[1]),
            [0.5 - 0.3, 3.0 + 1.2 * -0.5, -6.0]
        );
    }
}

/// A small MLP learns a target with plain gradient descent through `value_and_grad` on both
/// devices: matmul, bias, tanh, a softmax cross-entropy (logsumexp and the gathered label)
/// all differentiate together, the loss falls, and memory is back where it was after.
#[test]
fn an_mlp_trains_by_gradient_descent() {
    use tandem::memory::{Scope, stats};
    let runtime = gpu_runtime();
    let mut rng = Rng::new(9);
    let (n, din, hidden, classes) = (32, 4, 16, 3);
    let x = uniform(&mut rng, &[n, din], -1.0, 1.0);
    let xs = read(&runtime, &x);
    // The label of a row is which of its first three features is largest.
    let labels: Vec<i32> = (0..n)
        .map(|r| {
            (0..3)
                .max_by(|&a, &b| xs[r * din + a].total_cmp(&xs[r * din + b]))
                .unwrap() as i32
        })
        .collect();
    let labels = Array::from_slice(&labels, &[n, 1]).unwrap();
    // The data's GPU copies (which it keeps) are made before memory is measured.
    let g = Device::Gpu;
    let touch = [
        ops::add(&x, &x, g).unwrap(),
        ops::add(&labels, &labels, g).unwrap(),
    ];
    pollster::block_on(runtime.evaluate(&touch)).unwrap();
    drop(touch);
    for d in [Device::Cpu, Device::Gpu] {
        pollster::block_on(runtime.synchronize()).unwrap();
        let before = stats().active_bytes.get(Scope::All).current;
        let mut params = vec![
            uniform(&mut rng, &[din, hidden], -0.5, 0.5),
            uniform(&mut rng, &[hidden], -0.1, 0.1),
            uniform(&mut rng, &[hidden, classes], -0.5, 0.5),
            uniform(&mut rng, &[classes], -0.1, 0.1),
        ];
        let loss_of = |p: &[Array]| -> tandem::Result<Array> {
            let h = ops::add(&ops::matmul(&x, &p[0], d)?, &p[1], d)?;
            let h = ops::unary(UnaryOp::Tanh, &h, d)?;
            let logits = ops::add(&ops::matmul(&h, &p[2], d)?, &p[3], d)?;
            let lse = ops::logsumexp(&logits, Some(&[-1]), true, d)?;
            let picked = ops::take_along_axis(&logits, &labels, Some(1), d)?;
            let nll = ops::binary(BinaryOp::Subtract, &lse, &picked, d)?;
            ops::mean(&nll, None, false, d)
        };
        let mut losses = Vec::new();
        for _ in 0..60 {
            let (loss, grads) = value_and_grad(loss_of, &params).unwrap();
            let rate = Array::from_f32(&[0.5], &[]).unwrap();
            params = params
                .iter()
                .zip(&grads)
                .map(|(p, g)| {
                    let step = ops::binary(BinaryOp::Multiply, g, &rate, d).unwrap();
                    ops::binary(BinaryOp::Subtract, p, &step, d).unwrap()
                })
                .collect();
            pollster::block_on(runtime.evaluate(&params)).unwrap();
            losses.push(read(&runtime, &loss)[0]);
        }
        let (first, last) = (losses[0], *losses.last().unwrap());
        assert!(
            last < 0.5 * first,
            "{d:?}: the loss went from {first} to {last}: {losses:?}"
        );
        drop(params);
        pollster::block_on(runtime.synchronize()).unwrap();
        let after = stats().active_bytes.get(Scope::All).current;
        assert_eq!(after, before, "{d:?}: every step's arrays are gone");
    }
}

/// `stop_gradient` passes values and stops gradients: `d/dx (x * stop(x)) = x`, and a
/// stopped branch contributes nothing to the second derivative either.
#[test]
fn stop_gradient_passes_values_but_no_gradient() {
    let runtime = gpu_runtime();
    let x = Array::from_f32(&[1.5, -2.0], &[2]).unwrap();
    for d in [Device::Cpu, Device::Gpu] {
        let sum = |v: &Array| ops::reduce(ReduceOp::Sum, v, None, false, d);
        let f = |v: &[Array]| {
            sum(&ops::binary(
                BinaryOp::Multiply,
                &v[0],
                &ops::stop_gradient(&v[0], d),
                d,
            )?)
        };
        let (value, g) = value_and_grad(f, std::slice::from_ref(&x)).unwrap();
        assert_eq!(read(&runtime, &value), [1.5 * 1.5 + 4.0]);
        assert_eq!(read(&runtime, &g[0]), [1.5, -2.0]);
        let stopped = |v: &[Array]| sum(&ops::stop_gradient(&v[0], d));
        let (_, g) = value_and_grad(stopped, std::slice::from_ref(&x)).unwrap();
        assert_eq!(read(&runtime, &g[0]), [0.0, 0.0]);
    }
}

/// A gradient step traced as `compile` traces it (a tape over stand-ins, fused) replays for
/// new parameters with the values of the plain step, on both devices: the backward ops are
/// ordinary nodes, recorded and fused with the forward ones.
#[test]
fn a_traced_gradient_step_replays_with_the_plain_values() {
    use tandem::array::next_serial;
    use tandem::transforms::compile::{Tape, stand_ins};
    let runtime = gpu_runtime();
    let mut rng = Rng::new(13);
    for d in [Device::Cpu, Device::Gpu] {
        let step = |w: &Array, x: &Array| -> Vec<Array> {
            let loss = |v: &[Array]| {
                let y = ops::unary(UnaryOp::Tanh, &ops::matmul(x, &v[0], d)?, d)?;
                ops::mean(&ops::binary(BinaryOp::Multiply, &y, &y, d)?, None, false, d)
            };
            let (value, grads) = value_and_grad(loss, std::slice::from_ref(w)).unwrap();
            let rate = Array::from_f32(&[0.1], &[]).unwrap();
            let moved = ops::binary(BinaryOp::Multiply, &grads[0], &rate, d).unwrap();
            vec![
                value,
                ops::binary(BinaryOp::Subtract, w, &moved, d).unwrap(),
            ]
        };
        let (w, x) = (
            uniform(&mut rng, &[4, 3], -1.0, 1.0),
            uniform(&mut rng, &[5, 4], -1.0, 1.0),
        );
        let traced_on = stand_ins(&[w.clone(), x.clone()]);
        let since = next_serial();
        let outputs = step(&traced_on[0], &traced_on[1]);
        let tape = Tape::record(&traced_on, &outputs, since).unwrap();
        drop(outputs);
        let (w2, x2) = (
            uniform(&mut rng, &[4, 3], -1.0, 1.0),
            uniform(&mut rng, &[5, 4], -1.0, 1.0),
        );
        let replayed = tape.replay(&[w2.clone(), x2.clone()]).unwrap();
        let plain = step(&w2, &x2);
        for (k, (r, p)) in replayed.iter().zip(&plain).enumerate() {
            let (r, p) = (read(&runtime, r), read(&runtime, p));
            let close = r
                .iter()
                .zip(&p)
                .all(|(a, b)| (a - b).abs() <= 1e-6 * b.abs().max(1.0));
            assert!(close, "{d:?}: output {k} replayed {r:?}, plain {p:?}");
        }
    }
}

/// A split's parts each give a cotangent that is a slice of zeros: the backward pass joins
/// them into one concatenation (zeros where a part went unused), never a zero-filled copy of
/// the whole per part and a sum.
#[test]
fn a_splits_cotangents_are_joined_into_one_concatenation() {
    use tandem::graph::primitive::Primitive;
    let runtime = gpu_runtime();
    for device in [Device::Cpu, Device::Gpu] {
        let x = Array::from_f32(&(0..24).map(|i| i as f32).collect::<Vec<_>>(), &[4, 6]).unwrap();
        let f = |v: &[Array]| {
            let parts = ops::split(&v[0], ops::SplitAt::Sections(3), 1, device)?;
            // The middle part is unused; the others weighted 2 and 3.
            let two = ops::binary(
                BinaryOp::Multiply,
                &parts[0],
                &Array::from_f32(&[2.0], &[])?,
                device,
            )?;
            let three = ops::binary(
                BinaryOp::Multiply,
                &parts[2],
                &Array::from_f32(&[3.0], &[])?,
                device,
            )?;
            let total = ops::binary(
                BinaryOp::Add,
                &ops::reduce(ReduceOp::Sum, &two, None, false, device)?,
                &ops::reduce(ReduceOp::Sum, &three, None, false, device)?,
                device,
            )?;
            Ok(vec![total])
        };
        let (_, grads) = vjp(f, &[x], &[Array::from_f32(&[1.0], &[]).unwrap()]).unwrap();
        assert_eq!(
            grads[0].primitive(),
            Some(Primitive::Concatenate(1)),
            "on {device:?}"
        );
        let want: Vec<f32> = (0..24)
            .map(|i| [2.0, 2.0, 0.0, 0.0, 3.0, 3.0][i % 6])
            .collect();
        assert_eq!(read(&runtime, &grads[0]), want, "on {device:?}");
    }
}

/// An embedding's gradient: `take` of 64 rows (many repeated) from a 4096 x 16 table. The
/// cotangent goes back by a scatter-add, so repeated rows sum, and the step holds a few arrays
/// of the table's size (the zeros, the sums, on the GPU the table's copy there), not a one-hot
/// of the indices against it (64 x 16 x 4096 floats, 16 MiB); its `jvp` is the gather again.
#[test]
fn a_gathers_gradient_sums_repeated_indices_without_a_one_hot() {
    use tandem::memory::{Scope, allocator, stats};
    let runtime = gpu_runtime();
    let (vocab, width, count) = (4096usize, 16usize, 64usize);
    let table = Array::from_f32(&vec![0.5; vocab * width], &[vocab, width]).unwrap();
    let picks: Vec<i32> = (0..count as i32)
        .map(|i| [3, -1, 3, 4095, 7, 3][i as usize % 6] + (i / 6) * 11)
        .collect();
    let indices = Array::from_slice(&picks, &[count]).unwrap();
    let weights: Vec<f32> = (0..count * width).map(|i| 1.0 + (i % 5) as f32).collect();
    let dy = Array::from_f32(&weights, &[count, width]).unwrap();
    // Where each pick lands: negative from the end, the rest clamped, as the gather reads.
    let row =
        |p: i32| (if p < 0 { p + vocab as i32 } else { p }).clamp(0, vocab as i32 - 1) as usize;
    let mut want = vec![0f32; vocab * width];
    for (k, &p) in picks.iter().enumerate() {
        for c in 0..width {
            want[row(p) * width + c] += weights[k * width + c];
        }
    }
    let gradient = |device: Device| {
        let f = |v: &[Array]| Ok(vec![ops::take(&v[0], &indices, Some(0), device)?]);
        let (_, mut grads) =
            vjp(f, std::slice::from_ref(&table), std::slice::from_ref(&dy)).unwrap();
        grads.remove(0)
    };
    // A first step leaves the arguments' copies on the GPU, which they keep.
    read(&runtime, &gradient(Device::Gpu));
    for device in [Device::Cpu, Device::Gpu] {
        pollster::block_on(runtime.synchronize()).unwrap();
        let before = stats().active_bytes.get(Scope::All).current;
        allocator::reset_peak_stats();
        let grads = gradient(device);
        let got = read(&runtime, &grads);
        let peak = stats().active_bytes.get(Scope::All).peak - before;
        assert_eq!(got, want, "on {device:?}");
        assert!(
            peak < 4 * (vocab * width * 4) as u64,
            "on {device:?}: a peak of {peak} B"
        );
        drop(grads);
        // Forward mode transposes the reverse one: through the scatter-add back to a gather.
        let tangent: Vec<f32> = (0..vocab * width).map(|i| (i % 13) as f32).collect();
        let tangent = Array::from_f32(&tangent, &[vocab, width]).unwrap();
        let f = |v: &[Array]| Ok(vec![ops::take(&v[0], &indices, Some(0), device)?]);
        let (_, jvps) = jvp(
            f,
            std::slice::from_ref(&table),
            std::slice::from_ref(&tangent),
        )
        .unwrap();
        let taken = ops::take(&tangent, &indices, Some(0), Device::Cpu).unwrap();
        assert_eq!(
            read(&runtime, &jvps[0]),
            read(&runtime, &taken),
            "jvp on {device:?}"
        );
        drop((jvps, taken, tangent));
        pollster::block_on(runtime.synchronize()).unwrap();
        assert_eq!(
            stats().active_bytes.get(Scope::All).current,
            before,
            "on {device:?}: nothing left behind"
        );
    }
}
