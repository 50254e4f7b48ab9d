//! The runtime on Vulkan (Mesa lavapipe in CI): adapter info, evaluation across devices, and
//! graph handling.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{gpu_runtime, words};
use tandem::graph::primitive::BinaryOp;
use tandem::{Array, Device, ops};

#[test]
fn runtime_reports_a_vulkan_adapter() {
    let options = tandem::RuntimeOptions {
        require_gpu: true,
        ..Default::default()
    };
    let runtime = pollster::block_on(tandem::Runtime::new(options)).unwrap();
    let info = runtime.info();
    assert!(info.gpu);
    let adapter = info.adapter.as_ref().unwrap();
    assert_eq!(adapter.backend, "vulkan");
    assert!(!adapter.device.is_empty());
    if adapter.is_fallback_adapter {
        // llvmpipe runs on the CPU: the default is whichever device timed faster.
        assert!(
            info.default_device_reason.contains("ms on the cpu"),
            "{}",
            info.default_device_reason
        );
    } else {
        assert_eq!(info.default_device, Device::Gpu);
    }
    let limit = |name| info.limits.iter().find(|(n, _)| *n == name).unwrap().1;
    assert!(limit("maxStorageBufferBindingSize") >= 128 << 20);
}

#[test]
fn gpu_add_of_the_readme_example() {
    let runtime = gpu_runtime();
    let a = Array::from_f32(&[1.0, 2.0, 3.0], &[3]).unwrap();
    let b = Array::from_f32(&[10.0, 20.0, 30.0], &[3]).unwrap();
    let c = ops::add(&a, &b, Device::Gpu).unwrap();
    let out = pollster::block_on(runtime.read_f32(&c)).unwrap();
    assert_eq!(out, vec![11.0, 22.0, 33.0]);
    assert!(c.storage().unwrap().on_gpu(), "the add ran on the GPU");
}

#[test]
fn gpu_int_add_wraps_like_the_cpu() {
    let runtime = gpu_runtime();
    let a = Array::from_slice(&[i32::MAX, -5], &[2]).unwrap();
    let b = Array::from_slice(&[1i32, 3], &[2]).unwrap();
    let c = ops::add(&a, &b, Device::Gpu).unwrap();
    assert_eq!(
        pollster::block_on(runtime.read::<i32>(&c)).unwrap(),
        vec![i32::MIN, -2]
    );
}

#[test]
fn empty_and_scalar_arrays_add_on_both_devices() {
    let runtime = gpu_runtime();
    for device in [Device::Cpu, Device::Gpu] {
        let empty = Array::from_f32(&[], &[0, 3]).unwrap();
        let row = Array::from_f32(&[1.0, 2.0, 3.0], &[3]).unwrap();
        let sum = ops::add(&empty, &row, device).unwrap();
        assert_eq!(sum.shape(), &[0, 3]);
        assert!(words(&runtime, &sum).is_empty());

        let scalar = Array::from_f32(&[2.5], &[]).unwrap();
        let sum = ops::add(&scalar, &row, device).unwrap();
        assert_eq!(
            pollster::block_on(runtime.read_f32(&sum)).unwrap(),
            vec![3.5, 4.5, 5.5]
        );
    }
}

#[test]
fn gpu_result_feeds_a_cpu_op_and_back() {
    let runtime = gpu_runtime();
    let one = Array::from_f32(&[1.0; 4], &[4]).unwrap();
    let mut x = Array::from_f32(&[0.0; 4], &[4]).unwrap();
    for i in 0..20 {
        let device = if i % 2 == 0 { Device::Gpu } else { Device::Cpu };
        x = ops::add(&x, &one, device).unwrap();
    }
    assert_eq!(
        pollster::block_on(runtime.read_f32(&x)).unwrap(),
        vec![20.0; 4]
    );
}

#[test]
fn deep_chain_evaluates_without_recursion() {
    let runtime = gpu_runtime();
    let one = Array::from_f32(&[1.0], &[]).unwrap();
    let mut x = Array::from_f32(&[0.0], &[]).unwrap();
    for _ in 0..10_000 {
        x = ops::add(&x, &one, Device::Cpu).unwrap();
    }
    assert_eq!(
        pollster::block_on(runtime.read_f32(&x)).unwrap(),
        vec![10_000.0]
    );
    assert!(
        x.inputs().is_empty(),
        "an evaluated node lets go of its inputs"
    );
}

#[test]
fn a_batch_longer_than_the_parameter_ring_submits_and_reuses_it() {
    let runtime = gpu_runtime();
    let pipelines_before = runtime.gpu().unwrap().pipelines.len();
    let one = Array::from_f32(&[1.0], &[]).unwrap();
    let mut x = Array::from_f32(&[0.0, 0.5], &[2]).unwrap();
    // More dispatches than the ring's 1024 parameter blocks, all in one evaluation. Every
    // intermediate is held, so fusion leaves each add a dispatch of its own.
    let mut held = Vec::new();
    for _ in 0..2500 {
        x = ops::add(&x, &one, Device::Gpu).unwrap();
        held.push(x.clone());
    }
    assert_eq!(
        pollster::block_on(runtime.read_f32(&x)).unwrap(),
        vec![2500.0, 2500.5]
    );
    assert!(
        runtime.gpu().unwrap().pipelines.len() <= pipelines_before + 1,
        "one pipeline for the adds, whatever their number"
    );
}

#[test]
fn intermediates_are_freed_once_their_last_consumer_has_run() {
    let runtime = gpu_runtime();
    let x = Array::from_f32(&[1.0, 2.0], &[2]).unwrap();
    for device in [Device::Cpu, Device::Gpu] {
        let y = ops::add(&x, &x, device).unwrap();
        let z = ops::add(&y, &x, device).unwrap();
        let w = ops::add(&z, &z, device).unwrap();
        let (weak_y, weak_z) = (y.downgrade(), z.downgrade());
        drop((y, z));
        assert!(weak_y.upgrade().is_some(), "unevaluated, the graph holds y");
        assert_eq!(
            pollster::block_on(runtime.read_f32(&w)).unwrap(),
            vec![6.0, 12.0]
        );
        assert!(
            weak_y.upgrade().is_none(),
            "y is freed after z read it ({device:?})"
        );
        assert!(
            weak_z.upgrade().is_none(),
            "z is freed after w read it ({device:?})"
        );
    }
}

#[test]
fn each_array_crosses_devices_once_and_the_bytes_are_counted() {
    let runtime = gpu_runtime();
    let moved = || {
        let stats = tandem::memory::stats();
        (stats.cpu_to_gpu, stats.gpu_to_cpu)
    };
    let (up, down) = moved();
    let a = Array::from_f32(&[1.0; 100], &[100]).unwrap();
    let b = Array::from_f32(&[2.0; 100], &[100]).unwrap();
    // MLX's example: c on the CPU, d on the GPU reading a and c.
    let c = ops::add(&a, &b, Device::Cpu).unwrap();
    let d = ops::add(&a, &c, Device::Gpu).unwrap();
    assert_eq!(
        pollster::block_on(runtime.read_f32(&d)).unwrap(),
        vec![4.0; 100]
    );
    assert_eq!(moved().0 - up, 2 * 400, "a and c were uploaded once each");
    assert_eq!(moved().1 - down, 400, "d was read back once");
    pollster::block_on(runtime.read_f32(&d)).unwrap();
    let e = ops::add(&a, &d, Device::Gpu).unwrap();
    pollster::block_on(runtime.read_f32(&e)).unwrap();
    assert_eq!(
        moved().0 - up,
        800,
        "a is already on the GPU and d was never off it"
    );
    assert_eq!(
        moved().1 - down,
        800,
        "reading d twice read it back once; e once"
    );
}

/// A chain of small ops in steady state, one operand a scalar as a JS number makes: a later
/// run creates no buffer (each request, a few bytes included, is served from the cache) and no
/// pipeline; a dispatch over buffers already bound together reuses their bind group.
#[test]
fn a_repeated_chain_creates_no_buffers_or_pipelines() {
    let runtime = gpu_runtime();
    let gpu = runtime.gpu().unwrap();
    let x = Array::from_f32(&[1.0; 64], &[64]).unwrap();
    let run = || {
        let mut y = x.clone();
        for _ in 0..50 {
            let two = Array::from_f32(&[2.0], &[]).unwrap();
            let sum = ops::add(&y, &x, Device::Gpu).unwrap();
            y = ops::binary(BinaryOp::Multiply, &sum, &two, Device::Gpu).unwrap();
            y = ops::binary(BinaryOp::Subtract, &y, &x, Device::Gpu).unwrap();
        }
        pollster::block_on(runtime.read_f32(&y)).unwrap()
    };
    let first = run();
    // The second run fuses what the first ran op by op (its programs have turned up twice),
    // so the third is the steady state.
    assert_eq!(run(), first);
    let created = gpu_segments_created();
    let pipelines = gpu.pipelines.len();
    let second = run();
    assert_eq!(first, second);
    // y <- 2 (y + 1) - 1 = 2y + 1 from y = 1: 2^51 - 1, which float32 rounds to 2^51.
    assert_eq!(first, vec![2f32.powi(51); 64]);
    assert_eq!(
        gpu_segments_created(),
        created,
        "the second run took every buffer from the cache"
    );
    assert_eq!(gpu.pipelines.len(), pipelines);
    let three = Array::from_f32(&[3.0], &[]).unwrap();
    let tripled = ops::binary(BinaryOp::Multiply, &x, &three, Device::Gpu).unwrap();
    assert_eq!(
        pollster::block_on(runtime.read_f32(&tripled)).unwrap(),
        vec![3.0; 64]
    );
    assert!(
        !three.storage().unwrap().on_gpu(),
        "a one-element host operand is a kernel parameter, never uploaded"
    );

    let a = ops::add(&x, &x, Device::Gpu).unwrap();
    pollster::block_on(runtime.evaluate(std::slice::from_ref(&a))).unwrap();
    let groups = gpu.bind_groups.len();
    for _ in 0..3 {
        // Each sum's buffer is the one the previous sum freed, so the group is the same.
        let b = ops::add(&a, &a, Device::Gpu).unwrap();
        pollster::block_on(runtime.evaluate(std::slice::from_ref(&b))).unwrap();
    }
    assert_eq!(
        gpu.bind_groups.len(),
        groups + 1,
        "one group serves the three sums"
    );
}

fn gpu_segments_created() -> u64 {
    use tandem::memory::stats::Scope;
    tandem::memory::allocator::stats()
        .segment
        .get(Scope::Gpu)
        .allocated
}

/// math.wgsl's `exp_acc` keeps its promise over the probe's sweep on this adapter, and the
/// runtime's choice of `exp` is the probe's verdict on the built-in.
#[test]
fn the_exp_probe_passes_exp_acc_and_decides_the_built_in() {
    use tandem::startup::exp_probe::{RELATIVE_BOUND, probe_builtin_exp, probe_exp};
    let runtime = gpu_runtime();
    let gpu = runtime.gpu().unwrap();
    let accurate = pollster::block_on(probe_exp(&gpu.device, &gpu.queue, "exp_acc")).unwrap();
    assert!(accurate.passed(), "{accurate:?}");
    assert!(accurate.worst_relative_error < RELATIVE_BOUND / 4.0);
    let builtin = pollster::block_on(probe_builtin_exp(&gpu.device, &gpu.queue)).unwrap();
    assert_eq!(gpu.choices.exp.builtin, builtin.passed(), "{builtin:?}");
    assert_eq!(runtime.info().exp.as_ref(), Some(&gpu.choices.exp));
    assert!(gpu.pipelines.builtin_exp() == gpu.choices.exp.builtin);
}

/// A cache that chooses the built-in gives math.wgsl's override to every kernel that declares
/// it and to no other (a constant a module does not declare is a validation error).
#[test]
fn kernels_compile_with_the_built_in_exp_chosen() {
    use tandem::DType;
    use tandem::gpu::device::pipelines::{KernelKey, PipelineCache};
    use tandem::gpu::{row_norm, unary};
    use tandem::graph::primitive::UnaryOp;
    let runtime = gpu_runtime();
    let gpu = runtime.gpu().unwrap();
    let cache = PipelineCache::new(true);
    let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
    let exp = unary::key(UnaryOp::Exp, DType::Float32, DType::Float32);
    cache.get_or_create(&gpu.device, exp, "main", 1, || {
        let source = unary::source(UnaryOp::Exp, DType::Float32, DType::Float32);
        tandem::gpu::elementwise::for_axes(&source, 2)
    });
    cache.get_or_create(
        &gpu.device,
        KernelKey::new("row_norm", "", &[]),
        "softmax_rows",
        1,
        || row_norm::source(false, tandem::DType::Float32),
    );
    cache.get_or_create(
        &gpu.device,
        KernelKey::new("fill", "", &[]),
        "fill",
        0,
        || include_str!("../src/gpu/wgsl/fill.wgsl").into(),
    );
    assert_eq!(pollster::block_on(scope.pop()).map(|e| e.to_string()), None);
    assert_eq!(cache.len(), 3);
}

/// Pipelines of numbered sources (fused kernels' programs, lists of operand accesses) are
/// bounded: past the bound the least recently used goes, and the fixed kernels never do.
#[test]
fn generated_pipelines_are_bounded_least_recently_used_first() {
    use tandem::gpu::device::pipelines::{KernelKey, PipelineCache};
    let runtime = gpu_runtime();
    let gpu = runtime.gpu().unwrap();
    let cache = PipelineCache::with_numbered_bound(false, 3);
    let fixed = KernelKey::new("fill", "", &[]);
    let program = |p: u64| KernelKey {
        program: p,
        ..KernelKey::new("fused", "", &[])
    };
    let get = |key: KernelKey| {
        let source = format!(
            "@compute @workgroup_size(1) fn main() {{ let x = {}u; }}",
            key.program + key.accesses
        );
        cache.get_or_create(&gpu.device, key, "main", 0, || source);
    };
    get(fixed);
    for p in 1..=3 {
        get(program(p));
    }
    get(program(1));
    get(program(4));
    assert!(!cache.contains(&program(2)), "the least recently used went");
    for kept in [fixed, program(1), program(3), program(4)] {
        assert!(cache.contains(&kept), "{kept}");
    }
    for p in 5..=20 {
        get(program(p));
    }
    let accesses = KernelKey {
        accesses: 7,
        ..KernelKey::new("binary", "add", &[])
    };
    get(accesses);
    assert!(cache.contains(&accesses) && !cache.contains(&program(18)));
    assert_eq!(cache.numbered(), 3);
    assert_eq!(cache.len(), 4, "three generated and the fixed kernel");
    assert!(cache.contains(&fixed));
}

/// The matmul kernel is chosen by measurement at the first GPU matmul: the adapter's usual
/// kernel unless another is clearly faster, the reason lists every candidate's time, and a
/// second runtime on the same adapter reuses the verdict at its first matmul.
#[test]
fn the_matmul_kernel_is_chosen_by_measurement_once_per_adapter() {
    use tandem::gpu::matmul::MatmulKernel;
    let first_matmul = |runtime: &tandem::Runtime| {
        let a = Array::from_f32(&[0.5; 96 * 64], &[96, 64]).unwrap();
        let b = Array::from_f32(&[2.0; 64 * 80], &[64, 80]).unwrap();
        let product = ops::matmul(&a, &b, Device::Gpu).unwrap();
        assert_eq!(
            pollster::block_on(runtime.read_f32(&product)).unwrap(),
            vec![64.0; 96 * 80]
        );
    };
    let first = gpu_runtime();
    assert!(
        first.info().matmul.is_none(),
        "not timed before a GPU matmul"
    );
    first_matmul(&first);
    let tuning = first.info().matmul.expect("timed at the first GPU matmul");
    let software = first.info().adapter.unwrap().is_fallback_adapter;
    let timed = MatmulKernel::CANDIDATES.len() - usize::from(software);
    assert_eq!(tuning.timings.len(), timed, "{}", tuning.reason);
    let fastest = tuning
        .timings
        .iter()
        .map(|t| t.best_ms)
        .fold(f64::MAX, f64::min);
    let chosen = tuning
        .timings
        .iter()
        .find(|t| t.kernel == tuning.kernel)
        .unwrap();
    assert!(chosen.best_ms <= 1.15 * fastest, "{}", tuning.reason);
    assert!(tuning.reason.contains("96x64 @ 64x80"), "{}", tuning.reason);
    for timing in &tuning.timings {
        assert!(timing.runs >= 1 && timing.best_ms > 0.0, "{timing:?}");
        assert!(
            tuning.reason.contains(&timing.kernel.name()),
            "{}",
            tuning.reason
        );
    }
    let second = gpu_runtime();
    first_matmul(&second);
    assert_eq!(second.info().matmul.as_ref(), Some(&tuning));
    assert_eq!(second.gpu().unwrap().choices.matmul.get(), tuning.kernel);
}

/// Work the GPU rejects fails every call that overlapped it with a `DeviceError` (never a
/// panic, never the stale contents of a buffer it should have written); arrays with a host
/// copy stay readable, GPU-only arrays from before the error fail to read, and new work runs.
#[test]
fn work_the_gpu_rejects_fails_with_a_device_error_and_nothing_stale_is_read() {
    use tandem::Error;
    use tandem::gpu::device::errors::spoil_next_submit_for_tests;
    let runtime = gpu_runtime();
    let host = Array::from_f32(&[1.0, 2.0, 3.0], &[3]).unwrap();
    let kept = ops::add(&host, &host, Device::Gpu).unwrap();
    assert_eq!(
        pollster::block_on(runtime.read_f32(&kept)).unwrap(),
        vec![2.0, 4.0, 6.0]
    );
    let gpu_only = ops::add(&host, &host, Device::Gpu).unwrap();
    pollster::block_on(runtime.evaluate(std::slice::from_ref(&gpu_only))).unwrap();
    spoil_next_submit_for_tests();
    let spoiled = ops::binary(BinaryOp::Multiply, &host, &host, Device::Gpu).unwrap();
    match pollster::block_on(runtime.read_f32(&spoiled)) {
        Err(Error::Device(message)) => assert!(message.contains("rejected"), "{message}"),
        other => panic!("expected a DeviceError, got {other:?}"),
    }
    // Read again, the spoiled result is not returned either.
    assert!(matches!(
        pollster::block_on(runtime.read_f32(&spoiled)),
        Err(Error::Device(_))
    ));
    assert!(matches!(
        pollster::block_on(runtime.read_f32(&gpu_only)),
        Err(Error::Device(_))
    ));
    assert_eq!(
        pollster::block_on(runtime.read_f32(&kept)).unwrap(),
        vec![2.0, 4.0, 6.0]
    );
    let again = ops::binary(BinaryOp::Multiply, &host, &host, Device::Gpu).unwrap();
    assert_eq!(
        pollster::block_on(runtime.read_f32(&again)).unwrap(),
        vec![1.0, 4.0, 9.0]
    );
    // Derived from a host-backed array on the GPU, which is uploaded again.
    let derived = ops::add(&kept, &host, Device::Gpu).unwrap();
    assert_eq!(
        pollster::block_on(runtime.read_f32(&derived)).unwrap(),
        vec![3.0, 6.0, 9.0]
    );
}

/// A lost device (simulated with `destroy`) fails the calls that need it with a `DeviceError`
/// that says so; host copies stay readable, the CPU keeps working, and a new runtime gets a
/// new device that works.
#[test]
fn after_device_loss_gpu_calls_fail_and_host_copies_survive() {
    use tandem::Error;
    let runtime = gpu_runtime();
    let host = Array::from_f32(&[1.0, 2.0, 3.0], &[3]).unwrap();
    let read = ops::add(&host, &host, Device::Gpu).unwrap();
    assert_eq!(
        pollster::block_on(runtime.read_f32(&read)).unwrap(),
        vec![2.0, 4.0, 6.0]
    );
    let gpu_only = ops::add(&read, &host, Device::Gpu).unwrap();
    pollster::block_on(runtime.evaluate(std::slice::from_ref(&gpu_only))).unwrap();
    let device = &runtime.gpu().unwrap().device;
    device.destroy();
    // Natively the loss is reported from a poll once the queue is empty, as the browser
    // reports it from its event loop.
    let _ = device.poll(wgpu::PollType::wait_indefinitely());
    let pending = ops::add(&host, &host, Device::Gpu).unwrap();
    match pollster::block_on(runtime.read_f32(&pending)) {
        Err(Error::Device(message)) => assert!(message.contains("lost"), "{message}"),
        other => panic!("expected a DeviceError, got {other:?}"),
    }
    assert!(runtime.device_lost().is_some());
    assert!(matches!(
        pollster::block_on(runtime.read_f32(&gpu_only)),
        Err(Error::Device(_))
    ));
    assert_eq!(
        pollster::block_on(runtime.read_f32(&read)).unwrap(),
        vec![2.0, 4.0, 6.0]
    );
    let on_cpu = ops::add(&read, &host, Device::Cpu).unwrap();
    assert_eq!(
        pollster::block_on(runtime.read_f32(&on_cpu)).unwrap(),
        vec![3.0, 6.0, 9.0]
    );
    drop(runtime);
    let fresh = gpu_runtime();
    let again = ops::add(&read, &host, Device::Gpu).unwrap();
    assert_eq!(
        pollster::block_on(fresh.read_f32(&again)).unwrap(),
        vec![3.0, 6.0, 9.0]
    );
}
