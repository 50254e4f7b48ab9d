//! Soak in the browser (SwiftShader): 100,000 ops through the JS API across both devices, with
//! periodic `clearCache`, memory and cache limit changes and disposes of arrays whose work may
//! still be pending. Values are checked against a host model, memory stays bounded, and the
//! page ends with no active bytes beyond where it started. The native soak is `soak.rs`.

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

use tandem::js::functions::{add, array, maximum, multiply, neg, tanh};
use tandem::js::memory::{clear_cache, get_active_memory, set_cache_limit, set_memory_limit};
use tandem::js::ndarray::NdArray;
use tandem::js::stream::{evaluate, synchronize};

use crate::common::*;

const OPS: usize = 100_000;
const SLOTS: usize = 12;
const LEN: usize = 256;
const ROUND: usize = 50;

struct Slot {
    array: NdArray,
    model: Vec<f32>,
}

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 32) as u32
    }

    fn below(&mut self, n: usize) -> usize {
        self.next() as usize % n
    }
}

fn fresh(rng: &mut Lcg) -> Slot {
    let model: Vec<f32> = (0..LEN)
        .map(|_| rng.next() as f32 / 4294967296.0 * 4.0 - 2.0)
        .collect();
    let data = js_sys::Float32Array::from(&model[..]);
    Slot {
        array: array(data.into(), JsValue::UNDEFINED).unwrap(),
        model,
    }
}

/// One op through the JS functions, as a page calls them; the model does the same.
fn step(rng: &mut Lcg, pool: &mut [Slot], stream: JsValue) -> Result<(), JsValue> {
    let (i, j) = (rng.below(SLOTS), rng.below(SLOTS));
    let (a, b) = (js_value(&pool[i].array), js_value(&pool[j].array));
    let (ma, mb) = (&pool[i].model, &pool[j].model);
    let zip = |f: fn(f32, f32) -> f32| ma.iter().zip(mb).map(|(&x, &y)| f(x, y)).collect();
    let made = match rng.next() % 5 {
        0 => add(a.clone(), b.clone(), stream).map(|r| (r, zip(|x, y| x + y))),
        1 => multiply(a.clone(), 0.5.into(), stream)
            .map(|r| (r, ma.iter().map(|x| x * 0.5).collect())),
        2 => tanh(&pool[i].array, stream).map(|r| (r, ma.iter().map(|x| x.tanh()).collect())),
        3 => neg(&pool[i].array, stream).map(|r| (r, ma.iter().map(|x| -x).collect())),
        _ => maximum(a.clone(), b.clone(), stream).map(|r| (r, zip(f32::max))),
    };
    dispose(&a);
    dispose(&b);
    let (array, model) = made?;
    // The replaced array is disposed while its work may still be pending.
    pool[i].array.dispose();
    pool[i] = Slot { array, model };
    Ok(())
}

fn assert_close(got: &[f32], expected: &[f32], what: &str) {
    for (k, (g, e)) in got.iter().zip(expected).enumerate() {
        assert!(
            (g - e).abs() <= 1e-4 + 1e-4 * e.abs(),
            "{what}: element {k} is {g}, the model says {e}"
        );
    }
}

fn error_kind(err: &JsValue) -> String {
    err.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.name()))
        .unwrap_or_default()
}

#[wasm_bindgen_test]
async fn a_hundred_thousand_ops_through_the_js_api_leave_no_bytes_behind() {
    settled_runtime_info().await;
    let base = get_active_memory();
    let mut rng = Lcg(2026);
    let mut pool: Vec<Slot> = (0..SLOTS).map(|_| fresh(&mut rng)).collect();
    let bound = base + ((SLOTS + ROUND) * 4096) as f64;
    let mut refused = 0;
    for round in 0..OPS / ROUND {
        let mut outcome = Ok(());
        for _ in 0..ROUND {
            let stream = on(if rng.next().is_multiple_of(2) {
                "cpu"
            } else {
                "gpu"
            });
            outcome = step(&mut rng, &mut pool, stream);
            if outcome.is_err() {
                break;
            }
        }
        if outcome.is_ok() {
            let handles: Vec<JsValue> = pool.iter().map(|s| js_value(&s.array)).collect();
            outcome = JsFuture::from(evaluate(handles.clone()).unwrap())
                .await
                .map(|_| ());
            handles.iter().for_each(dispose);
        }
        if let Err(err) = outcome {
            // Only the limit may refuse a round; the pool then starts again without it.
            assert_eq!(
                error_kind(&err),
                "MemoryLimitError",
                "round {round}: {}",
                describe(&err)
            );
            refused += 1;
            pool.drain(..).for_each(|s| s.array.dispose());
            set_memory_limit(f64::INFINITY).unwrap();
            pool = (0..SLOTS).map(|_| fresh(&mut rng)).collect();
        }
        assert!(
            get_active_memory() <= bound,
            "round {round}: {} active bytes",
            get_active_memory()
        );
        if round % 100 == 0 {
            let slot = &pool[rng.below(SLOTS)];
            assert_close(
                &to_vec(&slot.array).await,
                &slot.model,
                &format!("round {round}"),
            );
        }
        match round % 50 {
            10 => clear_cache(),
            20 => {
                let room = 2048.0 + (rng.below(64) * 1024) as f64;
                set_memory_limit(get_active_memory() + room).unwrap();
            }
            30 => {
                set_memory_limit(f64::INFINITY).unwrap();
            }
            40 => {
                set_cache_limit((rng.below(4) * 16 * 1024) as f64).unwrap();
            }
            _ => {}
        }
    }
    set_memory_limit(f64::INFINITY).unwrap();
    for slot in &pool {
        assert_close(&to_vec(&slot.array).await, &slot.model, "the end");
    }
    pool.drain(..).for_each(|s| s.array.dispose());
    // A disposed array's GPU buffers are released once the work that may still read them is
    // known to be done; synchronize learns that.
    JsFuture::from(synchronize(JsValue::UNDEFINED).unwrap())
        .await
        .unwrap();
    assert_eq!(
        get_active_memory(),
        base,
        "every array's bytes are released ({refused} rounds refused)"
    );
}
