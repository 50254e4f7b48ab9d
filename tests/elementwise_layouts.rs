//! Elementwise operands as the GPU's `vec4` kernel reads them in place: a value per row
//! repeated over the row (a norm's statistic in its backward pass, `[rows, 1]` against
//! `[rows, cols]`), in every stored dtype, against the CPU; and the kernel that ran.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{assert_matches, gpu_runtime, random_words, words};
use tandem::graph::primitive::{BinaryOp, UnaryOp};
use tandem::{Array, DType, Device, ops};

/// A column (`[.., rows, 1]` or a stride-0 trailing run) over rows whose length is whole vec4s
/// is read one element per vec4; rows of other lengths keep the strided kernel. Each matches
/// the CPU exactly.
#[test]
fn columns_repeated_over_rows_take_the_vec4_kernel_and_match_the_cpu() {
    let runtime = gpu_runtime();
    let dtypes = [
        DType::Float32,
        DType::Float16,
        DType::BFloat16,
        DType::Int32,
        DType::Int8,
    ];
    let shapes: [(&[usize], &[usize]); 5] = [
        (&[6, 8], &[6, 1]),
        (&[3, 5, 4], &[3, 5, 1]),
        (&[2, 3, 2, 4], &[2, 3, 1, 1]),
        (&[7, 12], &[7, 1]),
        (&[5, 6], &[5, 1]),
    ];
    for dtype in dtypes {
        for (seed, (big, column)) in shapes.iter().enumerate() {
            let n = |s: &[usize]| s.iter().product::<usize>();
            let a =
                Array::from_words(random_words(dtype, n(big), seed as u64), big, dtype).unwrap();
            let b = Array::from_words(
                random_words(dtype, n(column), 9 + seed as u64),
                column,
                dtype,
            )
            .unwrap();
            for (op, swap) in [(BinaryOp::Multiply, false), (BinaryOp::Subtract, true)] {
                let run = |device: Device| match swap {
                    true => ops::binary(op, &b, &a, device).unwrap(),
                    false => ops::binary(op, &a, &b, device).unwrap(),
                };
                let on_gpu = run(Device::Gpu);
                runtime.profiler.start();
                let got = words(&runtime, &on_gpu);
                let report = pollster::block_on(runtime.finish_profile()).unwrap();
                let want = words(&runtime, &run(Device::Cpu));
                let what = format!("{} {dtype:?} {big:?} by {column:?}", op.name());
                assert_matches(&what, dtype, &got, &want, 0.0, 0.0);
                let kernels: Vec<&str> = report
                    .gpu
                    .iter()
                    .flat_map(|b| &b.dispatches)
                    .map(|d| d.kernel.as_str())
                    .filter(|k| k.starts_with("binary"))
                    .collect();
                let whole_vec4s = big[big.len() - 1] % 4 == 0;
                // Half precision computes in float32 between conversions; the op is one kernel.
                assert_eq!(kernels.len(), 1, "{what}: ran {kernels:?}");
                assert_eq!(
                    kernels[0].starts_with("binary_vec4"),
                    whole_vec4s,
                    "{what}: ran {kernels:?}"
                );
            }
        }
    }
}

/// Operands read across their rows (a batch of transposed matrices, one of them reversed too):
/// the CPU walks the output in tiles (`graph::shape::for_each_run`, margins and all), the GPU
/// in runs of consecutive elements with its index arithmetic unrolled for the axes. Every
/// kernel that reads through strides gives each output element the element its index names,
/// computed here from the indices alone.
#[test]
fn operands_read_across_their_rows_give_each_element_its_own_on_both_devices() {
    let runtime = gpu_runtime();
    let read = |a: &Array| -> Vec<f32> { bytemuck::cast_vec(words(&runtime, a)) };
    let shapes = [
        (1, 64, 64),
        (1, 40, 33),
        (3, 37, 70),
        (2, 9, 130),
        (1, 1024, 24),
    ];
    for (batch, rows, cols) in shapes {
        // Distinct small integers: every result below is exact.
        let data: Vec<f32> = (0..batch * rows * cols).map(|i| i as f32).collect();
        let x = Array::from_f32(&data, &[batch, rows, cols]).unwrap();
        // t[b, c, r] = x[b, r, c]; its reversed rows: t[b, c, rows - 1 - r].
        let at = |b: usize, c: usize, r: usize| data[(b * rows + r) * cols + c];
        let mut want = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for b in 0..batch {
            for c in 0..cols {
                for r in 0..rows {
                    let (v, back) = (at(b, c, r), at(b, c, rows - 1 - r));
                    want.0.push(-v);
                    want.1.push(v + back);
                    want.2.push(if v > back { v } else { back });
                    want.3.push(back);
                }
            }
        }
        for device in [Device::Cpu, Device::Gpu] {
            let what = format!("{device:?} [{batch}, {rows}, {cols}] transposed");
            // Made on the device, so that its views are read there (a host array's view is
            // copied row-major on its way up).
            let zero = Array::from_f32(&[0.0], &[]).unwrap();
            let made = ops::binary(BinaryOp::Add, &x, &zero, device).unwrap();
            let t = ops::transpose(&made, Some(&[0, 2, 1]), device).unwrap();
            let stop = [batch as isize, cols as isize, -(rows as isize) - 1];
            let reversed = ops::slice(&t, &[0, 0, -1], &stop, Some(&[1, 1, -1]), device).unwrap();
            assert_eq!(reversed.shape(), t.shape(), "{what}: the reversed view");
            let neg = ops::unary(UnaryOp::Neg, &t, device).unwrap();
            assert_eq!(read(&neg), want.0, "{what}: neg");
            let sum = ops::binary(BinaryOp::Add, &t, &reversed, device).unwrap();
            assert_eq!(read(&sum), want.1, "{what}: add");
            let larger = ops::binary(BinaryOp::Greater, &t, &reversed, device).unwrap();
            let picked = ops::where_(&larger, &t, &reversed, device).unwrap();
            assert_eq!(read(&picked), want.2, "{what}: where");
            let backwards: Vec<i32> = (0..rows as i32).rev().collect();
            let indices = Array::from_words(bytemuck::cast_vec(backwards), &[rows], DType::Int32);
            let taken = ops::take(&t, &indices.unwrap(), Some(2), device).unwrap();
            assert_eq!(read(&taken), want.3, "{what}: take");
            let joined = ops::concatenate(&[t.clone(), reversed.clone()], 2, device).unwrap();
            let joined = read(&joined);
            assert_eq!(joined.len(), 2 * want.0.len(), "{what}: concatenate");
            for (k, row) in joined.chunks(2 * rows).enumerate() {
                let plain = &want.0[k * rows..(k + 1) * rows];
                assert!(
                    row[..rows].iter().zip(plain).all(|(a, b)| *a == -b),
                    "{what}: concatenate"
                );
                assert_eq!(
                    row[rows..],
                    want.3[k * rows..(k + 1) * rows],
                    "{what}: concatenate"
                );
            }
            let ints = ops::astype(&t, DType::Int32, device);
            let ints: Vec<i32> = bytemuck::cast_vec(words(&runtime, &ints));
            assert!(
                ints.iter().zip(&want.0).all(|(i, v)| *i as f32 == -v),
                "{what}: astype"
            );
        }
    }
}
