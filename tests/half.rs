//! The packed dtypes (`float16`, `bfloat16`, `int8`, `uint8`): stored 2 or 1 bytes an element
//! on both devices, converted with one rounding, computed in their compute dtypes, and
//! counted at their size in every memory figure.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{gpu_runtime, random_words, same_on_both, words};
use tandem::dtype::packed;
use tandem::gpu::matmul::MatmulKernel;
use tandem::graph::primitive::{BinaryOp, ReduceOp, UnaryOp};
use tandem::{Array, DType, Device, ops};

const PACKED: [DType; 4] = [DType::Float16, DType::BFloat16, DType::Int8, DType::Uint8];

/// f32 bits that exercise rounding: ties, subnormals of every target, overflow, NaN payloads.
fn hard_f32_bits() -> Vec<u32> {
    let mut bits = vec![
        0x3f80_1000, // 1 + 2^-11: a float16 tie, to even (down)
        0x3f80_3000, // 1 + 3 * 2^-11: a float16 tie, to even (up)
        0x3f80_8000, // a bfloat16 tie, to even (down)
        0x3f81_8000, // a bfloat16 tie, to even (up)
        0x3380_0000, // 2^-24: the least float16 subnormal
        0x3300_0000, // 2^-25: a tie between 0 and it, to even (0)
        0x3300_0001, // just above: rounds up
        0x477f_f000, // 65520: rounds to float16 infinity
        0x477f_efff, // just below: 65504
        0x7fc0_0001,
        0xff80_0001, // a signalling NaN, negative
        0x7f80_0000,
        0x8000_0000,
        0x0000_0001, // the least float32 subnormal
        0x7f7f_ffff,
    ];
    bits.extend(random_words(DType::Float32, 2000, 7));
    let mut state = 12345u32;
    bits.extend((0..2000).map(|_| {
        state = state.wrapping_mul(1664525).wrapping_add(1013904223);
        state
    }));
    bits
}

#[test]
fn float32_rounds_to_the_halves_with_the_same_bits_on_both_devices() {
    let runtime = gpu_runtime();
    let bits = hard_f32_bits();
    let x = Array::from_words(bits.clone(), &[bits.len()], DType::Float32).unwrap();
    for dtype in [DType::Float16, DType::BFloat16] {
        let expected = packed::narrow_all(&bits, dtype);
        for device in [Device::Cpu, Device::Gpu] {
            let y = ops::astype(&x, dtype, device);
            assert_eq!(words(&runtime, &y), expected, "{dtype:?} on {device:?}");
            // Widening is exact: every half comes back as itself.
            let back = ops::astype(&ops::astype(&y, DType::Float32, device), dtype, device);
            assert_eq!(
                words(&runtime, &back),
                expected,
                "{dtype:?} round trip on {device:?}"
            );
        }
    }
}

#[test]
fn every_pair_of_dtypes_converts_alike_on_both_devices() {
    let runtime = gpu_runtime();
    for (k, from) in DType::ALL.into_iter().enumerate() {
        // An odd length leaves a last word half or three-quarters used.
        let n = 1001;
        let x = Array::from_words(random_words(from, n, k as u64), &[n], from).unwrap();
        for to in DType::ALL {
            same_on_both(&runtime, &format!("{from:?} to {to:?}"), |d| {
                Ok(ops::astype(&x, to, d))
            });
        }
    }
}

#[test]
fn views_of_packed_arrays_read_the_right_elements() {
    let runtime = gpu_runtime();
    for dtype in PACKED {
        let x = Array::from_words(random_words(dtype, 5 * 7, 3), &[5, 7], dtype).unwrap();
        let wide = |a: &Array, d| ops::astype(a, dtype.compute(), d);
        // A transpose, a slice from an odd element with a step, and a broadcast.
        same_on_both(&runtime, &format!("{dtype:?} transpose"), |d| {
            let t = ops::transpose(&x, None, d)?;
            Ok(wide(&ops::astype(&t, dtype, d), d))
        });
        same_on_both(&runtime, &format!("{dtype:?} slice"), |d| {
            let s = ops::slice(&x, &[1, 1], &[5, 7], Some(&[2, 3]), d)?;
            Ok(wide(&ops::reshape(&s, &[-1], d)?, d))
        });
        let t = ops::transpose(&x, None, Device::Cpu).unwrap();
        let expected: Vec<u32> = (0..35)
            .map(|i| packed::element(&words(&runtime, &x), dtype, (i % 5) * 7 + i / 5))
            .collect();
        let got = words(&runtime, &ops::astype(&t, dtype.compute(), Device::Gpu));
        assert_eq!(got, expected, "{dtype:?} transpose against the host");
    }
}

#[test]
fn arithmetic_rounds_once_to_the_result_dtype() {
    let runtime = gpu_runtime();
    let a = Array::from_f32(&[1.0, 2.5, 1e-3, 70000.0], &[4]).unwrap();
    let b = Array::from_f32(&[2.0, -0.25, 3.0, 1.0], &[4]).unwrap();
    for device in [Device::Cpu, Device::Gpu] {
        let (ha, hb) = (
            ops::astype(&a, DType::Float16, device),
            ops::astype(&b, DType::Float16, device),
        );
        let sum = ops::binary(BinaryOp::Add, &ha, &hb, device).unwrap();
        assert_eq!(sum.dtype(), DType::Float16);
        let got = packed::unpack(&words(&runtime, &sum), DType::Float16, 4);
        // 1e-3 is 0.0010004 in float16, over half of 3's spacing (2^-9): the sum rounds up.
        let expected: Vec<f32> = vec![3.0, 2.25, 3.0019531, f32::INFINITY];
        assert_eq!(
            got,
            expected.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        // int8 wraps like C.
        let i = ops::astype(
            &Array::from_slice(&[100i32, -100], &[2]).unwrap(),
            DType::Int8,
            device,
        );
        let twice = ops::binary(BinaryOp::Add, &i, &i, device).unwrap();
        assert_eq!(twice.dtype(), DType::Int8);
        assert_eq!(
            packed::unpack(&words(&runtime, &twice), DType::Int8, 2),
            [(-56i32) as u32, 56]
        );
        let total = ops::reduce(ReduceOp::Sum, &i, None, false, device).unwrap();
        assert_eq!(total.dtype(), DType::Int32);
        assert_eq!(words(&runtime, &total), [0]);
    }
}

#[test]
fn packed_arrays_count_their_own_bytes() {
    let runtime = gpu_runtime();
    use tandem::memory::Scope;
    let active = || tandem::memory::stats().active_bytes.get(Scope::All).current;
    let x = Array::from_f32(&vec![1.0; 1 << 16], &[1 << 16]).unwrap();
    // x gets its GPU copy first, so that only the results' bytes are counted below.
    let warm = ops::astype(&x, DType::Float16, Device::Gpu);
    pollster::block_on(runtime.evaluate(&[warm])).unwrap();
    for dtype in PACKED {
        for device in [Device::Cpu, Device::Gpu] {
            let before = active();
            let y = ops::astype(&x, dtype, device);
            pollster::block_on(runtime.evaluate(std::slice::from_ref(&y))).unwrap();
            assert_eq!(
                active() - before,
                (dtype.size() << 16) as u64,
                "{dtype:?} {device:?}"
            );
            assert_eq!(y.nbytes(), dtype.size() << 16);
            drop(y);
            pollster::block_on(runtime.synchronize()).unwrap();
            assert_eq!(active(), before, "{dtype:?} {device:?} freed");
        }
    }
}

/// MLX converts the operands of an elementwise op to their promoted dtype first: an int32 of
/// 257 next to bfloat16 becomes 256 before the op (MLX 0.32.4 gives each value below).
#[test]
fn operands_round_to_the_promoted_half_dtype_first() {
    let runtime = gpu_runtime();
    let half = |v: f32, device| {
        let x = Array::from_f32(&[v], &[1]).unwrap();
        ops::astype(&x, DType::BFloat16, device)
    };
    let int = Array::from_slice(&[257i32], &[1]).unwrap();
    for device in [Device::Cpu, Device::Gpu] {
        let sum = ops::binary(BinaryOp::Add, &half(0.5, device), &int, device).unwrap();
        let wide = packed::unpack(&words(&runtime, &sum), DType::BFloat16, 1);
        assert_eq!(f32::from_bits(wide[0]), 256.0, "{device:?}");
        let less = ops::binary(BinaryOp::Less, &half(256.0, device), &int, device).unwrap();
        assert_eq!(words(&runtime, &less), [0], "{device:?}");
        let cond = Array::from_bool(&[true], &[1]).unwrap();
        let pick = ops::where_(&cond, &int, &half(1.0, device), device).unwrap();
        assert_eq!(pick.dtype(), DType::BFloat16);
        let wide = packed::unpack(&words(&runtime, &pick), DType::BFloat16, 1);
        assert_eq!(f32::from_bits(wide[0]), 256.0, "{device:?}");
    }
}

/// The CPU matmul widens a float16 B (a weight) panel by panel as it packs it: a product
/// never holds a float32 copy of the whole weight, so its peak stays below that copy's size.
#[test]
fn a_float16_weight_is_never_widened_whole() {
    use tandem::memory::{Scope, allocator, stats};
    let runtime = gpu_runtime();
    let mut rng = common::Rng::new(5);
    let (m, k, n) = (64, 256, 1024);
    for device in [Device::Cpu, Device::Gpu] {
        let x = ops::astype(&rng.floats(&[m, k]), DType::Float16, device);
        let w = ops::astype(&rng.floats(&[k, n]), DType::Float16, device);
        pollster::block_on(runtime.evaluate(&[x.clone(), w.clone()])).unwrap();
        let base = stats().active_bytes.get(Scope::All).current;
        allocator::reset_peak_stats();
        let y = ops::matmul(&x, &w, device).unwrap();
        assert_eq!(y.dtype(), DType::Float16);
        let got = packed::unpack(&words(&runtime, &y), DType::Float16, m * n);
        let peak = stats().active_bytes.get(Scope::All).peak - base;
        assert!(
            peak < (k * n * 4) as u64,
            "{device:?}: peak {peak} bytes above the inputs"
        );
        // The same product with the weight widened by hand, on the GPU: the same values.
        let wide = ops::astype(&w, DType::Float32, Device::Gpu);
        let reference = ops::matmul(
            &ops::astype(&x, DType::Float32, Device::Gpu),
            &wide,
            Device::Gpu,
        );
        let rounded = ops::astype(&reference.unwrap(), DType::Float16, Device::Gpu);
        let want = packed::unpack(&words(&runtime, &rounded), DType::Float16, m * n);
        let close = got.iter().zip(&want).all(|(&g, &e)| {
            let (g, e) = (f32::from_bits(g), f32::from_bits(e));
            (g - e).abs() <= 2e-3 * e.abs() + 1e-3
        });
        assert!(
            close,
            "the {device:?}'s float16 product differs from the GPU's"
        );
    }
}

/// The GPU's matmul kernels read float16 and bfloat16 operands in place and widen them
/// exactly: every kernel (the `vec4` one storing packed words, the scalar one and a strided
/// operand) gives the bits of the same product over operands widened by hand, rounded once.
/// Special values (subnormals, infinities, NaN) among the operands widen exactly too.
#[test]
fn the_gpu_matmul_reads_packed_operands_exactly() {
    let runtime = gpu_runtime();
    let mut rng = common::Rng::new(8);
    let d = Device::Gpu;
    // (batch, m, k, n): vec4-aligned, odd n, odd k, a single row, a batch, k = 0.
    let shapes = [
        (1, 9, 16, 12),
        (1, 5, 8, 7),
        (1, 6, 5, 8),
        (1, 1, 3, 1),
        (3, 4, 12, 8),
        (1, 2, 0, 4),
    ];
    let specials = [0x0001u32, 0x03ff, 0x8001, 0x7c00, 0xfc00, 0x7e00, 0x0400];
    let gpu = runtime.gpu().unwrap();
    let chosen = gpu.choices.matmul.get();
    let cases = MatmulKernel::CANDIDATES.into_iter().flat_map(|kernel| {
        [DType::Float16, DType::BFloat16]
            .into_iter()
            .flat_map(move |dtype| shapes.map(|shape| (kernel, dtype, shape)))
    });
    for (kernel, dtype, (batch, m, k, n)) in cases {
        gpu.choices.matmul.set(kernel);
        {
            let what = format!("{batch}x{m}x{k} @ {k}x{n} in {dtype:?}, {kernel:?}");
            let x = ops::astype(&rng.floats(&[batch, m, k]), dtype, d);
            let mut w_bits: Vec<u32> = (0..k * n).map(|_| rng.next_u32() & 0xffff).collect();
            for (slot, &s) in w_bits.iter_mut().zip(&specials) {
                *slot = s;
            }
            // Keep most weights finite: a random float16 or bfloat16 pattern with a small exponent.
            for v in w_bits.iter_mut().skip(specials.len()) {
                *v = (*v & 0x83ff)
                    | if dtype == DType::Float16 {
                        0x3800
                    } else {
                        0x3f00
                    };
            }
            let w = Array::from_words(packed::pack(w_bits, dtype), &[k, n], dtype).unwrap();
            let got = ops::matmul(&x, &w, d).unwrap();
            assert_eq!(got.dtype(), dtype);
            let wide = |a: &Array| ops::astype(a, DType::Float32, d);
            let product = ops::matmul(&wide(&x), &wide(&w), d).unwrap();
            let want = ops::astype(&product, dtype, d);
            assert_eq!(words(&runtime, &got), words(&runtime, &want), "{what}");
            // A transposed (strided) operand: copied row-major as packed words, not widened.
            let base = ops::astype(&rng.floats(&[batch, k, m]), dtype, d);
            let xt = ops::transpose(&base, Some(&[0, 2, 1]), d).unwrap();
            let got = ops::matmul(&xt, &w, d).unwrap();
            let product = ops::matmul(&wide(&xt), &wide(&w), d).unwrap();
            let want = ops::astype(&product, dtype, d);
            assert_eq!(
                words(&runtime, &got),
                words(&runtime, &want),
                "{what}: transposed"
            );
        }
    }
    gpu.choices.matmul.set(chosen);
}

/// An identity times a float16 weight of subnormals, normals and the largest finite value
/// gives the weight's own bits in every GPU kernel: each element widens exactly (a subnormal
/// is not flushed) and the product rounds back to it.
#[test]
fn an_identity_times_a_float16_weight_gives_its_bits_on_the_gpu() {
    let runtime = gpu_runtime();
    let d = Device::Gpu;
    let (k, n) = (8, 12);
    let bits: Vec<u32> = (0..k * n)
        .map(|i| [0x0001, 0x03ff, 0x8001, 0x0400, 0x7bff, 0x3c00 + i as u32][i % 6])
        .collect();
    let w = Array::from_words(
        packed::pack(bits.clone(), DType::Float16),
        &[k, n],
        DType::Float16,
    );
    let w = w.unwrap();
    let eye: Vec<f32> = (0..k * k)
        .map(|i| f32::from(u8::from(i % (k + 1) == 0)))
        .collect();
    let eye = ops::astype(&Array::from_f32(&eye, &[k, k]).unwrap(), DType::Float16, d);
    let gpu = runtime.gpu().unwrap();
    let chosen = gpu.choices.matmul.get();
    for kernel in MatmulKernel::CANDIDATES {
        gpu.choices.matmul.set(kernel);
        let got = ops::matmul(&eye, &w, d).unwrap();
        let got = packed::unpack(&words(&runtime, &got), DType::Float16, k * n);
        let want: Vec<u32> = bits
            .iter()
            .map(|&b| packed::widen(b, DType::Float16))
            .collect();
        assert_eq!(got, want, "{kernel:?}");
    }
    gpu.choices.matmul.set(chosen);
}

/// A compiled trace over float16 arrays replays for new arguments: its fused program reads
/// their packed words itself (it is never widened again), and a float16 number argument is
/// followed, not baked in as the stand-in's value.
#[test]
fn a_traced_float16_program_replays_for_new_arguments() {
    use tandem::array::next_serial;
    use tandem::transforms::compile::{Tape, stand_ins};
    let runtime = gpu_runtime();
    let half = |values: &[f32], shape: &[usize]| {
        let x = Array::from_f32(values, shape).unwrap();
        let h = ops::astype(&x, DType::Float16, Device::Cpu);
        pollster::block_on(runtime.evaluate(std::slice::from_ref(&h))).unwrap();
        h
    };
    let body = |x: &Array, s: &Array| {
        let l = ops::unary(UnaryOp::Log1p, x, Device::Cpu).unwrap();
        ops::binary(BinaryOp::Multiply, &l, s, Device::Cpu).unwrap()
    };
    let (x, s) = (half(&[1.0, 2.0, 3.0], &[3]), half(&[2.0], &[]));
    let traced_on = stand_ins(&[x.clone(), s.clone()]);
    let since = next_serial();
    let out = body(&traced_on[0], &traced_on[1]);
    let tape = Tape::record(&traced_on, &[out], since).unwrap();
    let (x2, s2) = (half(&[4.0, 5.0, 6.0], &[3]), half(&[3.0], &[]));
    let replayed = tape.replay(&[x2.clone(), s2.clone()]).unwrap();
    let plain = body(&x2, &s2);
    let got = words(&runtime, &replayed[0]);
    assert_eq!(got, words(&runtime, &plain));
    assert_eq!(replayed[0].dtype(), DType::Float16);
}

/// The GPU's softmax, logsumexp and norms read a float16 or bfloat16 input in place: the
/// bits of the same op over the input widened by hand, rounded once, in the kernel for many
/// short rows and in the passes for few long ones, and over a strided input.
#[test]
fn the_gpu_norms_and_softmax_read_packed_inputs_exactly() {
    let runtime = gpu_runtime();
    let mut rng = common::Rng::new(12);
    let d = Device::Gpu;
    type Op = fn(&Array, &[Array]) -> Array;
    let ops_under_test: [(&str, Op); 4] = [
        ("softmax", |x, _| {
            ops::softmax(x, Some(&[-1]), Device::Gpu).unwrap()
        }),
        ("logsumexp", |x, _| {
            ops::logsumexp(x, Some(&[-1]), false, Device::Gpu).unwrap()
        }),
        ("layerNorm", |x, p| {
            ops::fast::layer_norm(x, Some(&p[0]), Some(&p[1]), 1e-5, Device::Gpu).unwrap()
        }),
        ("rmsNorm", |x, p| {
            ops::fast::rms_norm(x, Some(&p[0]), 1e-5, Device::Gpu).unwrap()
        }),
    ];
    // Many short rows, few long ones (split across threads), an odd row length.
    for shape in [[300usize, 24], [2, 5000], [7, 33]] {
        let n = shape[1];
        let params = [rng.floats(&[n]), rng.floats(&[n])];
        for dtype in [DType::Float16, DType::BFloat16] {
            let x = ops::astype(&rng.floats(&shape), dtype, d);
            let xt = ops::transpose(&ops::astype(&rng.floats(&[n, shape[0]]), dtype, d), None, d);
            for x in [x, xt.unwrap()] {
                for (name, op) in ops_under_test {
                    let what = format!("{name} of {:?} {dtype:?}", x.shape());
                    let got = op(&x, &params);
                    let wide = op(&ops::astype(&x, DType::Float32, d), &params);
                    let want = ops::astype(&wide, got.dtype(), d);
                    assert_eq!(words(&runtime, &got), words(&runtime, &want), "{what}");
                }
            }
        }
    }
}

/// The creation ops in every packed dtype, on both devices: `full` rounds (or wraps) its value
/// once, and `ones`, `eye`, `arange` and `linspace` give their values in the dtype.
#[test]
fn creation_ops_make_packed_arrays_of_their_values() {
    let runtime = gpu_runtime();
    let read = |a: &Array, d| {
        let wide = ops::astype(a, DType::Float32, d);
        pollster::block_on(runtime.read_f32(&wide)).unwrap()
    };
    for d in [Device::Cpu, Device::Gpu] {
        for dtype in [DType::Float16, DType::BFloat16, DType::Int8, DType::Uint8] {
            let what = format!("{dtype:?} on {d:?}");
            let float = dtype.is_float();
            let full = ops::full(&[3], 2.5, dtype, d).unwrap();
            assert_eq!(
                read(&full, d),
                [if float { 2.5 } else { 2.0 }; 3],
                "full {what}"
            );
            let wrapped = ops::full(&[], 300.0, dtype, d).unwrap();
            let want = match dtype {
                DType::Float16 => 300.0,
                DType::BFloat16 => 300.0,
                _ => 44.0,
            };
            assert_eq!(read(&wrapped, d), [want], "full(300) {what}");
            let third = ops::full(&[], 1.0 / 3.0, dtype, d).unwrap();
            let rounded = match dtype {
                DType::Float16 => half::f16::from_f64(1.0 / 3.0).to_f32(),
                DType::BFloat16 => half::bf16::from_f64(1.0 / 3.0).to_f32(),
                _ => 0.0,
            };
            assert_eq!(read(&third, d), [rounded], "full(1/3) rounds once, {what}");
            assert_eq!(
                read(&ops::ones(&[2], dtype, d).unwrap(), d),
                [1.0, 1.0],
                "ones {what}"
            );
            let eye = ops::eye(2, dtype, d).unwrap();
            assert_eq!(read(&eye, d), [1.0, 0.0, 0.0, 1.0], "eye {what}");
            let range = ops::arange(0.0, 4.0, 1.0, dtype, d).unwrap();
            assert_eq!(read(&range, d), [0.0, 1.0, 2.0, 3.0], "arange {what}");
            let line = ops::linspace(0.0, 3.0, 4, dtype, d).unwrap();
            assert_eq!(read(&line, d), [0.0, 1.0, 2.0, 3.0], "linspace {what}");
        }
    }
}
