//! Soak on Vulkan (Mesa lavapipe in CI): 100,000 ops across both devices with periodic cache
//! clears, memory and cache limit changes, and random disposes. Every value is checked against
//! a host model, memory stays bounded throughout, and nothing is left at the end. The browser
//! runs a shorter version in `web_soak.rs`.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{Rng, gpu_runtime};
use tandem::graph::primitive::{BinaryOp, UnaryOp};
use tandem::memory::{Scope, allocator, stats};
use tandem::{Array, Device, Error, ops};

const OPS: usize = 100_000;
const SLOTS: usize = 12;
const LEN: usize = 256;
/// Ops between evaluations; the graph between them stays small.
const ROUND: usize = 50;

/// One op on the pool: the model applies the same op to host values.
fn step(rng: &mut Rng, pool: &mut [(Array, Vec<f32>)], device: Device) -> Result<(), Error> {
    let (i, j) = (
        rng.next_u32() as usize % SLOTS,
        rng.next_u32() as usize % SLOTS,
    );
    let (a, model_a) = (&pool[i].0, &pool[i].1);
    let (b, model_b) = (&pool[j].0, &pool[j].1);
    let (out, model): (Array, Vec<f32>) = match rng.next_u32() % 5 {
        0 => (
            ops::binary(BinaryOp::Add, a, b, device)?,
            zip(model_a, model_b, |x, y| x + y),
        ),
        1 => {
            let half = Array::from_f32(&[0.5], &[])?;
            (
                ops::binary(BinaryOp::Multiply, a, &half, device)?,
                model_a.iter().map(|x| x * 0.5).collect(),
            )
        }
        2 => (
            ops::unary(UnaryOp::Tanh, a, device)?,
            model_a.iter().map(|x| x.tanh()).collect(),
        ),
        3 => (
            ops::unary(UnaryOp::Neg, a, device)?,
            model_a.iter().map(|x| -x).collect(),
        ),
        _ => (
            ops::binary(BinaryOp::Maximum, a, b, device)?,
            zip(model_a, model_b, f32::max),
        ),
    };
    // The old array at i is dropped: a random dispose, possibly of an input still pending.
    pool[i] = (out, model);
    Ok(())
}

fn zip(a: &[f32], b: &[f32], f: impl Fn(f32, f32) -> f32) -> Vec<f32> {
    a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect()
}

fn fresh(rng: &mut Rng) -> (Array, Vec<f32>) {
    let values: Vec<f32> = (0..LEN).map(|_| rng.uniform(-2.0, 2.0)).collect();
    (Array::from_f32(&values, &[LEN]).unwrap(), values)
}

fn active() -> u64 {
    stats().active_bytes.get(Scope::All).current
}

fn assert_close(got: &[f32], expected: &[f32], what: &str) {
    for (k, (g, e)) in got.iter().zip(expected).enumerate() {
        assert!(
            (g - e).abs() <= 1e-4 + 1e-4 * e.abs(),
            "{what}: element {k} is {g}, the model says {e}"
        );
    }
}

#[test]
fn a_hundred_thousand_ops_leave_no_bytes_behind() {
    let runtime = gpu_runtime();
    let base = active();
    let base_reserved = stats().reserved_bytes.get(Scope::All).current;
    let mut rng = Rng::new(2026);
    let mut pool: Vec<(Array, Vec<f32>)> = (0..SLOTS).map(|_| fresh(&mut rng)).collect();
    // Live arrays plus one round's intermediates, in 256-byte blocks: a generous bound that a
    // leak of one block per round would pass within a few hundred rounds.
    let bound = base + (SLOTS + ROUND) as u64 * 4096;
    let mut peak = 0;
    let mut limit_errors = 0;
    for round in 0..OPS / ROUND {
        let mut run_round = || -> Result<(), Error> {
            for _ in 0..ROUND {
                let device = if rng.next_u32().is_multiple_of(2) {
                    Device::Cpu
                } else {
                    Device::Gpu
                };
                step(&mut rng, &mut pool, device)?;
            }
            let arrays: Vec<Array> = pool.iter().map(|(a, _)| a.clone()).collect();
            pollster::block_on(runtime.evaluate(&arrays))
        };
        match run_round() {
            Ok(()) => {}
            // A tight limit may refuse a round: that is a typed error, and the pool starts
            // again without the limit.
            Err(Error::MemoryLimit(_)) => {
                limit_errors += 1;
                pool.clear();
                allocator::set_memory_limit(None);
                pool = (0..SLOTS).map(|_| fresh(&mut rng)).collect();
            }
            Err(other) => panic!("round {round}: {other:?}"),
        }
        peak = peak.max(active());
        assert!(
            active() <= bound,
            "round {round}: {} active bytes",
            active()
        );
        if round % 20 == 0 {
            let slot = rng.next_u32() as usize % SLOTS;
            let got = pollster::block_on(runtime.read_f32(&pool[slot].0)).unwrap();
            assert_close(&got, &pool[slot].1, &format!("round {round}, slot {slot}"));
        }
        match round % 50 {
            10 => {
                allocator::clear_cache();
            }
            20 => {
                let room = 2048 + u64::from(rng.next_u32() % 64) * 1024;
                allocator::set_memory_limit(Some(active() + room));
            }
            30 => {
                allocator::set_memory_limit(None);
            }
            40 => {
                allocator::set_cache_limit(u64::from(rng.next_u32() % 4) * 16 * 1024);
            }
            _ => {}
        }
    }
    allocator::set_memory_limit(None);
    for (slot, (array, model)) in pool.iter().enumerate() {
        let got = pollster::block_on(runtime.read_f32(array)).unwrap();
        assert_close(&got, model, &format!("the end, slot {slot}"));
    }
    drop(pool);
    pollster::block_on(runtime.synchronize()).unwrap();
    assert_eq!(
        active(),
        base,
        "every array's bytes are released (peak {peak})"
    );
    allocator::clear_cache();
    assert_eq!(
        stats().reserved_bytes.get(Scope::All).current,
        base_reserved,
        "every buffer is returned once the cache is cleared"
    );
    eprintln!("soak: peak {peak} active bytes, {limit_errors} rounds refused by the limit");
}
