//! The allocator on Vulkan (Mesa lavapipe in CI): reuse, exact statistics, the memory limit,
//! the cache limit, and safe release. Each test runs on its own thread and so has its own
//! allocator.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{Rng, gpu_runtime, words};
use tandem::graph::primitive::BinaryOp;
use tandem::memory::allocator::{self, cache_bytes};
use tandem::memory::policy::rounded;
use tandem::memory::{Scope, Stats, stats};
use tandem::{Array, DType, Device, ops};

const MIB: u64 = 1 << 20;

fn active() -> u64 {
    stats().active_bytes.get(Scope::All).current
}

fn evaluate(runtime: &tandem::Runtime, arrays: &[Array]) {
    pollster::block_on(runtime.evaluate(arrays)).unwrap();
}

/// A float32 array of `bytes` made on the GPU.
fn gpu_array(bytes: u64, seed: u32) -> Array {
    let n = (bytes / 4) as usize;
    ops::random::uniform(&[n], [seed, 1], 0.0, 1.0, Device::Gpu).unwrap()
}

#[test]
fn a_4_mib_array_made_and_freed_1000_times_reuses_one_buffer() {
    let runtime = gpu_runtime();
    let source = gpu_array(4 * MIB, 0);
    evaluate(&runtime, std::slice::from_ref(&source));
    let start = stats();
    for _ in 0..1000 {
        let x = ops::add(&source, &source, Device::Gpu).unwrap();
        evaluate(&runtime, std::slice::from_ref(&x));
    }
    let end = stats();
    assert_eq!(active(), start.active_bytes.get(Scope::All).current);
    assert_eq!(cache_bytes(), 4 * MIB, "one buffer in the cache");
    assert_eq!(end.num_device_alloc - start.num_device_alloc, 1);
    assert_eq!(end.num_cache_hits - start.num_cache_hits, 999);
}

#[test]
fn peak_is_the_true_maximum_of_live_bytes() {
    let _runtime = gpu_runtime();
    let base = active();
    allocator::reset_peak_stats();
    let host = |mib: u64| {
        Array::from_words(
            vec![0; (mib * MIB / 4) as usize],
            &[(mib * MIB / 4) as usize],
            DType::Float32,
        )
        .unwrap()
    };
    let a = host(3);
    let b = host(2);
    drop(a);
    let c = host(4);
    let d = host(1);
    drop((b, c));
    let e = host(1);
    // Live bytes over the script: 3, 5, 2, 6, 7, 1, 2 MiB over the base.
    assert_eq!(stats().active_bytes.get(Scope::All).peak, base + 7 * MIB);
    allocator::reset_peak_stats();
    assert_eq!(stats().active_bytes.get(Scope::All).peak, base + 2 * MIB);
    assert_eq!(active(), base + 2 * MIB);
    drop((d, e));
}

#[test]
fn the_memory_limit_fails_at_the_expected_array_and_recovers_after_frees() {
    let runtime = gpu_runtime();
    let limit = 64 * MIB;
    assert_eq!(allocator::set_memory_limit(Some(limit)), None);
    let fit = ((limit - active()) / MIB) as usize;
    let mut arrays = Vec::new();
    let mut failure = None;
    for i in 0..100 {
        match Array::from_words(
            vec![i as u32; (MIB / 4) as usize],
            &[(MIB / 4) as usize],
            DType::Int32,
        ) {
            Ok(a) => arrays.push(a),
            Err(e) => {
                failure = Some((i, e));
                break;
            }
        }
    }
    let (at, error) = failure.expect("the limit must bite");
    assert_eq!(at, fit, "the first array past the limit fails");
    assert_eq!(error.kind(), "MemoryLimitError");
    assert!(
        error.message().contains("limit 67108864 bytes"),
        "{}",
        error.message()
    );
    assert_eq!(stats().num_ooms, 1);
    for (i, a) in arrays.iter().enumerate() {
        assert!(
            words(&runtime, a).iter().all(|&w| w == i as u32),
            "array {i} is intact"
        );
    }
    let kept: Vec<Array> = arrays.into_iter().step_by(2).collect();
    let again = Array::from_words(
        vec![7; (MIB / 4) as usize],
        &[(MIB / 4) as usize],
        DType::Int32,
    );
    assert!(again.is_ok(), "freeing half makes room");
    drop(kept);
    allocator::set_memory_limit(None);
}

#[test]
fn a_gpu_evaluation_past_the_limit_flushes_retries_then_fails_cleanly() {
    let runtime = gpu_runtime();
    allocator::set_memory_limit(Some(active() + 8 * MIB));
    // A chain whose intermediates are freed as it goes fits; holding 3 x 4 MiB does not.
    // Each add broadcasts a row against a vector, so fusion leaves the chain 20 kernels long.
    let x = gpu_array(2 * MIB, 1);
    let n = x.size() as isize;
    let row = ops::reshape(&x, &[1, n], Device::Gpu).unwrap();
    let mut y = x.clone();
    for _ in 0..20 {
        let sum = ops::binary(BinaryOp::Add, &y, &row, Device::Gpu).unwrap();
        y = ops::reshape(&sum, &[n], Device::Gpu).unwrap();
    }
    evaluate(&runtime, &[y.clone()]);
    assert!(
        stats().num_alloc_retries >= 1,
        "the batch held freed buffers until a flush"
    );
    let big: Vec<Array> = (0..3).map(|i| gpu_array(4 * MIB, i)).collect();
    let result = pollster::block_on(runtime.evaluate(&big));
    assert_eq!(result.unwrap_err().kind(), "MemoryLimitError");
    assert_eq!(stats().num_ooms, 1, "one failure, counted once");
    drop(big);
    let expected: Vec<f32> = pollster::block_on(runtime.read_f32(&x))
        .unwrap()
        .iter()
        .map(|v| v * 21.0)
        .collect();
    let got = pollster::block_on(runtime.read_f32(&y)).unwrap();
    for (g, e) in got.iter().zip(&expected) {
        assert!((g - e).abs() <= 1e-5 * e.abs().max(1.0), "{g} vs {e}");
    }
    allocator::set_memory_limit(None);
    let big: Vec<Array> = (0..3).map(|i| gpu_array(4 * MIB, i)).collect();
    evaluate(&runtime, &big);
}

#[test]
fn the_cache_stays_under_its_limit_and_drops_the_least_recently_freed() {
    let runtime = gpu_runtime();
    allocator::set_cache_limit(8 * MIB);
    let sizes = [3 * MIB, 2 * MIB, MIB, 3 * MIB, 2 * MIB];
    let arrays: Vec<Array> = sizes
        .iter()
        .enumerate()
        .map(|(i, &b)| gpu_array(b, i as u32))
        .collect();
    evaluate(&runtime, &arrays);
    let mut freed_order = Vec::new();
    for (array, &size) in arrays.into_iter().zip(&sizes) {
        drop(array);
        freed_order.push(size);
        assert!(cache_bytes() <= 8 * MIB);
    }
    // 11 MiB were freed in order 3, 2, 1, 3, 2: the first 3 MiB went to make room.
    let cached: Vec<u64> = allocator::snapshot()
        .into_iter()
        .filter(|e| e.state == "cached" && e.block.usage == Some(allocator::Usage::Storage))
        .map(|e| e.block.size)
        .collect();
    assert_eq!(cached, vec![2 * MIB, MIB, 3 * MIB, 2 * MIB]);
    assert_eq!(allocator::set_cache_limit(0), 8 * MIB);
    assert_eq!(cache_bytes(), 0, "a zero limit disables the cache");
}

#[test]
fn no_buffer_is_reused_while_unsubmitted_work_reads_it() {
    let runtime = gpu_runtime();
    // Each input is uploaded, read by one add, and freed while the batch is still open; the
    // next upload of the same size must not reuse its buffer before the batch runs.
    let outs: Vec<Array> = (0..50)
        .map(|i| {
            let h = Array::from_f32(&[i as f32; 1024], &[1024]).unwrap();
            ops::add(&h, &h, Device::Gpu).unwrap()
        })
        .collect();
    evaluate(&runtime, &outs);
    for (i, out) in outs.iter().enumerate() {
        let values = pollster::block_on(runtime.read_f32(out)).unwrap();
        assert!(values.iter().all(|&v| v == 2.0 * i as f32), "output {i}");
    }
}

/// Active is at most reserved, and every gauge's current value is what was added less what
/// was removed.
fn assert_consistent(s: &Stats) {
    for scope in Scope::ALL {
        let (active, reserved) = (s.active_bytes.get(scope), s.reserved_bytes.get(scope));
        assert!(active.current <= reserved.current, "{scope:?}");
        assert!(active.peak <= reserved.peak, "{scope:?}");
        for metric in [
            &s.allocation,
            &s.segment,
            &s.active,
            &s.allocated_bytes,
            &s.reserved_bytes,
            &s.active_bytes,
            &s.requested_bytes,
        ] {
            let g = metric.get(scope);
            assert_eq!(g.current, g.allocated - g.freed, "{scope:?}");
            assert!(g.peak >= g.current);
        }
        assert!(s.requested_bytes.get(scope).current <= s.allocated_bytes.get(scope).current);
    }
    let all = s.active_bytes.get(Scope::All).current;
    let parts = |a: Scope, b: Scope| s.active_bytes.get(a).current + s.active_bytes.get(b).current;
    assert_eq!(all, parts(Scope::Cpu, Scope::Gpu));
    assert_eq!(all, parts(Scope::LargePool, Scope::SmallPool));
}

/// 10,000 random int32 ops on both devices with random frees. Integer ops are exact on both
/// devices, so every held array can be checked against values computed here.
#[test]
fn ten_thousand_random_ops_keep_exact_accounts_and_correct_data() {
    let runtime = gpu_runtime();
    let mut rng = Rng::new(5);
    let mut held: Vec<(Array, Vec<i32>)> = Vec::new();
    let sizes = [1usize, 7, 64, 1000, 70_000];
    for step in 0..10_000 {
        let device = if rng.next_u32().is_multiple_of(2) {
            Device::Cpu
        } else {
            Device::Gpu
        };
        if held.len() < 2 || rng.next_u32().is_multiple_of(8) {
            let n = sizes[rng.next_u32() as usize % sizes.len()];
            let values: Vec<i32> = (0..n)
                .map(|_| (rng.next_u32() % 200) as i32 - 100)
                .collect();
            held.push((Array::from_slice(&values, &[n]).unwrap(), values));
        } else {
            let (i, j) = (
                rng.next_u32() as usize % held.len(),
                rng.next_u32() as usize % held.len(),
            );
            if held[i].1.len() == held[j].1.len() {
                let (op, f): (BinaryOp, fn(i32, i32) -> i32) = match rng.next_u32() % 3 {
                    0 => (BinaryOp::Add, i32::wrapping_add),
                    1 => (BinaryOp::Subtract, i32::wrapping_sub),
                    _ => (BinaryOp::Maximum, i32::max),
                };
                let out = ops::binary(op, &held[i].0, &held[j].0, device).unwrap();
                let values = held[i]
                    .1
                    .iter()
                    .zip(&held[j].1)
                    .map(|(&a, &b)| f(a, b))
                    .collect();
                held.push((out, values));
            }
        }
        if held.len() > 40 || rng.next_u32().is_multiple_of(5) {
            let k = rng.next_u32() as usize % held.len();
            held.swap_remove(k);
        }
        if step % 97 == 0 {
            let arrays: Vec<Array> = held.iter().map(|(a, _)| a.clone()).collect();
            evaluate(&runtime, &arrays);
            assert_consistent(&stats());
        }
    }
    let arrays: Vec<Array> = held.iter().map(|(a, _)| a.clone()).collect();
    evaluate(&runtime, &arrays);
    let s = stats();
    assert_consistent(&s);
    let ring = rounded(256 * 1024);
    let mut seen = std::collections::HashSet::new();
    let held_bytes: u64 = arrays
        .iter()
        .filter_map(|a| a.storage())
        .filter(|storage| seen.insert(std::rc::Rc::as_ptr(storage)))
        .map(|storage| {
            let bytes = rounded((storage.len().max(1) * 4) as u64);
            let host = rounded((storage.len() * 4) as u64);
            u64::from(storage.on_gpu()) * bytes + u64::from(storage.on_host()) * host
        })
        .sum();
    assert_eq!(
        s.active_bytes.get(Scope::All).current,
        held_bytes + ring,
        "active is exactly the held arrays and the parameter ring"
    );
    for (array, expected) in &held {
        assert_eq!(
            pollster::block_on(runtime.read::<i32>(array)).unwrap(),
            *expected
        );
    }
}

#[test]
fn a_buffer_past_the_adapters_limits_is_a_memory_limit_error() {
    let runtime = gpu_runtime();
    let limits = runtime.gpu().unwrap().limits();
    let max = limits
        .max_buffer_size
        .min(limits.max_storage_buffer_binding_size);
    // Random numbers are made on the GPU, so nothing this big exists on the host.
    let too_big = gpu_array(max + 4, 1);
    let before = active();
    let err = pollster::block_on(runtime.evaluate(&[too_big])).unwrap_err();
    assert_eq!(err.kind(), "MemoryLimitError");
    assert!(
        err.message().contains("exceeds the adapter's max"),
        "{}",
        err.message()
    );
    assert_eq!(active(), before, "nothing was allocated");
}

/// A real device cannot be made to run out of memory on demand, so these use a hook that
/// makes the next buffer creations report out-of-memory the way WebGPU's error scope does.
#[test]
fn a_batch_whose_buffer_the_gpu_failed_to_create_is_discarded_and_rerun() {
    use tandem::memory::device_errors::fail_next_buffers_for_tests;
    let runtime = gpu_runtime();
    allocator::clear_cache();
    let x = Array::from_f32(&[1.5; 1000], &[1000]).unwrap();
    let before = stats();
    fail_next_buffers_for_tests(1);
    let y = ops::add(&x, &x, Device::Gpu).unwrap();
    let z = ops::binary(BinaryOp::Multiply, &y, &x, Device::Gpu).unwrap();
    assert_eq!(
        pollster::block_on(runtime.read_f32(&z)).unwrap(),
        vec![4.5; 1000],
        "the discarded batch ran again with new buffers"
    );
    let after = stats();
    assert_eq!(after.num_alloc_retries - before.num_alloc_retries, 1);
    assert_eq!(after.num_ooms, before.num_ooms);

    // With the cache off, every block gets a buffer of its own, which the hook can fail
    // (otherwise w's block is carved from the buffer that x, y and z live in).
    let cache_limit = allocator::set_cache_limit(0);
    fail_next_buffers_for_tests(100);
    let w = ops::add(&z, &x, Device::Gpu).unwrap();
    let err = pollster::block_on(runtime.evaluate(std::slice::from_ref(&w))).unwrap_err();
    assert_eq!(err.kind(), "MemoryLimitError");
    assert!(
        err.message().contains("ran out of memory"),
        "{}",
        err.message()
    );
    assert_eq!(stats().num_ooms - before.num_ooms, 1);
    assert!(
        !w.is_evaluated(),
        "w stays lazy, to evaluate once memory allows"
    );
    fail_next_buffers_for_tests(0);
    assert_eq!(
        pollster::block_on(runtime.read_f32(&w)).unwrap(),
        vec![6.0; 1000]
    );
    assert_eq!(
        pollster::block_on(runtime.read_f32(&z)).unwrap(),
        vec![4.5; 1000],
        "z is intact"
    );

    // A CPU op waiting for a GPU result whose batch is discarded requests its readback again.
    // (The cache is still off, so the next buffer is a new one, which the hook can fail.)
    fail_next_buffers_for_tests(1);
    let retries = stats().num_alloc_retries;
    let on_gpu = ops::add(&x, &x, Device::Gpu).unwrap();
    let on_cpu = ops::add(&on_gpu, &x, Device::Cpu).unwrap();
    assert_eq!(
        pollster::block_on(runtime.read_f32(&on_cpu)).unwrap(),
        vec![4.5; 1000]
    );
    assert_eq!(
        stats().num_alloc_retries - retries,
        1,
        "the batch was discarded once"
    );
    allocator::set_cache_limit(cache_limit);
}
