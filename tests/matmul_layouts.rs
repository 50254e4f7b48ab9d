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
/// them where it cannot (an offset or stride off the vec4 grid, a transposed operand). Every
/// case matches the CPU.
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
