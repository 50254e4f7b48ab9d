//! The GPU kernels' throughput natively, on wgpu's Vulkan backend: `cargo run --release
//! --example native_bench`. Prints one table: matmul GFLOP/s and elementwise and reduction
//! GB/s, each the median of 7 timed runs after 3 warm-ups. A run records enough independent
//! ops in one evaluation to take about 50 ms (at most 64) and waits for the GPU, so that the
//! per-submit latency of a hardware GPU does not hide the kernel. The model rows are the peer
//! benchmark's transformer block and CNN, and causal attention. On a machine with a real GPU, compare the figures with its
//! fp32 peak and memory bandwidth (bench/README.md); on llvmpipe they measure the CPU. An
//! argument runs only the rows whose name contains it.

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    bench::run();
}

#[cfg(not(target_arch = "wasm32"))]
mod bench {
    use std::time::Instant;

    use tandem::graph::primitive::{BinaryOp, ReduceOp, UnaryOp};
    use tandem::ops::fast::AttentionMask;
    use tandem::transforms::grad::value_and_grad;
    use tandem::{Array, Device, Runtime, RuntimeOptions, ops};

    const WARMUPS: usize = 3;
    const RUNS: usize = 7;
    /// A run records enough ops to take about this long.
    const RUN_SECONDS: f64 = 0.05;
    const MAX_REPS: usize = 64;

    /// A workload: its name, the work one op does (FLOPs or bytes), the unit, and how to make
    /// one op from the inputs.
    struct Workload {
        name: String,
        work: f64,
        unit: &'static str,
        inputs: Vec<Array>,
        op: fn(&[Array]) -> Vec<Array>,
    }

    fn random(shape: &[usize], seed: u32) -> Array {
        ops::random::uniform(shape, [seed, 17], -1.0, 1.0, Device::Gpu).unwrap()
    }

    fn matmul(m: usize, k: usize, n: usize) -> Workload {
        Workload {
            name: format!("matmul {m}x{k} @ {k}x{n}"),
            work: 2.0 * (m * k * n) as f64,
            unit: "GFLOP/s",
            inputs: vec![random(&[m, k], 1), random(&[k, n], 2)],
            op: |x| vec![ops::matmul(&x[0], &x[1], Device::Gpu).unwrap()],
        }
    }

    /// `workload` with its inputs rounded to float16: weights and activations in 2 bytes.
    fn float16(mut workload: Workload) -> Workload {
        workload.name += " (float16)";
        for x in &mut workload.inputs {
            *x = ops::astype(x, tandem::DType::Float16, Device::Gpu);
        }
        workload
    }

    fn exp(n: usize) -> Workload {
        Workload {
            name: format!("exp {}M", n >> 20),
            work: 8.0 * n as f64,
            unit: "GB/s",
            inputs: vec![random(&[n], 3)],
            op: |x| vec![ops::unary(UnaryOp::Exp, &x[0], Device::Gpu).unwrap()],
        }
    }

    fn sum(n: usize) -> Workload {
        Workload {
            name: format!("sum {}M", n >> 20),
            work: 4.0 * n as f64,
            unit: "GB/s",
            inputs: vec![random(&[n], 4)],
            op: |x| vec![ops::reduce(ReduceOp::Sum, &x[0], None, false, Device::Gpu).unwrap()],
        }
    }

    /// `cumsum` along one row of `n`: the scan's passes over blocks.
    fn cumsum(n: usize) -> Workload {
        Workload {
            name: format!("cumsum of one row of {}M", n >> 20),
            work: 8.0 * n as f64,
            unit: "GB/s",
            inputs: vec![random(&[n], 6)],
            op: |x| {
                let sum = tandem::graph::primitive::ScanOp::Sum;
                vec![ops::scan(sum, &x[0], Some(0), false, true, Device::Gpu).unwrap()]
            },
        }
    }

    fn softmax(rows: usize, cols: usize) -> Workload {
        Workload {
            name: format!("softmax {rows}x{cols}"),
            work: 8.0 * (rows * cols) as f64,
            unit: "GB/s",
            inputs: vec![random(&[rows, cols], 5)],
            op: |x| vec![ops::softmax(&x[0], Some(&[-1]), Device::Gpu).unwrap()],
        }
    }

    /// Causal attention over [b, h, l, d]: the composition of `tn.fast` (matmul, masked
    /// softmax, matmul).
    fn attention(b: usize, h: usize, l: usize, d: usize) -> Workload {
        Workload {
            name: format!("attention {b}x{h}x{l}x{d} causal"),
            work: 4.0 * (b * h * l * l * d) as f64,
            unit: "GFLOP/s",
            inputs: (0..3).map(|i| random(&[b, h, l, d], 10 + i)).collect(),
            op: |x| vec![sdpa(x, AttentionMask::Causal)],
        }
    }

    fn sdpa(x: &[Array], mask: AttentionMask) -> Array {
        let scale = 1.0 / (x[0].shape()[3] as f32).sqrt();
        ops::fast::scaled_dot_product_attention(&x[0], &x[1], &x[2], scale, mask, Device::Gpu)
            .unwrap()
    }

    /// The peer benchmark's GPT-2-small block (bench/peers/models.js) on a sequence of 128.
    fn transformer() -> Workload {
        let (t, d, f) = (128, 768, 3072);
        let shapes: [&[usize]; 13] = [
            &[t, d],
            &[d],
            &[d],
            &[d, 3 * d],
            &[3 * d],
            &[d, d],
            &[d],
            &[d],
            &[d],
            &[d, f],
            &[f],
            &[f, d],
            &[d],
        ];
        Workload {
            name: "transformer block, d 768, 12 heads, seq 128".into(),
            work: 2.0 * (t * d * (4 * d + 2 * f)) as f64 + 4.0 * (t * t * d) as f64,
            unit: "GFLOP/s",
            inputs: shapes
                .iter()
                .enumerate()
                .map(|(i, s)| random(s, 20 + i as u32))
                .collect(),
            op: |p| vec![block(p)],
        }
    }

    /// The block's forward and backward pass: `sum(block(x) * dy)` and its gradient with
    /// respect to every input, as the peer benchmark's `transformer-grad` (`dy` is the last
    /// input).
    fn transformer_grad() -> Workload {
        let mut workload = transformer();
        workload.name = "transformer block, forward and backward".into();
        workload.work *= 3.0;
        workload.inputs.push(random(&[128, 768], 33));
        workload.op = |p| {
            let g = Device::Gpu;
            let (params, dy) = p.split_at(p.len() - 1);
            let loss = |v: &[Array]| {
                let y = ops::binary(BinaryOp::Multiply, &block(v), &dy[0], g)?;
                ops::reduce(ReduceOp::Sum, &y, None, false, g)
            };
            let (value, grads) = value_and_grad(loss, params).unwrap();
            std::iter::once(value).chain(grads).collect()
        };
        workload
    }

    fn block(p: &[Array]) -> Array {
        let g = Device::Gpu;
        let (t, d, h) = (128isize, 768isize, 12isize);
        let linear = |x: &Array, w: &Array, b: &Array| {
            ops::add(&ops::matmul(x, w, g).unwrap(), b, g).unwrap()
        };
        let norm = |x: &Array, w: &Array, b: &Array| {
            ops::fast::layer_norm(x, Some(w), Some(b), 1e-5, g).unwrap()
        };
        let qkv = linear(&norm(&p[0], &p[1], &p[2]), &p[3], &p[4]);
        let heads: Vec<Array> = ops::split(&qkv, ops::SplitAt::Sections(3), -1, g)
            .unwrap()
            .iter()
            .map(|part| {
                let four = ops::reshape(part, &[1, t, h, d / h], g).unwrap();
                ops::transpose(&four, Some(&[0, 2, 1, 3]), g).unwrap()
            })
            .collect();
        let attended = sdpa(&heads, AttentionMask::Causal);
        let merged = ops::transpose(&attended, Some(&[0, 2, 1, 3]), g).unwrap();
        let merged = ops::reshape(&merged, &[t, d], g).unwrap();
        let y = ops::add(&p[0], &linear(&merged, &p[5], &p[6]), g).unwrap();
        let hidden = linear(&norm(&y, &p[7], &p[8]), &p[9], &p[10]);
        let hidden = ops::unary(UnaryOp::Gelu, &hidden, g).unwrap();
        ops::add(&y, &linear(&hidden, &p[11], &p[12]), g).unwrap()
    }

    /// The peer benchmark's CNN: three 3x3 convolutions with bias and ReLU on 8x64x64x3.
    fn cnn() -> Workload {
        let shapes: [&[usize]; 7] = [
            &[8, 64, 64, 3],
            &[32, 3, 3, 3],
            &[32],
            &[64, 3, 3, 32],
            &[64],
            &[64, 3, 3, 64],
            &[64],
        ];
        Workload {
            name: "CNN, 3 conv3x3 (32-64 ch), 8x64x64x3".into(),
            work: 2.0 * 8.0 * (4096.0 * 27.0 * 32.0 + 1024.0 * 288.0 * 64.0 + 256.0 * 576.0 * 64.0),
            unit: "GFLOP/s",
            inputs: shapes
                .iter()
                .enumerate()
                .map(|(i, s)| random(s, 40 + i as u32))
                .collect(),
            op: |p| {
                let g = Device::Gpu;
                let mut x = p[0].clone();
                for (l, stride) in [1, 2, 2].into_iter().enumerate() {
                    let params = ops::conv::ConvParams {
                        stride: vec![stride; 2],
                        padding: vec![1; 2],
                        dilation: vec![1; 2],
                        groups: 1,
                    };
                    let y = ops::conv::conv("conv2d", &x, &p[1 + 2 * l], &params, g).unwrap();
                    let y = ops::add(&y, &p[2 + 2 * l], g).unwrap();
                    x = ops::unary(UnaryOp::Relu, &y, g).unwrap();
                }
                vec![x]
            },
        }
    }

    /// Seconds for `reps` ops in one evaluation, up to the GPU finishing them.
    fn time(runtime: &Runtime, workload: &Workload, reps: usize) -> f64 {
        let start = Instant::now();
        let outs: Vec<Array> = (0..reps)
            .flat_map(|_| (workload.op)(&workload.inputs))
            .collect();
        pollster::block_on(runtime.evaluate(&outs)).unwrap();
        start.elapsed().as_secs_f64()
    }

    pub fn run() {
        let runtime = pollster::block_on(Runtime::new(RuntimeOptions {
            require_gpu: true,
            default_device: Some(Device::Gpu),
            ..Default::default()
        }))
        .expect("a GPU adapter");
        let info = runtime.info();
        let adapter = info.adapter.as_ref().unwrap();
        println!(
            "adapter: {} ({}; fallback: {})",
            adapter.description, adapter.backend, adapter.is_fallback_adapter
        );
        if let Some(tuning) = &info.matmul {
            println!("matmul kernel: {}: {}", tuning.kernel.name(), tuning.reason);
        }
        let workloads = [
            matmul(256, 256, 256),
            matmul(512, 512, 512),
            matmul(1024, 1024, 1024),
            matmul(2048, 2048, 2048),
            matmul(4096, 512, 4),
            matmul(128, 768, 3072),
            float16(matmul(128, 768, 3072)),
            exp(1 << 20),
            exp(16 << 20),
            sum(16 << 20),
            softmax(4096, 1024),
            cumsum(16 << 20),
            attention(1, 12, 128, 64),
            attention(8, 12, 256, 64),
            transformer(),
            transformer_grad(),
            float16(transformer()),
            cnn(),
        ];
        // `cargo run --release --example native_bench -- float16` runs the rows whose name
        // holds "float16".
        let only = std::env::args().nth(1).unwrap_or_default();
        let workloads: Vec<&Workload> = workloads
            .iter()
            .filter(|w| w.name.contains(&only))
            .collect();
        println!(
            "\n| workload | ops per run | median ms per op | min | max | throughput |\n\
             |---|---|---|---|---|---|"
        );
        for workload in workloads {
            pollster::block_on(runtime.evaluate(&workload.inputs)).unwrap();
            // The fastest warm-up sizes the runs: the second one fuses and compiles new
            // pipelines (a matmul epilogue compiles a whole matmul), which must not pass for
            // the op's time and shrink every run to one op.
            let mut one = f64::MAX;
            for _ in 0..WARMUPS {
                one = one.min(time(&runtime, workload, 1));
            }
            let reps = ((RUN_SECONDS / one).ceil() as usize).clamp(1, MAX_REPS);
            let mut per_op: Vec<f64> = (0..RUNS)
                .map(|_| time(&runtime, workload, reps) / reps as f64)
                .collect();
            per_op.sort_by(f64::total_cmp);
            let median = per_op[RUNS / 2];
            println!(
                "| {} | {reps} | {:.3} | {:.3} | {:.3} | {:.1} {} |",
                workload.name,
                median * 1e3,
                per_op[0] * 1e3,
                per_op[RUNS - 1] * 1e3,
                workload.work / median / 1e9,
                workload.unit
            );
        }
    }
}
