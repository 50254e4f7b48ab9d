//! `checkpoint` and `vmap` (`tandem::transforms`): each gives the plain function's values and
//! gradients on both devices; a checkpoint lowers the peak of a backward pass; a map is the
//! loop it stands for, composed with `grad` either way; memory is exact after each.

#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::rc::Rc;

use common::{Rng, gpu_runtime};
use tandem::graph::primitive::{BinaryOp, ReduceOp, UnaryOp};
use tandem::memory::{Scope, allocator, stats};
use tandem::transforms::grad::{Function, checkpoint, value_and_grad};
use tandem::transforms::vmap::{move_mapped_axis, vmap};
use tandem::{Array, Device, Runtime, ops};

fn read(runtime: &Runtime, a: &Array) -> Vec<f32> {
    pollster::block_on(runtime.read_f32(a)).unwrap()
}

fn active() -> u64 {
    stats().active_bytes.get(Scope::All).current
}

fn uniform(rng: &mut Rng, shape: &[usize], lo: f32, hi: f32) -> Array {
    let v: Vec<f32> = (0..shape.iter().product())
        .map(|_| rng.uniform(lo, hi))
        .collect();
    Array::from_f32(&v, shape).unwrap()
}

fn assert_close(what: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-4 * w.abs().max(1.0),
            "{what}[{i}]: {g} != {w}"
        );
    }
}

/// One residual MLP layer, whose intermediates are four times the width of its input:
/// `h + (tanh(h W1) * sigmoid(h W1)) W2`.
fn layer(h: &Array, w1: &Array, w2: &Array, d: Device) -> tandem::error::Result<Array> {
    let a = ops::matmul(h, w1, d)?;
    let t = ops::unary(UnaryOp::Tanh, &a, d)?;
    let s = ops::unary(UnaryOp::Sigmoid, &a, d)?;
    let c = ops::binary(BinaryOp::Multiply, &t, &s, d)?;
    ops::binary(BinaryOp::Add, &ops::matmul(&c, w2, d)?, h, d)
}

/// The mean square of a stack of layers over `args[0]` (their weights in pairs after it),
/// each checkpointed or not.
fn network(args: &[Array], checkpointed: bool, d: Device) -> tandem::error::Result<Array> {
    let mut h = args[0].clone();
    for w in args[1..].chunks(2) {
        h = if checkpointed {
            let one: Function =
                Rc::new(move |v: &[Array]| Ok(vec![layer(&v[0], &v[1], &v[2], d)?]));
            checkpoint(one, &[h, w[0].clone(), w[1].clone()])?.remove(0)
        } else {
            layer(&h, &w[0], &w[1], d)?
        };
    }
    let sq = ops::binary(BinaryOp::Multiply, &h, &h, d)?;
    ops::mean(&sq, None, false, d)
}

/// Evaluates the loss and every gradient at once, as a training step does; returns their
/// values and the step's peak active bytes above what was active before.
fn step(runtime: &Runtime, args: &[Array], checkpointed: bool, d: Device) -> (Vec<Vec<f32>>, u64) {
    pollster::block_on(runtime.synchronize()).unwrap();
    allocator::reset_peak_stats();
    let base = active();
    let (loss, grads) = value_and_grad(|v| network(v, checkpointed, d), args).unwrap();
    let all: Vec<Array> = std::iter::once(loss).chain(grads).collect();
    pollster::block_on(runtime.evaluate(&all)).unwrap();
    let peak = stats().active_bytes.get(Scope::All).peak - base;
    (all.iter().map(|a| read(runtime, a)).collect(), peak)
}

#[test]
fn checkpoint_gives_the_same_gradients_for_a_lower_peak() {
    let runtime = gpu_runtime();
    let mut rng = Rng::new(7);
    let (batch, width, layers) = (256, 32, 8);
    let mut args = vec![uniform(&mut rng, &[batch, width], -1.0, 1.0)];
    for _ in 0..layers {
        args.push(uniform(&mut rng, &[width, 4 * width], -0.2, 0.2));
        args.push(uniform(&mut rng, &[4 * width, width], -0.2, 0.2));
    }
    pollster::block_on(runtime.evaluate(&args)).unwrap();
    // A first step on each device leaves the arguments' copies there, which they keep.
    step(&runtime, &args, false, Device::Gpu);
    for d in [Device::Cpu, Device::Gpu] {
        let before = active();
        let (plain, plain_peak) = step(&runtime, &args, false, d);
        let (kept, kept_peak) = step(&runtime, &args, true, d);
        for (k, (got, want)) in kept.iter().zip(&plain).enumerate() {
            assert_close(&format!("{d:?} output {k}"), got, want);
        }
        println!("{d:?}: peak {plain_peak} B plain, {kept_peak} B checkpointed");
        // The CPU frees each buffer after its last use. The GPU frees a batch's buffers once
        // it is submitted, which it is after 64 dispatches or once it has allocated a quarter
        // of the GPU's live bytes (at least 1 MiB): close enough to each last use to show.
        let bound = if d == Device::Cpu { 0.5 } else { 0.6 };
        assert!(
            (kept_peak as f64) < bound * plain_peak as f64,
            "{d:?}: checkpointing should lower the peak: {kept_peak} B against {plain_peak} B"
        );
        pollster::block_on(runtime.synchronize()).unwrap();
        assert_eq!(active(), before, "{d:?}: nothing is left behind");
    }
}

#[test]
fn checkpoint_of_several_outputs_and_of_a_second_derivative() {
    let runtime = gpu_runtime();
    let x = Array::from_f32(&[0.5, -1.0, 2.0], &[3]).unwrap();
    for d in [Device::Cpu, Device::Gpu] {
        let two: Function = Rc::new(move |v: &[Array]| {
            let e = ops::unary(UnaryOp::Exp, &v[0], d)?;
            let s = ops::unary(UnaryOp::Sin, &v[0], d)?;
            Ok(vec![e, s])
        });
        // d/dx sum(exp(x) + 2 sin(x)) = exp(x) + 2 cos(x).
        let f = |v: &[Array]| {
            let outs = checkpoint(two.clone(), v)?;
            let twice = ops::binary(BinaryOp::Add, &outs[1], &outs[1], d)?;
            let sum = ops::binary(BinaryOp::Add, &outs[0], &twice, d)?;
            ops::reduce(ReduceOp::Sum, &sum, None, false, d)
        };
        let (_, grads) = value_and_grad(f, std::slice::from_ref(&x)).unwrap();
        let want: Vec<f32> = [0.5f32, -1.0, 2.0]
            .iter()
            .map(|v| v.exp() + 2.0 * v.cos())
            .collect();
        assert_close(
            &format!("{d:?} gradient"),
            &read(&runtime, &grads[0]),
            &want,
        );
        // The gradient of sum(checkpointed gradient) is the second derivative's sum.
        let outer = |v: &[Array]| {
            let (_, g) = value_and_grad(f, v)?;
            ops::reduce(ReduceOp::Sum, &g[0], None, false, d)
        };
        let (_, second) = value_and_grad(outer, std::slice::from_ref(&x)).unwrap();
        let want: Vec<f32> = [0.5f32, -1.0, 2.0]
            .iter()
            .map(|v| v.exp() - 2.0 * v.sin())
            .collect();
        assert_close(&format!("{d:?} second"), &read(&runtime, &second[0]), &want);
    }
}

/// `f(x, w) = tanh(x) @ w` per row, mapped over the rows of `x` (and, in a second run, the
/// columns of its transpose), against the whole-batch computation.
#[test]
fn vmap_is_the_loop_it_stands_for() {
    let runtime = gpu_runtime();
    let mut rng = Rng::new(3);
    let x = uniform(&mut rng, &[5, 4], -1.0, 1.0);
    let w = uniform(&mut rng, &[4, 3], -1.0, 1.0);
    // The first round leaves x and w copies on the GPU, which they keep; the second must
    // leave nothing.
    for (round, d) in [
        (0, Device::Cpu),
        (0, Device::Gpu),
        (1, Device::Cpu),
        (1, Device::Gpu),
    ] {
        pollster::block_on(runtime.synchronize()).unwrap();
        let before = active();
        let row = |v: &[Array]| {
            let t = ops::unary(UnaryOp::Tanh, &v[0], d)?;
            let t = ops::reshape(&t, &[1, 4], d)?;
            Ok(vec![ops::reshape(&ops::matmul(&t, &v[1], d)?, &[3], d)?, t])
        };
        let whole = ops::matmul(&ops::unary(UnaryOp::Tanh, &x, d).unwrap(), &w, d).unwrap();
        let want = read(&runtime, &whole);
        let mapped = vmap(row, &[x.clone(), w.clone()], &[Some(0), None]).unwrap();
        assert_eq!(mapped[0].shape(), [5, 3]);
        assert_eq!(mapped[1].shape(), [5, 1, 4]);
        assert_close(&format!("{d:?} rows"), &read(&runtime, &mapped[0]), &want);
        let xt = ops::transpose(&x, None, d).unwrap();
        let by_column = vmap(row, &[xt, w.clone()], &[Some(-1), None]).unwrap();
        let moved = move_mapped_axis(&by_column[0], 1).unwrap();
        assert_eq!(moved.shape(), [3, 5]);
        let want_t = read(&runtime, &ops::transpose(&whole, None, d).unwrap());
        assert_close(&format!("{d:?} columns"), &read(&runtime, &moved), &want_t);
        drop((whole, mapped, by_column, moved));
        pollster::block_on(runtime.synchronize()).unwrap();
        if round == 1 {
            assert_eq!(active(), before, "{d:?}: nothing is left behind");
        }
    }
}

#[test]
fn vmap_errors_and_an_empty_axis() {
    let runtime = gpu_runtime();
    let x = Array::from_f32(&[1.0; 6], &[2, 3]).unwrap();
    let y = Array::from_f32(&[1.0; 3], &[3]).unwrap();
    let id = |v: &[Array]| Ok(v.to_vec());
    let err = |r: tandem::error::Result<Vec<Array>>| format!("{:?}", r.unwrap_err());
    let e = err(vmap(id, &[x.clone(), y.clone()], &[Some(0), Some(0)]));
    assert!(e.contains("different sizes, 2 and 3"), "{e}");
    assert!(err(vmap(id, std::slice::from_ref(&x), &[None])).contains("no input is mapped"));
    assert!(err(vmap(id, std::slice::from_ref(&x), &[Some(2)])).contains("axis 2 is out of range"));
    assert!(err(vmap(id, std::slice::from_ref(&x), &[])).contains("1 inputs but 0 in_axes"));
    let empty = Array::from_f32(&[], &[0, 3]).unwrap();
    let sums = vmap(
        |v| {
            Ok(vec![ops::reduce(
                ReduceOp::Sum,
                &v[0],
                None,
                false,
                Device::Cpu,
            )?])
        },
        &[empty],
        &[Some(0)],
    )
    .unwrap();
    assert_eq!(sums[0].shape(), [0]);
    assert!(read(&runtime, &sums[0]).is_empty());
}

/// `grad(vmap(f))` and `vmap(grad(f))`: the per-row gradient of `sum(sin(x) * x)` is
/// `cos(x) * x + sin(x)`, either way round.
#[test]
fn vmap_and_grad_compose_both_ways() {
    let runtime = gpu_runtime();
    let values = [0.1f32, -0.7, 1.3, 2.0, -2.5, 0.0];
    let x = Array::from_f32(&values, &[2, 3]).unwrap();
    let want: Vec<f32> = values.iter().map(|v| v.cos() * v + v.sin()).collect();
    for d in [Device::Cpu, Device::Gpu] {
        let f = move |v: &[Array]| {
            let s = ops::unary(UnaryOp::Sin, &v[0], d)?;
            let p = ops::binary(BinaryOp::Multiply, &s, &v[0], d)?;
            ops::reduce(ReduceOp::Sum, &p, None, false, d)
        };
        let per_row = |v: &[Array]| Ok(value_and_grad(f, v)?.1);
        let mapped = vmap(per_row, std::slice::from_ref(&x), &[Some(0)]).unwrap();
        assert_close(
            &format!("{d:?} vmap(grad)"),
            &read(&runtime, &mapped[0]),
            &want,
        );
        let total = |v: &[Array]| {
            let rows = vmap(|r| Ok(vec![f(r)?]), v, &[Some(0)])?;
            ops::reduce(ReduceOp::Sum, &rows[0], None, false, d)
        };
        let (_, g) = value_and_grad(total, std::slice::from_ref(&x)).unwrap();
        assert_close(&format!("{d:?} grad(vmap)"), &read(&runtime, &g[0]), &want);
    }
}
