//! Fusion of elementwise chains (`tandem::transforms::fuse`): fused programs give the unfused ops' bits on
//! both devices, never fold a node something else holds, keep memory exact, and handle chains
//! far longer than any stack.

#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{Rng, gpu_runtime, random_words, words};
use tandem::gpu::matmul::MatmulKernel;
use tandem::graph::primitive::{BinaryOp, Primitive, UnaryOp};
use tandem::memory::allocator::stats;
use tandem::memory::stats::Scope;
use tandem::transforms::fuse::{When, fuse};
use tandem::{Array, DType, Device, ops};

fn active() -> u64 {
    stats().active_bytes.get(Scope::All).current
}

/// A program of most elementwise kinds: unary ops, binary ops with a number operand, a
/// comparison and `where`, a cast to int32 and back, `clip`, and a transposed input. Every
/// node it makes is also returned, so that a caller can hold them all.
fn program(x: &Array, t: &Array, device: Device) -> (Array, Vec<Array>) {
    let mut made = Vec::new();
    let mut keep = |a: Array| {
        made.push(a.clone());
        a
    };
    let half = Array::from_f32(&[0.5], &[]).unwrap();
    let e = keep(ops::unary(UnaryOp::Exp, x, device).unwrap());
    let s = keep(ops::binary(BinaryOp::Multiply, &e, &half, device).unwrap());
    let g = keep(ops::unary(UnaryOp::Gelu, &s, device).unwrap());
    let tt = keep(ops::transpose(t, None, device).unwrap());
    let a = keep(ops::add(&g, &tt, device).unwrap());
    let big = keep(ops::binary(BinaryOp::Greater, &a, &half, device).unwrap());
    let l = keep(ops::unary(UnaryOp::Log1p, &a, device).unwrap());
    let w = keep(ops::where_(&big, &l, &a, device).unwrap());
    let i = keep(ops::astype(&w, DType::Int32, device));
    let ten = Array::from_slice(&[10i32], &[]).unwrap();
    let j = keep(ops::binary(BinaryOp::Multiply, &i, &ten, device).unwrap());
    let f = keep(ops::astype(&j, DType::Float32, device));
    let lo = Array::from_f32(&[-3.0], &[]).unwrap();
    let c = keep(ops::clip(&f, Some(&lo), None, device).unwrap());
    let out = ops::unary(UnaryOp::Tanh, &c, device).unwrap();
    (out, made)
}

fn inputs(seed: u64) -> (Array, Array) {
    let x = Array::from_words(
        random_words(DType::Float32, 3000, seed),
        &[1000, 3],
        DType::Float32,
    );
    let t = Array::from_words(
        random_words(DType::Float32, 3000, seed + 1),
        &[3, 1000],
        DType::Float32,
    );
    (x.unwrap(), t.unwrap())
}

#[test]
fn a_fused_program_gives_the_unfused_bits_on_both_devices() {
    let runtime = gpu_runtime();
    for device in [Device::Cpu, Device::Gpu] {
        let (x, t) = inputs(7);
        let (held_out, held) = program(&x, &t, device);
        assert_eq!(
            fuse(std::slice::from_ref(&held_out), When::Always),
            0,
            "held nodes never fold"
        );
        let unfused = words(&runtime, &held_out);
        drop(held);
        let (out, made) = program(&x, &t, device);
        drop(made);
        assert_eq!(
            fuse(std::slice::from_ref(&out), When::Always),
            1,
            "{device:?}"
        );
        assert!(matches!(out.primitive(), Some(Primitive::Fused(_))));
        assert_eq!(words(&runtime, &out), unfused, "{device:?}");
    }
}

#[test]
fn a_held_intermediate_cuts_the_chain_and_keeps_its_value() {
    let runtime = gpu_runtime();
    let x = Array::from_f32(&[0.25, -1.0, 3.0, 0.0], &[4]).unwrap();
    let a = ops::unary(UnaryOp::Exp, &x, Device::Gpu).unwrap();
    let b = ops::unary(UnaryOp::Neg, &a, Device::Gpu).unwrap();
    let c = ops::unary(UnaryOp::Sigmoid, &b, Device::Gpu).unwrap();
    let d = ops::unary(UnaryOp::Tanh, &c, Device::Gpu).unwrap();
    drop((a, c));
    // b is held: exp and neg fuse into b, sigmoid and tanh into d.
    assert_eq!(fuse(std::slice::from_ref(&d), When::Always), 2);
    let (got_b, got_d) = (words(&runtime, &b), words(&runtime, &d));
    let b_alone = ops::unary(
        UnaryOp::Neg,
        &ops::unary(UnaryOp::Exp, &x, Device::Cpu).unwrap(),
        Device::Cpu,
    )
    .unwrap();
    let f32s = |w: Vec<u32>| -> Vec<f32> { w.into_iter().map(f32::from_bits).collect() };
    let want_b = f32s(words(&runtime, &b_alone));
    let got_b = f32s(got_b);
    for (g, w) in got_b.iter().zip(&want_b) {
        assert!((g - w).abs() <= 2e-6 * w.abs(), "{g} vs {w}");
    }
    assert_eq!(f32s(got_d).len(), 4);
}

#[test]
fn a_stream_change_cuts_the_chain() {
    let x = Array::from_f32(&[1.0; 8], &[8]).unwrap();
    let a = ops::unary(UnaryOp::Exp, &x, Device::Cpu).unwrap();
    let b = ops::unary(UnaryOp::Neg, &a, Device::Cpu).unwrap();
    let c = ops::unary(UnaryOp::Exp, &b, Device::Gpu).unwrap();
    let d = ops::unary(UnaryOp::Neg, &c, Device::Gpu).unwrap();
    drop((a, b, c));
    assert_eq!(fuse(std::slice::from_ref(&d), When::Always), 2);
    let inputs = d.inputs();
    assert_eq!(inputs.len(), 1);
    assert_eq!(inputs[0].device(), Device::Cpu);
    assert!(matches!(inputs[0].primitive(), Some(Primitive::Fused(_))));
}

#[test]
fn evaluate_fuses_a_gpu_program_from_its_second_time() {
    let runtime = gpu_runtime();
    let x = Array::from_f32(&[0.5; 16], &[16]).unwrap();
    let chain = || {
        let mut y = x.clone();
        for _ in 0..3 {
            y = ops::unary(UnaryOp::Sin, &y, Device::Gpu).unwrap();
        }
        y
    };
    let (first, second) = (chain(), chain());
    pollster::block_on(runtime.evaluate(std::slice::from_ref(&first))).unwrap();
    assert_eq!(first.primitive(), Some(Primitive::Unary(UnaryOp::Sin)));
    pollster::block_on(runtime.evaluate(std::slice::from_ref(&second))).unwrap();
    assert!(matches!(second.primitive(), Some(Primitive::Fused(_))));
    assert_eq!(words(&runtime, &first), words(&runtime, &second));
}

#[test]
fn memory_is_exact_after_fused_chains_on_both_devices() {
    let runtime = gpu_runtime();
    pollster::block_on(runtime.synchronize()).unwrap();
    let before = active();
    for round in 0..3 {
        for device in [Device::Cpu, Device::Gpu] {
            let (x, t) = inputs(round);
            let (out, made) = program(&x, &t, device);
            drop(made);
            fuse(std::slice::from_ref(&out), When::Always);
            assert_eq!(words(&runtime, &out).len(), 3000);
        }
    }
    pollster::block_on(runtime.synchronize()).unwrap();
    assert_eq!(active(), before);
}

#[test]
fn ten_thousand_ops_fuse_evaluate_and_drop_without_recursion() {
    let runtime = gpu_runtime();
    let mut rng = Rng::new(3);
    for device in [Device::Cpu, Device::Gpu] {
        let x = Array::from_f32(&[0.5; 64], &[64]).unwrap();
        let one = Array::from_f32(&[1.0], &[]).unwrap();
        let mut y = x.clone();
        let mut expected = 0.5f32;
        for _ in 0..10_000 {
            if rng.next_u32().is_multiple_of(2) {
                y = ops::add(&y, &one, device).unwrap();
                expected += 1.0;
            } else {
                y = ops::binary(BinaryOp::Subtract, &y, &one, device).unwrap();
                expected -= 1.0;
            }
        }
        let got = pollster::block_on(runtime.read_f32(&y)).unwrap();
        assert_eq!(got, vec![expected; 64], "{device:?}");
        // A lazy chain as long, dropped without being evaluated.
        let mut z = x.clone();
        for _ in 0..10_000 {
            z = ops::unary(UnaryOp::Neg, &z, device).unwrap();
        }
        drop(z);
    }
}

/// `relu(x @ w + b)`'s elementwise tail: the bias is a row repeated along the region, so the
/// add and the activation fuse into one node on both devices (on the GPU only for rows of
/// whole vec4s); a lazy bias stays the region's input, a view of a bias is read through its
/// strides, and the values are the unfused ones with memory back where it was.
#[test]
fn a_bias_row_and_its_activation_fuse_into_one_node() {
    let runtime = gpu_runtime();
    let before = active();
    let mut rng = Rng::new(11);
    // (region shape, bias shape, whether the GPU fuses it)
    let cases: [(&[usize], &[usize], bool); 4] = [
        (&[2, 5, 8], &[8], true),
        (&[2, 5, 8], &[1, 5, 8], true),
        (&[6, 3], &[3], false),
        (&[3, 4, 2], &[4, 2], true),
    ];
    for (shape, bias_shape, gpu_fuses) in cases {
        for device in [Device::Cpu, Device::Gpu] {
            let x = rng.floats(shape);
            let b = rng.floats(bias_shape);
            let two = Array::from_f32(&[2.0], &[]).unwrap();
            let tail = |fused: bool| {
                // The bias is made lazily, twice the stored one.
                let bias = ops::binary(BinaryOp::Multiply, &b, &two, device).unwrap();
                let sum = ops::add(&x, &bias, device).unwrap();
                let out = ops::unary(UnaryOp::Relu, &sum, device).unwrap();
                drop(sum);
                let made = if fused {
                    fuse(std::slice::from_ref(&out), When::Always)
                } else {
                    0
                };
                (out, made)
            };
            let (plain, _) = tail(false);
            let want = words(&runtime, &plain);
            let (out, made) = tail(true);
            let expect_fused = device == Device::Cpu || gpu_fuses;
            let what = format!("{shape:?} + {bias_shape:?} on {device:?}");
            assert_eq!(made, usize::from(expect_fused), "{what}");
            if expect_fused {
                assert!(
                    matches!(out.primitive(), Some(Primitive::Fused(_))),
                    "{what}"
                );
                let inputs = out.inputs();
                assert_eq!(inputs.len(), 2, "{what}: x and the lazy bias");
                assert!(inputs.iter().any(|i| i.shape() == bias_shape), "{what}");
            }
            assert_eq!(words(&runtime, &out), want, "{what}");
        }
    }
    // A bias read through a view: every other element of a longer row.
    for device in [Device::Cpu, Device::Gpu] {
        let x = rng.floats(&[3, 8]);
        let long = rng.floats(&[16]);
        let every_other = ops::slice(&long, &[0], &[16], Some(&[2]), device).unwrap();
        let unfused = {
            let s = ops::add(&x, &every_other, device).unwrap();
            words(&runtime, &ops::unary(UnaryOp::Relu, &s, device).unwrap())
        };
        let s = ops::add(&x, &every_other, device).unwrap();
        let out = ops::unary(UnaryOp::Relu, &s, device).unwrap();
        drop(s);
        assert_eq!(fuse(std::slice::from_ref(&out), When::Always), 1);
        assert_eq!(words(&runtime, &out), unfused, "strided bias on {device:?}");
    }
    pollster::block_on(runtime.synchronize()).unwrap();
    assert_eq!(active(), before);
}

/// `relu(x @ w + b)`: the matmul becomes the epilogue's input 0 (`MatmulThen`), on both
/// devices, batched or not, with k = 0; a product something else holds, or one the region
/// broadcasts, stays a matmul. The values are the unfused ones and memory comes back.
#[test]
fn a_matmul_takes_its_bias_and_activation_as_an_epilogue() {
    let runtime = gpu_runtime();
    let before = active();
    let mut rng = Rng::new(23);
    // (x, w, bias): 2-D with a packed tile edge, batched with w broadcast, k = 0, one row.
    let cases: [(&[usize], &[usize], &[usize]); 4] = [
        (&[37, 20], &[20, 12], &[12]),
        (&[3, 9, 600], &[600, 8], &[8]),
        (&[5, 0], &[0, 4], &[4]),
        (&[1, 16], &[16, 8], &[8]),
    ];
    for (xs, ws, bs) in cases {
        for device in [Device::Cpu, Device::Gpu] {
            let (x, w, b) = (rng.floats(xs), rng.floats(ws), rng.floats(bs));
            let tail = |hold: bool| {
                let p = ops::matmul(&x, &w, device).unwrap();
                let s = ops::add(&p, &b, device).unwrap();
                let out = ops::unary(UnaryOp::Relu, &s, device).unwrap();
                drop(s);
                let held = hold.then(|| p.clone());
                drop(p);
                (out, held)
            };
            let what = format!("{xs:?} @ {ws:?} + {bs:?} on {device:?}");
            let (plain, _) = tail(false);
            let want = words(&runtime, &plain);
            let (out, _) = tail(false);
            assert_eq!(fuse(std::slice::from_ref(&out), When::Always), 1, "{what}");
            assert!(
                matches!(out.primitive(), Some(Primitive::MatmulThen(_))),
                "{what}"
            );
            assert_eq!(out.inputs().len(), 3, "{what}: x, w and the bias");
            assert_eq!(words(&runtime, &out), want, "{what}");
            let (out, held) = tail(true);
            fuse(std::slice::from_ref(&out), When::Always);
            assert!(
                matches!(out.primitive(), Some(Primitive::Fused(_))),
                "{what}: held"
            );
            assert_eq!(words(&runtime, &out), want, "{what}: held");
            drop(held);
        }
    }
    // Through a reshape, as a convolution's product is read: [1, 12, 8] as [2, 2, 3, 8]. With
    // k = 5 the GPU runs its scalar kernel, then the program over the product.
    for device in [Device::Cpu, Device::Gpu] {
        let (x, w, b) = (
            rng.floats(&[1, 12, 5]),
            rng.floats(&[5, 8]),
            rng.floats(&[8]),
        );
        let tail = || {
            let p = ops::matmul(&x, &w, device).unwrap();
            let r = ops::reshape(&p, &[2, 2, 3, 8], device).unwrap();
            let s = ops::add(&r, &b, device).unwrap();
            ops::unary(UnaryOp::Relu, &s, device).unwrap()
        };
        let want = words(&runtime, &tail());
        let out = tail();
        assert_eq!(fuse(std::slice::from_ref(&out), When::Always), 1);
        assert!(
            matches!(out.primitive(), Some(Primitive::MatmulThen(_))),
            "{device:?}"
        );
        assert_eq!(out.shape(), &[2, 2, 3, 8]);
        assert_eq!(
            words(&runtime, &out),
            want,
            "reshaped product on {device:?}"
        );
    }
    // The product read after another input (a mask, as attention's scores are): the
    // program's input 0 is not its first step.
    // With k = 8 the GPU's vec4 kernel runs the program in its store, reading a bool mask, a
    // residual and a number.
    for device in [Device::Cpu, Device::Gpu] {
        let (x, w) = (rng.floats(&[6, 8]), rng.floats(&[8, 4]));
        let residual = rng.floats(&[6, 4]);
        let keep = ops::binary(
            BinaryOp::Greater,
            &rng.floats(&[6, 4]),
            &Array::from_f32(&[0.0], &[]).unwrap(),
            Device::Cpu,
        )
        .unwrap();
        let tail = || {
            let p = ops::matmul(&x, &w, device).unwrap();
            let floor = Array::from_f32(&[-9.0], &[]).unwrap();
            let masked = ops::where_(&keep, &p, &floor, device).unwrap();
            ops::add(&residual, &masked, device).unwrap()
        };
        let want = words(&runtime, &tail());
        let out = tail();
        assert_eq!(fuse(std::slice::from_ref(&out), When::Always), 1);
        assert!(
            matches!(out.primitive(), Some(Primitive::MatmulThen(_))),
            "{device:?}"
        );
        assert_eq!(words(&runtime, &out), want, "masked product on {device:?}");
    }
    // A [1, 4] product broadcast over a [6, 4] region is the region's input, not its epilogue.
    let (x, w, y) = (
        rng.floats(&[1, 3]),
        rng.floats(&[3, 4]),
        rng.floats(&[6, 4]),
    );
    let p = ops::matmul(&x, &w, Device::Cpu).unwrap();
    let s = ops::add(&y, &p, Device::Cpu).unwrap();
    let out = ops::unary(UnaryOp::Exp, &s, Device::Cpu).unwrap();
    drop((p, s));
    fuse(std::slice::from_ref(&out), When::Always);
    assert!(matches!(out.primitive(), Some(Primitive::Fused(_))));
    assert!(
        out.inputs()
            .iter()
            .any(|i| i.primitive() == Some(Primitive::Matmul))
    );
    drop((out, x, w, y));
    pollster::block_on(runtime.synchronize()).unwrap();
    assert_eq!(active(), before);
}

/// On both devices the casts that widen a packed dtype's inputs and round its results fold
/// into the program: a float16 chain (with bfloat16, int8 and uint8 operands, a float16
/// number, a transposed input and an odd length) is one node reading packed leaves and
/// writing packed words of each packed dtype, with the unfused ops' bits.
#[test]
fn packed_chains_fuse_with_the_unfused_bits_on_both_devices() {
    let runtime = gpu_runtime();
    let n = 1001;
    for d in [Device::Cpu, Device::Gpu] {
        let make = |dtype: DType, seed| {
            let wide = Array::from_words(
                random_words(DType::Float32, 3 * n, seed),
                &[3, n],
                DType::Float32,
            );
            ops::astype(&wide.unwrap(), dtype, d)
        };
        let (x, b, t) = (
            make(DType::Float16, 1),
            make(DType::BFloat16, 2),
            make(DType::Float16, 3),
        );
        let i = ops::astype(&make(DType::Float32, 4), DType::Int8, d);
        let u = ops::astype(&make(DType::Float32, 5), DType::Uint8, d);
        pollster::block_on(runtime.evaluate(&[
            x.clone(),
            b.clone(),
            t.clone(),
            i.clone(),
            u.clone(),
        ]))
        .unwrap();
        // A float16 number: on the GPU a word of its widened value, in the fused kernel.
        let half = Array::from_words(vec![0x3800], &[], DType::Float16).unwrap();
        let chain = |held: &mut Vec<Array>, to: DType| {
            let mut keep = |a: Array| {
                held.push(a.clone());
                a
            };
            let e = keep(ops::unary(UnaryOp::Tanh, &x, d).unwrap());
            let s = keep(ops::add(&e, &b, d).unwrap());
            let tt = ops::reshape(&ops::transpose(&t, None, d).unwrap(), &[3, n as isize], d);
            let tt = keep(tt.unwrap());
            let m = keep(ops::binary(BinaryOp::Multiply, &s, &tt, d).unwrap());
            let h = keep(ops::binary(BinaryOp::Multiply, &m, &half, d).unwrap());
            let j = keep(ops::binary(BinaryOp::Add, &h, &i, d).unwrap());
            let k = keep(ops::binary(BinaryOp::Subtract, &j, &u, d).unwrap());
            ops::astype(&k, to, d)
        };
        for to in [DType::Float16, DType::BFloat16, DType::Int8, DType::Uint8] {
            let what = format!("to {to:?} on {d:?}");
            let mut held = Vec::new();
            let unfused_out = chain(&mut held, to);
            let unfused = words(&runtime, &unfused_out);
            drop(held);
            let before = active();
            let mut made = Vec::new();
            let out = chain(&mut made, to);
            drop(made);
            assert_eq!(fuse(std::slice::from_ref(&out), When::Always), 1, "{what}");
            assert!(
                matches!(out.primitive(), Some(Primitive::Fused(_))),
                "{what}"
            );
            assert_eq!(out.dtype(), to);
            assert_eq!(words(&runtime, &out), unfused, "{what}");
            drop(out);
            pollster::block_on(runtime.synchronize()).unwrap();
            assert_eq!(active(), before, "{what}");
        }
    }
}

/// On the GPU a float16 or bfloat16 matmul reads its packed operands and its epilogue rounds
/// the product before the program, as the unfused ops do: the same bits, fused or not, in
/// the `vec4` kernel's store and over a product the scalar kernel made.
#[test]
fn a_packed_matmul_takes_its_epilogue_on_the_gpu_with_the_unfused_bits() {
    let runtime = gpu_runtime();
    let mut rng = Rng::new(29);
    let d = Device::Gpu;
    // The vec4 kernel's store, then k = 5 (the scalar kernel and the program over its product).
    let cases: [(&[usize], &[usize], &[usize]); 3] = [
        (&[37, 20], &[20, 12], &[12]),
        (&[2, 9, 64], &[64, 8], &[8]),
        (&[7, 5], &[5, 8], &[8]),
    ];
    let gpu = runtime.gpu().unwrap();
    let chosen = gpu.choices.matmul.get();
    let kernels = [MatmulKernel::REGISTERS_8X8, MatmulKernel::WorkgroupTiled];
    for (kernel, dtype) in kernels
        .into_iter()
        .flat_map(|k| [(k, DType::Float16), (k, DType::BFloat16)])
    {
        gpu.choices.matmul.set(kernel);
        for (xs, ws, bs) in cases {
            let what = format!("{xs:?} @ {ws:?} + {bs:?} in {dtype:?}, {kernel:?}");
            let [x, w, b] = [xs, ws, bs].map(|s| ops::astype(&rng.floats(s), dtype, d));
            pollster::block_on(runtime.evaluate(&[x.clone(), w.clone(), b.clone()])).unwrap();
            let before = active();
            let tail = || {
                let p = ops::matmul(&x, &w, d).unwrap();
                assert_eq!(p.dtype(), dtype, "{what}: the GPU matmul stores {dtype:?}");
                let s = ops::add(&p, &b, d).unwrap();
                ops::unary(UnaryOp::Gelu, &s, d).unwrap()
            };
            let want = words(&runtime, &tail());
            let out = tail();
            assert_eq!(fuse(std::slice::from_ref(&out), When::Always), 1, "{what}");
            assert!(
                matches!(out.primitive(), Some(Primitive::MatmulThen(_))),
                "{what}"
            );
            assert_eq!(words(&runtime, &out), want, "{what}");
            drop(out);
            pollster::block_on(runtime.synchronize()).unwrap();
            assert_eq!(active(), before, "{what}");
        }
    }
    gpu.choices.matmul.set(chosen);
}

/// A matmul's epilogue over many one-element inputs: fusion counts each as a parameter word,
/// not a buffer, so the GPU must pass them so, even once they are on the GPU. Before, the
/// epilogue bound them as buffers, and a program of the product, one other array and five
/// numbers needed nine bindings of the seven a kernel has: the backward pass of a transformer
/// block panicked on the GPU.
#[test]
fn a_matmul_epilogue_takes_its_numbers_as_words() {
    let runtime = gpu_runtime();
    let a = Array::from_f32(
        &(0..48).map(|i| i as f32 * 0.1).collect::<Vec<_>>(),
        &[6, 8],
    )
    .unwrap();
    let b = Array::from_f32(
        &(0..32).map(|i| 1.0 - i as f32 * 0.05).collect::<Vec<_>>(),
        &[8, 4],
    )
    .unwrap();
    let c = Array::from_f32(&[0.5; 24], &[6, 4]).unwrap();
    let numbers: Vec<Array> = (1..=5)
        .map(|k| Array::from_f32(&[k as f32 * 0.25], &[]).unwrap())
        .collect();
    let chain = |device: Device| {
        let mut y = ops::matmul(&a, &b, device).unwrap();
        for (k, s) in numbers.iter().enumerate() {
            let op = if k % 2 == 0 {
                BinaryOp::Multiply
            } else {
                BinaryOp::Add
            };
            y = ops::binary(op, &y, s, device).unwrap();
        }
        ops::binary(BinaryOp::Add, &y, &c, device).unwrap()
    };
    let want = pollster::block_on(runtime.read_f32(&chain(Device::Cpu))).unwrap();
    // Uploaded first, as an earlier kernel of the same pass would.
    for s in &numbers {
        let on_gpu = ops::unary(UnaryOp::Exp, s, Device::Gpu).unwrap();
        pollster::block_on(runtime.evaluate(&[on_gpu])).unwrap();
    }
    // GPU programs fuse from their second evaluation.
    for _ in 0..3 {
        let got = pollster::block_on(runtime.read_f32(&chain(Device::Gpu))).unwrap();
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-5 * w.abs().max(1.0), "{g} != {w}");
        }
    }
}
