//! Random compositions of smooth ops, differentiated by tandem's reverse mode on both devices
//! and checked against central differences of the same program interpreted in float64 (a
//! property test): every rule composes with every other through the chain rule, shared
//! inputs and broadcast constants.

#![cfg(not(target_arch = "wasm32"))]

mod common;

use proptest::prelude::*;
use tandem::graph::primitive::{BinaryOp, ReduceOp, UnaryOp};
use tandem::transforms::grad::value_and_grad;
use tandem::{Array, Device, ops};

/// An operand of a binary step: one of the two inputs, or a constant.
#[derive(Debug, Clone, Copy)]
enum Operand {
    X,
    Y,
    Const(f64),
}

#[derive(Debug, Clone, Copy)]
enum Step {
    Unary(UnaryOp),
    Binary(BinaryOp, Operand),
}

const UNARY: [UnaryOp; 6] = [
    UnaryOp::Tanh,
    UnaryOp::Sin,
    UnaryOp::Cos,
    UnaryOp::Sigmoid,
    UnaryOp::Square,
    UnaryOp::Neg,
];
const BINARY: [BinaryOp; 3] = [BinaryOp::Add, BinaryOp::Subtract, BinaryOp::Multiply];
const N: usize = 4;
const WEIGHTS: [f64; N] = [0.5, 0.75, 1.0, 1.25];

fn step() -> impl Strategy<Value = Step> {
    let operand = prop_oneof![
        Just(Operand::X),
        Just(Operand::Y),
        (-1.0f64..1.0).prop_map(|c| Operand::Const((c * 8.0).round() / 8.0)),
    ];
    prop_oneof![
        (0..UNARY.len()).prop_map(|i| Step::Unary(UNARY[i])),
        ((0..BINARY.len()), operand).prop_map(|(i, o)| Step::Binary(BINARY[i], o)),
    ]
}

/// The program in float64: the loss `sum(v * w)` at `x` and `y`.
fn loss64(program: &[Step], x: &[f64], y: &[f64]) -> f64 {
    (0..N)
        .map(|i| {
            let mut v = x[i];
            for s in program {
                v = match *s {
                    Step::Unary(op) => unary64(op, v),
                    Step::Binary(op, o) => {
                        let b = match o {
                            Operand::X => x[i],
                            Operand::Y => y[i],
                            Operand::Const(c) => c,
                        };
                        match op {
                            BinaryOp::Add => v + b,
                            BinaryOp::Subtract => v - b,
                            _ => v * b,
                        }
                    }
                };
            }
            v * WEIGHTS[i]
        })
        .sum()
}

fn unary64(op: UnaryOp, v: f64) -> f64 {
    match op {
        UnaryOp::Tanh => v.tanh(),
        UnaryOp::Sin => v.sin(),
        UnaryOp::Cos => v.cos(),
        UnaryOp::Sigmoid => 1.0 / (1.0 + (-v).exp()),
        UnaryOp::Square => v * v,
        _ => -v,
    }
}

/// The program in tandem on `device`.
fn loss(program: &[Step], v: &[Array], device: Device) -> tandem::error::Result<Array> {
    let mut y = ops::astype(&v[0], v[0].dtype(), device);
    for s in program {
        y = match *s {
            Step::Unary(op) => ops::unary(op, &y, device)?,
            Step::Binary(op, o) => {
                let b = match o {
                    Operand::X => v[0].clone(),
                    Operand::Y => v[1].clone(),
                    Operand::Const(c) => Array::from_f32(&[c as f32], &[])?,
                };
                ops::binary(op, &y, &b, device)?
            }
        };
    }
    let w: Vec<f32> = WEIGHTS.iter().map(|&w| w as f32).collect();
    let weighted = ops::binary(BinaryOp::Multiply, &y, &Array::from_f32(&w, &[N])?, device)?;
    ops::reduce(ReduceOp::Sum, &weighted, None, false, device)
}

#[test]
fn random_compositions_match_float64_central_differences() {
    let runtime = common::gpu_runtime();
    let inputs = prop::collection::vec(-1.0f64..1.0, 2 * N);
    let strategy = (prop::collection::vec(step(), 1..8), inputs);
    common::runner(96)
        .run(&strategy, |(program, values)| {
            let (x, y) = values.split_at(N);
            let h = 1e-6;
            let slope = |k: usize, i: usize| {
                let mut up = values.clone();
                let mut down = values.clone();
                up[k * N + i] += h;
                down[k * N + i] -= h;
                let (ux, uy) = up.split_at(N);
                let (dx, dy) = down.split_at(N);
                (loss64(&program, ux, uy) - loss64(&program, dx, dy)) / (2.0 * h)
            };
            let as32 = |v: &[f64]| v.iter().map(|&a| a as f32).collect::<Vec<_>>();
            // The float32 inputs, widened back: the float64 program starts where tandem does.
            let (x, y): (Vec<f64>, Vec<f64>) = (
                as32(x).iter().map(|&a| a as f64).collect(),
                as32(y).iter().map(|&a| a as f64).collect(),
            );
            let want = loss64(&program, &x, &y);
            let primals = [
                Array::from_f32(&as32(&x), &[N]).unwrap(),
                Array::from_f32(&as32(&y), &[N]).unwrap(),
            ];
            for device in [Device::Cpu, Device::Gpu] {
                let (value, grads) =
                    value_and_grad(|v| loss(&program, v, device), &primals).unwrap();
                let got = pollster::block_on(runtime.read_f32(&value)).unwrap()[0] as f64;
                prop_assert!((got - want).abs() <= 1e-4 * want.abs().max(1.0), "value {got} != {want}");
                for (k, g) in grads.iter().enumerate() {
                    let g = pollster::block_on(runtime.read_f32(g)).unwrap();
                    for (i, &gi) in g.iter().enumerate() {
                        let s = slope(k, i);
                        prop_assert!(
                            (gi as f64 - s).abs() <= 1e-3 * s.abs().max(1.0),
                            "{program:?} on {device:?}: d/d{}[{i}] is {gi}, float64 differences give {s}",
                            ["x", "y"][k]
                        );
                    }
                }
            }
            Ok(())
        })
        .unwrap();
}
