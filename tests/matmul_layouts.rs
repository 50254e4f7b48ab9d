//! Matmul operands laid out as attention finds them: heads sliced out of one fused
//! projection, read in place by the GPU's vec4 kernel where it can and copied where it cannot,
//! against the CPU reference.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{Rng, assert_matches, gpu_runtime, runner, words};
use proptest::prelude::*;
use tandem::{DType, Device, ops};

/// Attention's heads sliced out of one fused projection: the GPU matmul reads matrices whose
/// rows are apart (and, per head, evenly spaced) in place where the vec4 kernel can, and copies
/// them where it cannot (an offset or stride off the vec4 grid). Every case matches the CPU.
#[test]
fn matmuls_of_column_slices_and_heads_match_the_cpu() {
    let runtime = gpu_runtime();
    let cases = (any::<u64>(), 1usize..4, 1usize..3, 0usize..3, any::<bool>());
    runner(40)
        .run(&cases, |(seed, heads, width4, shift, transposed)| {
            let mut rng = Rng::new(seed);
            // A [t, 3 * heads * hd] projection; q, k and v are its thirds, shifted by `shift`.
            let (t, hd) = (1 + rng.next_u32() as usize % 9, 4 * width4);
            let d = heads * hd;
            let cols = 3 * d + shift;
            let qkv = rng.floats(&[t, cols]);
            let third = |i: usize, dev: Device| {
                let start = (shift + i * d) as isize;
                let s = ops::slice(
                    &qkv,
                    &[0, start],
                    &[t as isize, start + d as isize],
                    None,
                    dev,
                )
                .unwrap();
                let h = ops::reshape(&s, &[t as isize, heads as isize, hd as isize], dev).unwrap();
                ops::transpose(&h, Some(&[1, 0, 2]), dev).unwrap()
            };
            let attend = |dev: Device| {
                let (q, k, v) = (third(0, dev), third(1, dev), third(2, dev));
                let kt = ops::transpose(&k, Some(&[0, 2, 1]), dev).unwrap();
                let scores = ops::matmul(&q, &kt, dev).unwrap();
                let second = if transposed {
                    ops::transpose(&v, Some(&[0, 2, 1]), dev).unwrap()
                } else {
                    v
                };
                let left = if transposed {
                    ops::transpose(&scores, Some(&[0, 2, 1]), dev).unwrap()
                } else {
                    scores.clone()
                };
                let weighted = if transposed {
                    ops::matmul(&second, &left, dev).unwrap()
                } else {
                    ops::matmul(&left, &second, dev).unwrap()
                };
                // A plain column slice as A, against the first head's rows of q as B.
                let rows = ops::slice(
                    &qkv,
                    &[0, shift as isize],
                    &[t as isize, (shift + hd) as isize],
                    None,
                    dev,
                )
                .unwrap();
                let square =
                    ops::matmul(&ops::transpose(&rows, None, dev).unwrap(), &rows, dev).unwrap();
                (scores, weighted, square)
            };
            let (g, c) = (attend(Device::Gpu), attend(Device::Cpu));
            let what = format!("t {t} heads {heads} hd {hd} shift {shift} transposed {transposed}");
            for (name, gpu, cpu) in [
                ("scores", &g.0, &c.0),
                ("weighted", &g.1, &c.1),
                ("square", &g.2, &c.2),
            ] {
                let (gw, cw) = (words(&runtime, gpu), words(&runtime, cpu));
                assert_matches(
                    &format!("{name} {what}"),
                    DType::Float32,
                    &gw,
                    &cw,
                    1e-5,
                    1e-5,
                );
            }
            Ok(())
        })
        .unwrap();
}

/// A backward pass's products: `g @ wᵀ` and `xᵀ @ g`, batched, broadcast and offset. Every
/// register kernel reads a transposed operand column by column in place, without a copy, where
/// the dimension it reads along is whole vec4s, and copies it where not; every case matches
/// the CPU.
#[test]
fn transposed_operands_are_read_in_place_and_match_the_cpu() {
    use tandem::gpu::matmul::MatmulKernel;
    let runtime = gpu_runtime();
    let dims = (1usize..12, 1usize..10, 1usize..10, 0usize..3);
    let cases = (dims, any::<bool>(), any::<bool>(), any::<u64>());
    let chosen = runtime.gpu().unwrap().choices.matmul.get();
    for kernel in MatmulKernel::CANDIDATES {
        runtime.gpu().unwrap().choices.matmul.set(kernel);
        runner(24)
            .run(&cases, |((m4, k4, n4, batch), ta, tb, seed)| {
                let mut rng = Rng::new(seed);
                // m off the vec4 grid sometimes: a transposed a is then copied.
                let m = if seed % 5 == 0 { 4 * m4 + 1 } else { 4 * m4 };
                let (k, n) = (4 * k4, 4 * n4);
                let lead: Vec<usize> = (0..batch).map(|i| 1 + (i % 2)).collect();
                // Stored as [.., k, m] and [.., n, k] when transposed; b broadcast when batch is odd.
                let stored_a = [lead.clone(), if ta { vec![k, m] } else { vec![m, k] }].concat();
                let b_lead = if batch % 2 == 1 { vec![] } else { lead.clone() };
                let stored_b = [b_lead, if tb { vec![n, k] } else { vec![k, n] }].concat();
                let (xa, xb) = (rng.floats(&stored_a), rng.floats(&stored_b));
                let swap = |x: &tandem::Array, dev: Device| {
                    let r = x.ndim() as isize;
                    let mut perm: Vec<isize> = (0..r).collect();
                    perm.swap((r - 1) as usize, (r - 2) as usize);
                    ops::transpose(x, Some(&perm), dev).unwrap()
                };
                let product = |dev: Device| {
                    let a = if ta { swap(&xa, dev) } else { xa.clone() };
                    let b = if tb { swap(&xb, dev) } else { xb.clone() };
                    ops::matmul(&a, &b, dev).unwrap()
                };
                let (g, c) = (product(Device::Gpu), product(Device::Cpu));
                runtime.profiler.start();
                let gw = words(&runtime, &g);
                let report = pollster::block_on(runtime.finish_profile()).unwrap();
                let cw = words(&runtime, &c);
                let what = format!("{kernel:?} a {stored_a:?} ta {ta}, b {stored_b:?} tb {tb}");
                assert_matches(&what, DType::Float32, &gw, &cw, 1e-5, 1e-5 * k as f32);
                let dispatches: Vec<_> = report.gpu.iter().flat_map(|b| &b.dispatches).collect();
                prop_assert!(
                    dispatches.iter().any(|d| d.kernel.starts_with("matmul")),
                    "{}: the profile saw no matmul: {:?}",
                    what,
                    dispatches
                );
                let copies = dispatches
                    .iter()
                    .filter(|d| !d.kernel.starts_with("matmul"))
                    .count();
                let in_place = kernel != MatmulKernel::WorkgroupTiled && (!ta || m % 4 == 0);
                if in_place {
                    prop_assert_eq!(copies, 0, "{}: {:?}", what, dispatches);
                }
                Ok(())
            })
            .unwrap();
    }
    runtime.gpu().unwrap().choices.matmul.set(chosen);
}
