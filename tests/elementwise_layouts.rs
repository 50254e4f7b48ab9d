//! Elementwise operands as the GPU's `vec4` kernel reads them in place: a value per row
//! repeated over the row (a norm's statistic in its backward pass, `[rows, 1]` against
//! `[rows, cols]`), in every stored dtype, against the CPU; and the kernel that ran.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{assert_matches, gpu_runtime, random_words, words};
use tandem::graph::primitive::BinaryOp;
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
