//! Empty arrays (size 0) are valid everywhere, as in MLX: every op takes them on both devices
//! and gives MLX's shape and values (an empty sum is 0, an empty product 1, an empty mean NaN,
//! an empty logsumexp -inf); only the reductions MLX rejects on an empty axis (max, min, argmax,
//! argmin) are errors, and those name the op.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{gpu_runtime, words};
use tandem::graph::primitive::{BinaryOp, ReduceOp, UnaryOp};
use tandem::{Array, DType, Device, Runtime, ops};

const SHAPES: [&[usize]; 3] = [&[0], &[2, 0], &[0, 3]];

fn empty(shape: &[usize], dtype: DType) -> Array {
    Array::from_words(Vec::new(), shape, dtype).unwrap()
}

/// Evaluates `a` and checks its shape and that it holds `shape`'s (zero) elements.
fn check_empty(runtime: &Runtime, what: &str, a: &Array, shape: &[usize]) {
    assert_eq!(a.shape(), shape, "{what}");
    assert!(words(runtime, a).is_empty(), "{what}");
}

fn floats(runtime: &Runtime, a: &Array) -> Vec<f32> {
    pollster::block_on(runtime.read_f32(a)).unwrap()
}

#[test]
fn elementwise_ops_keep_the_empty_shape() {
    let runtime = gpu_runtime();
    for device in [Device::Cpu, Device::Gpu] {
        for shape in SHAPES {
            let x = empty(shape, DType::Float32);
            for op in UnaryOp::ALL {
                let y = ops::unary(op, &x, device).unwrap();
                check_empty(&runtime, &format!("{op:?} {shape:?} {device:?}"), &y, shape);
            }
            for op in BinaryOp::ALL {
                let y = ops::binary(op, &x, &x, device).unwrap();
                check_empty(&runtime, &format!("{op:?} {shape:?} {device:?}"), &y, shape);
                // Against a scalar, and broadcast against a row of the non-empty axis.
                let one = Array::from_f32(&[1.0], &[]).unwrap();
                let y = ops::binary(op, &x, &one, device).unwrap();
                check_empty(&runtime, &format!("{op:?} scalar {device:?}"), &y, shape);
            }
            let cond = empty(shape, DType::Bool);
            let y = ops::where_(&cond, &x, &x, device).unwrap();
            check_empty(&runtime, &format!("where {device:?}"), &y, shape);
            let y = ops::astype(&x, DType::Int32, device);
            check_empty(&runtime, &format!("astype {device:?}"), &y, shape);
        }
    }
}

#[test]
fn reductions_of_nothing_give_mlx_identities() {
    let runtime = gpu_runtime();
    for device in [Device::Cpu, Device::Gpu] {
        let x = empty(&[2, 0], DType::Float32);
        let over = |op, axes: Option<&[isize]>| ops::reduce(op, &x, axes, false, device);
        let sum = over(ReduceOp::Sum, Some(&[1])).unwrap();
        assert_eq!(floats(&runtime, &sum), vec![0.0, 0.0], "{device:?}");
        let prod = over(ReduceOp::Prod, None).unwrap();
        assert_eq!(floats(&runtime, &prod), vec![1.0], "{device:?}");
        // Over the non-empty axis the result is itself empty.
        let sum0 = over(ReduceOp::Sum, Some(&[0])).unwrap();
        check_empty(&runtime, "sum axis 0", &sum0, &[0]);
        for op in [
            ReduceOp::Max,
            ReduceOp::Min,
            ReduceOp::ArgMax,
            ReduceOp::ArgMin,
        ] {
            let err = over(op, Some(&[1])).expect_err("MLX rejects an empty reduction");
            assert!(err.message().contains(op.name()), "{}", err.message());
            let fine = over(op, Some(&[0])).unwrap();
            check_empty(&runtime, &format!("{op:?} axis 0"), &fine, &[0]);
        }
        let mean = ops::mean(&x, Some(&[1]), false, device).unwrap();
        assert!(
            floats(&runtime, &mean).iter().all(|v| v.is_nan()),
            "{device:?}"
        );
        let lse = ops::logsumexp(&x, Some(&[1]), false, device).unwrap();
        assert_eq!(
            floats(&runtime, &lse),
            vec![f32::NEG_INFINITY; 2],
            "{device:?}"
        );
        let soft = ops::softmax(&x, Some(&[1]), device).unwrap();
        check_empty(&runtime, "softmax", &soft, &[2, 0]);
    }
}

#[test]
fn matmul_and_shape_ops_take_empty_operands() {
    let runtime = gpu_runtime();
    for device in [Device::Cpu, Device::Gpu] {
        // (2 x 0) @ (0 x 3) is a 2 x 3 of zeros: an empty sum per element.
        let a = empty(&[2, 0], DType::Float32);
        let b = empty(&[0, 3], DType::Float32);
        let c = ops::matmul(&a, &b, device).unwrap();
        assert_eq!(c.shape(), &[2, 3]);
        assert_eq!(floats(&runtime, &c), vec![0.0; 6], "{device:?}");
        let c = ops::matmul(&b, &empty(&[3, 0], DType::Float32), device).unwrap();
        check_empty(&runtime, "matmul 0x3 @ 3x0", &c, &[0, 0]);
        let t = ops::transpose(&a, None, device).unwrap();
        check_empty(&runtime, "transpose", &t, &[0, 2]);
        let r = ops::reshape(&a, &[0, 5], device).unwrap();
        check_empty(&runtime, "reshape", &r, &[0, 5]);
        assert!(
            ops::reshape(&a, &[-1, 0], device).is_err(),
            "-1 is ambiguous next to 0"
        );
        let s = ops::slice(&b, &[0, 1], &[0, 3], None, device).unwrap();
        check_empty(&runtime, "slice", &s, &[0, 2]);
        let full = Array::from_f32(&[1.0, 2.0, 3.0], &[1, 3]).unwrap();
        let joined = ops::concatenate(&[b.clone(), full], 0, device).unwrap();
        assert_eq!(floats(&runtime, &joined), vec![1.0, 2.0, 3.0], "{device:?}");
        let stacked = ops::stack(&[b.clone(), b.clone()], 0, device).unwrap();
        check_empty(&runtime, "stack", &stacked, &[2, 0, 3]);
        let parts = ops::split(&b, ops::SplitAt::Sections(3), 1, device).unwrap();
        for part in &parts {
            check_empty(&runtime, "split", part, &[0, 1]);
        }
        let wide = ops::broadcast_to(&b, &[4, 0, 3], device).unwrap();
        check_empty(&runtime, "broadcastTo", &wide, &[4, 0, 3]);
    }
}

#[test]
fn creation_ops_make_empty_arrays() {
    let runtime = gpu_runtime();
    for device in [Device::Cpu, Device::Gpu] {
        let z = ops::zeros(&[0, 4], DType::Int32, device).unwrap();
        check_empty(&runtime, "zeros", &z, &[0, 4]);
        let r = ops::arange(3.0, 3.0, 1.0, DType::Float32, device).unwrap();
        check_empty(&runtime, "arange", &r, &[0]);
        let r = ops::arange(3.0, 0.0, 1.0, DType::Float32, device).unwrap();
        check_empty(&runtime, "arange backwards", &r, &[0]);
        let l = ops::linspace(0.0, 1.0, 0, DType::Float32, device).unwrap();
        check_empty(&runtime, "linspace", &l, &[0]);
        let e = ops::eye(0, DType::Float32, device).unwrap();
        check_empty(&runtime, "eye", &e, &[0, 0]);
        let u = ops::random::uniform(&[0, 2], [1, 2], 0.0, 1.0, device).unwrap();
        check_empty(&runtime, "uniform", &u, &[0, 2]);
    }
}

/// A convolution over zero channels sums nothing: zeros of the output's shape, with or without
/// dilation, on both devices (the random programs found the CPU's im2col dividing by zero).
#[test]
fn a_convolution_of_zero_channels_is_zeros() {
    let runtime = gpu_runtime();
    for device in [Device::Cpu, Device::Gpu] {
        for dilation in [1, 2] {
            let x = empty(&[1, 5, 5, 0], DType::Float32);
            let w = empty(&[2, 3, 3, 0], DType::Float32);
            let params = ops::conv::ConvParams {
                stride: vec![1, 1],
                padding: vec![1, 1],
                dilation: vec![dilation, dilation],
                groups: 1,
            };
            let y = ops::conv::conv("conv2d", &x, &w, &params, device).unwrap();
            let side = 5 + 2 - 2 * dilation;
            assert_eq!(y.shape(), &[1, side, side, 2]);
            let what = format!("{device:?} dilation {dilation}");
            assert_eq!(floats(&runtime, &y), vec![0.0; side * side * 2], "{what}");
        }
    }
}
