//! The seeds' memory tools on Vulkan (Mesa lavapipe in CI): the PyTorch figures after every
//! step of a scripted sequence, the reuse policies, raw blocks and the allocator's history.
//! Each test runs on its own thread and so has its own allocator.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::gpu_runtime;
use tandem::Runtime;
use tandem::memory::allocator::{self, BytePeak, SMALL_SEGMENT, cache_bytes};
use tandem::memory::history::{Action, Recording};
use tandem::memory::policy::{POLICIES, Policy, rounded};
use tandem::memory::{Scope, stats};
use tandem::raw_block::RawBlock;
use tandem::stream::{Device, Stream};

const KIB: u64 = 1 << 10;

/// `memory_allocated`, `max_memory_allocated`, `memory_reserved`, `max_memory_reserved` of one
/// scope, as the JS layer's PyTorch names read them.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Counts {
    allocated: u64,
    max_allocated: u64,
    reserved: u64,
    max_reserved: u64,
}

const SCOPES: [Scope; 3] = [Scope::All, Scope::Cpu, Scope::Gpu];

fn counts() -> [Counts; 3] {
    let s = stats();
    SCOPES.map(|scope| Counts {
        allocated: s.allocated_bytes.get(scope).current,
        max_allocated: s.allocated_bytes.get(scope).peak,
        reserved: s.reserved_bytes.get(scope).current,
        max_reserved: s.reserved_bytes.get(scope).peak,
    })
}

/// Adds `allocated` and `reserved` bytes to `device` and to all, peaks following.
fn grow(expected: &mut [Counts; 3], device: Device, allocated: i64, reserved: i64) {
    let device_index = if device == Device::Cpu { 1 } else { 2 };
    for i in [0, device_index] {
        let c = &mut expected[i];
        c.allocated = c.allocated.checked_add_signed(allocated).unwrap();
        c.reserved = c.reserved.checked_add_signed(reserved).unwrap();
        c.max_allocated = c.max_allocated.max(c.allocated);
        c.max_reserved = c.max_reserved.max(c.reserved);
    }
}

/// The torch invariants for every key: current is allocated less freed, the peak is at least
/// the current value, and active bytes are at most reserved bytes.
fn assert_invariants() {
    let flat = stats().flat();
    let value = |key: &str| {
        flat.iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| *v)
            .unwrap()
    };
    for (key, current) in &flat {
        if let Some(prefix) = key.strip_suffix(".current") {
            let allocated = value(&format!("{prefix}.allocated"));
            let freed = value(&format!("{prefix}.freed"));
            assert_eq!(*current, allocated - freed, "{key}");
            assert!(value(&format!("{prefix}.peak")) >= *current, "{key}");
        }
    }
    for scope in Scope::ALL {
        let active = value(&format!("active_bytes.{}.current", scope.name()));
        let reserved = value(&format!("reserved_bytes.{}.current", scope.name()));
        assert!(active <= reserved, "{scope:?}");
    }
}

fn block(runtime: &Runtime, bytes: u64, device: Device) -> tandem::Result<RawBlock> {
    runtime.raw_block(bytes, Stream::default_for(device))
}

/// Lets the GPU confirm the buffers created so far, so that freed ones may be cached.
fn confirm(runtime: &Runtime) {
    pollster::block_on(runtime.synchronize()).unwrap();
}

#[test]
fn a_scripted_sequence_gives_exact_pytorch_figures_after_every_step() {
    let runtime = gpu_runtime();
    allocator::clear_cache();
    allocator::reset_byte_peak(BytePeak::Allocated, None);
    allocator::reset_byte_peak(BytePeak::Reserved, None);
    let mut expected = counts();
    assert_invariants();

    // Allocations on both devices: the GPU block is carved from a new small-pool buffer.
    let gpu = block(&runtime, 40 * KIB, Device::Gpu).unwrap();
    let host = block(&runtime, 3000, Device::Cpu).unwrap();
    let (g, h) = (rounded(40 * KIB) as i64, rounded(3000) as i64);
    let segment = SMALL_SEGMENT as i64;
    grow(&mut expected, Device::Gpu, g, segment);
    grow(&mut expected, Device::Cpu, h, h);
    assert_eq!(counts(), expected, "after the allocations");
    assert_invariants();
    confirm(&runtime);

    // Frees: the GPU block goes back to its buffer, which the cache keeps (reserved stays);
    // the host block is gone.
    drop(gpu);
    drop(host);
    grow(&mut expected, Device::Gpu, -g, 0);
    grow(&mut expected, Device::Cpu, -h, -h);
    assert_eq!(counts(), expected, "after the frees");
    assert_eq!(cache_bytes(), SMALL_SEGMENT);
    assert_invariants();

    // A cache hit: allocated rises, reserved does not.
    let hits = stats().num_cache_hits;
    let again = block(&runtime, 40 * KIB - 100, Device::Gpu).unwrap();
    assert_eq!(stats().num_cache_hits, hits + 1);
    grow(&mut expected, Device::Gpu, g, 0);
    assert_eq!(counts(), expected, "after a cache hit");
    assert_invariants();

    // A limit failure changes nothing but the OOM count.
    let ooms = stats().num_ooms;
    let active = stats().active_bytes.get(Scope::All).current;
    allocator::set_memory_limit(Some(active + KIB));
    let refused = block(&runtime, 64 * KIB, Device::Gpu).unwrap_err();
    assert_eq!(refused.kind(), "MemoryLimitError");
    allocator::set_memory_limit(None);
    assert_eq!(stats().num_ooms, ooms + 1);
    assert_eq!(counts(), expected, "after the refusal");
    assert_invariants();

    // Resets, one peak at a time.
    drop(again);
    grow(&mut expected, Device::Gpu, -g, 0);
    assert_eq!(counts(), expected, "after the last free");
    allocator::reset_byte_peak(BytePeak::Allocated, Some(Device::Gpu));
    expected[2].max_allocated = expected[2].allocated;
    assert_eq!(
        counts(),
        expected,
        "after resetting the gpu's allocated peak"
    );
    allocator::reset_byte_peak(BytePeak::Reserved, None);
    for c in &mut expected {
        c.max_reserved = c.reserved;
    }
    assert_eq!(counts(), expected, "after resetting every reserved peak");
    allocator::clear_cache();
    grow(&mut expected, Device::Gpu, 0, -segment);
    assert_eq!(counts(), expected, "after emptying the cache");
    assert_invariants();
}

#[test]
fn the_policy_changes_only_while_nothing_is_allocated_and_each_reuses_by_its_rule() {
    let runtime = gpu_runtime();
    assert_eq!(allocator::policy(), Policy::BestFit);
    for policy in POLICIES {
        allocator::set_policy(policy).unwrap();
        // A freed 4 KiB buffer, then a request rounding to 3,840 bytes and one of 4 KiB.
        let first = block(&runtime, 4 * KIB, Device::Gpu).unwrap();
        let other = POLICIES.into_iter().find(|p| *p != policy).unwrap();
        let err = allocator::set_policy(other).unwrap_err();
        assert!(err.to_string().contains("no array or raw block"), "{err}");
        confirm(&runtime);
        drop(first);
        let hits = stats().num_cache_hits;
        let smaller = block(&runtime, 3800, Device::Gpu).unwrap();
        let best_fit_hit = stats().num_cache_hits - hits;
        drop(smaller);
        let hits = stats().num_cache_hits;
        let same = block(&runtime, 4 * KIB, Device::Gpu).unwrap();
        let exact_hit = stats().num_cache_hits - hits;
        drop(same);
        match policy.name() {
            "best-fit" => assert_eq!((best_fit_hit, exact_hit), (1, 1)),
            "exact" => assert_eq!((best_fit_hit, exact_hit), (0, 1)),
            "none" => {
                assert_eq!((best_fit_hit, exact_hit), (0, 0));
                assert_eq!(cache_bytes(), 0, "nothing is kept");
            }
            other => panic!("untested policy {other}"),
        }
        allocator::clear_cache();
    }
    allocator::set_policy(Policy::BestFit).unwrap();
}

#[test]
fn a_history_records_a_scripted_sequence_in_order() {
    let runtime = gpu_runtime();
    allocator::clear_cache();
    allocator::record_history(Some(Recording {
        max_entries: 100,
        stacks: false,
    }));
    let gpu = block(&runtime, 8 * KIB, Device::Gpu).unwrap();
    let host = block(&runtime, 100, Device::Cpu).unwrap();
    confirm(&runtime);
    drop(gpu);
    let again = block(&runtime, 8 * KIB, Device::Gpu).unwrap();
    allocator::set_memory_limit(Some(stats().active_bytes.get(Scope::All).current));
    assert!(block(&runtime, KIB, Device::Cpu).is_err());
    allocator::set_memory_limit(None);
    drop(host);
    drop(again);
    allocator::clear_cache();
    allocator::record_history(None);
    let _unrecorded = block(&runtime, KIB, Device::Cpu).unwrap();

    let (g, h, k) = (rounded(8 * KIB), rounded(100), rounded(KIB));
    let segment = SMALL_SEGMENT;
    let events: Vec<(Action, Device, u64, &str)> = allocator::history()
        .iter()
        .map(|e| (e.action, e.device, e.bytes, e.op))
        .collect();
    use Action::*;
    let op = "cachingAllocatorAlloc";
    assert_eq!(
        events,
        vec![
            (SegmentAlloc, Device::Gpu, segment, op),
            (Alloc, Device::Gpu, g, op),
            (SegmentAlloc, Device::Cpu, h, op),
            (Alloc, Device::Cpu, h, op),
            (FreeRequested, Device::Gpu, g, op),
            (FreeCompleted, Device::Gpu, g, op),
            (CacheHit, Device::Gpu, g, op),
            (Alloc, Device::Gpu, g, op),
            (Oom, Device::Cpu, k, op),
            (FreeRequested, Device::Cpu, h, op),
            (FreeCompleted, Device::Cpu, h, op),
            (SegmentFree, Device::Cpu, h, op),
            (FreeRequested, Device::Gpu, g, op),
            (FreeCompleted, Device::Gpu, g, op),
            (SegmentFree, Device::Gpu, segment, "data"),
        ]
    );
}

#[test]
fn submits_are_timed_by_gpu_timestamps_where_the_adapter_has_them() {
    let runtime = gpu_runtime();
    let gpu = runtime.gpu().unwrap();
    // Submits are timed while a page samples the monitor.
    assert!(!gpu.monitor.is_watched());
    gpu.monitor.watch();
    let x = tandem::ops::random::uniform(&[256, 256], [3, 1], 0.0, 1.0, Device::Gpu).unwrap();
    let y = tandem::ops::matmul(&x, &x, Device::Gpu).unwrap();
    pollster::block_on(runtime.evaluate(&[y])).unwrap();
    confirm(&runtime);
    // Mapping callbacks run as the device is polled; a later synchronize polls it again.
    confirm(&runtime);
    let busy = gpu.monitor.gpu.busy_fraction(60_000.0);
    assert!(busy > 0.0, "the matmul's submit was not recorded");
    match &gpu.timestamps {
        Some(_) => assert!(gpu.monitor.gpu.timed_spans() > 0, "no submit was timed"),
        None => assert_eq!(gpu.monitor.gpu.timed_spans(), 0),
    }
}

/// Blocks are carved from a buffer before the GPU confirms that it created it: nothing that
/// uses them is submitted before the report, and a buffer it could not create takes every
/// block carved from it, which are never reused.
#[test]
fn blocks_of_a_buffer_the_gpu_has_yet_to_confirm_are_handed_out_and_lost_together() {
    let runtime = gpu_runtime();
    allocator::clear_cache();
    let early = block(&runtime, 8 * KIB, Device::Gpu).unwrap();
    drop(early);
    assert_eq!(cache_bytes(), SMALL_SEGMENT, "its buffer is kept");
    let hits = stats().num_cache_hits;
    let meanwhile = block(&runtime, 8 * KIB, Device::Gpu).unwrap();
    assert_eq!(stats().num_cache_hits, hits + 1, "carved before the report");
    drop(meanwhile);
    confirm(&runtime);
    allocator::clear_cache();

    // A buffer the GPU could not create: its idle blocks' buffer is destroyed when the
    // report comes, and one still held returns nothing to the cache.
    let reserved = stats().reserved_bytes.get(Scope::Gpu).current;
    tandem::memory::device_errors::fail_next_buffers_for_tests(1);
    let failed = block(&runtime, 8 * KIB, Device::Gpu).unwrap();
    let sibling = block(&runtime, 8 * KIB, Device::Gpu).unwrap();
    drop(failed);
    let _ = pollster::block_on(runtime.synchronize());
    assert_eq!(
        stats().reserved_bytes.get(Scope::Gpu).current,
        reserved + SMALL_SEGMENT
    );
    let fresh = block(&runtime, 8 * KIB, Device::Gpu).unwrap();
    assert_eq!(
        stats().reserved_bytes.get(Scope::Gpu).current,
        reserved + 2 * SMALL_SEGMENT,
        "nothing more is carved from the lost buffer"
    );
    drop(sibling);
    assert_eq!(
        stats().reserved_bytes.get(Scope::Gpu).current,
        reserved + SMALL_SEGMENT,
        "the lost buffer was destroyed with its last block"
    );
    drop(fresh);
}
