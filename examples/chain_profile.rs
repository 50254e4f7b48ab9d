//! Times 1000 chained adds on 64 elements on the GPU stream, natively (wgpu on Vulkan), to
//! profile tandem's per-op cost outside the browser: `cargo run --release --example
//! chain_profile` (under `perf record` for a profile). On lavapipe nearly all of its time is
//! the driver waking its worker threads for each dispatch; tandem's own code was under 1% of
//! the samples.

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    use tandem::{Array, Device, Runtime, RuntimeOptions, ops};
    let runtime = pollster::block_on(Runtime::new(RuntimeOptions {
        require_gpu: true,
        ..Default::default()
    }))
    .expect("a GPU adapter");
    let x = Array::from_f32(&[1.0; 64], &[64]).unwrap();
    let y = Array::from_f32(&[0.5; 64], &[64]).unwrap();
    for round in 0..20 {
        let start = std::time::Instant::now();
        let mut z = x.clone();
        for _ in 0..1000 {
            z = ops::add(&z, &y, Device::Gpu).unwrap();
        }
        let out = pollster::block_on(runtime.read_f32(&z)).unwrap();
        assert_eq!(out[0], 501.0);
        if round >= 2 {
            println!("{:.1} µs/op", start.elapsed().as_secs_f64() * 1e3);
        }
    }
}
