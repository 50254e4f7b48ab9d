//! Random programs of overlapping calls in the browser: ops across streams, reads and
//! evaluates started without awaiting and awaited in a random order, disposes, memory and
//! cache limits in between (`interleave_model`), and now and then a buffer that the GPU
//! reports it could not create. Every read must equal the same program run in order.
//!
//! The number of programs and the seed come from `TANDEM_INTERLEAVE_PROGRAMS` and
//! `TANDEM_INTERLEAVE_SEED` at build time (`cargo xtask interleave` sets them).
#![cfg(target_arch = "wasm32")]

use js_sys::{Float32Array, Int32Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

use tandem::js::memory::{clear_cache, memory_snapshot, set_cache_limit, set_memory_limit};
use tandem::js::ndarray::NdArray;
use tandem::js::ops::{
    abs, add, array, astype, maximum, minimum, multiply, neg, subtract, sum, transpose,
};
use tandem::js::stream::{evaluate, new_stream, synchronize};
use tandem::memory::device_errors::fail_next_buffers_for_tests;

wasm_bindgen_test_configure!(run_in_browser);

mod interleave_model;
mod web_common;

use interleave_model::{Binary, DType, Program, Rng, STREAMS, Step, Unary, Value};
use web_common::*;

/// One program's arrays and started promises, as a page holds them.
struct Page {
    streams: Vec<JsValue>,
    arrays: Vec<Option<NdArray>>,
    /// Each started promise, with the array a read reads.
    promises: Vec<Option<(js_sys::Promise, Option<usize>)>>,
    /// Active bytes when the program started; limits are set above it.
    base: f64,
    /// Decides when the GPU is made to fail a buffer.
    rng: Rng,
}

impl Page {
    fn new(seed: u64) -> Page {
        let streams = STREAMS
            .iter()
            .map(|s| match *s {
                "newStream(cpu)" => new_stream("cpu").unwrap().into(),
                "newStream(gpu)" => new_stream("gpu").unwrap().into(),
                name => JsValue::from(name),
            })
            .collect();
        Page {
            streams,
            arrays: Vec::new(),
            promises: Vec::new(),
            base: stat("active_bytes.all.current"),
            rng: Rng::new(seed),
        }
    }

    fn opts(&self, stream: usize) -> JsValue {
        options(&[("stream", self.streams[stream].clone())])
    }

    /// An extra handle for passing array `i` as a JS value; disposed after the call.
    fn handle(&self, i: usize) -> JsValue {
        js_value(
            self.arrays[i]
                .as_ref()
                .expect("the generator uses live arrays"),
        )
    }

    fn array(&self, i: usize) -> &NdArray {
        self.arrays[i]
            .as_ref()
            .expect("the generator uses live arrays")
    }

    /// Runs one step; `Err` describes a wrong value or an untyped error.
    async fn step(&mut self, step: &Step, values: &[Value]) -> Result<(), String> {
        if self.rng.chance(4) {
            // The GPU reports that it could not create the next buffer, as its error scope
            // would: the batch that uses it is discarded and its nodes run again, whoever
            // recorded them.
            fail_next_buffers_for_tests(1);
        }
        let made = match step {
            // `array` takes no stream: its data moves to whichever op reads it.
            Step::Array {
                values,
                shape,
                stream: _,
            } => {
                let data: Vec<f32> = values.iter().map(|&v| v as f32).collect();
                let shape = floats(&[shape[0] as f64, shape[1] as f64]);
                let opts = options(&[("shape", shape)]);
                Some(array(Float32Array::from(&data[..]).into(), opts))
            }
            Step::Unary { op, x, stream } => Some(match op {
                Unary::Negative => neg(self.array(*x), self.opts(*stream)),
                Unary::Abs => abs(self.array(*x), self.opts(*stream)),
            }),
            Step::Binary { op, a, b, stream } => {
                let f: BinaryFn = match op {
                    Binary::Add => add,
                    Binary::Subtract => subtract,
                    Binary::Multiply => multiply,
                    Binary::Maximum => maximum,
                    Binary::Minimum => minimum,
                };
                let (a, b) = (self.handle(*a), self.handle(*b));
                let result = f(a.clone(), b.clone(), self.opts(*stream));
                dispose(&a);
                dispose(&b);
                Some(result)
            }
            Step::Sum { x, axis, stream } => {
                let opts = options(&[
                    ("axis", (*axis as u32).into()),
                    ("keepdims", true.into()),
                    ("stream", self.streams[*stream].clone()),
                ]);
                Some(sum(self.array(*x), opts))
            }
            Step::AsType { x, dtype, stream } => {
                let name = match dtype {
                    DType::Float32 => "float32",
                    DType::Int32 => "int32",
                };
                Some(astype(self.array(*x), name, self.opts(*stream)))
            }
            Step::Transpose { x, stream } => Some(transpose(
                self.array(*x),
                JsValue::UNDEFINED,
                self.opts(*stream),
            )),
            Step::Evaluate(xs) => {
                let handles: Vec<JsValue> = xs.iter().map(|&x| self.handle(x)).collect();
                let promise = evaluate(handles.clone()).map_err(|e| describe(&e))?;
                handles.iter().for_each(dispose);
                self.promises.push(Some((promise, None)));
                None
            }
            Step::Read(x) => {
                self.promises
                    .push(Some((self.array(*x).to_array(), Some(*x))));
                None
            }
            Step::Dispose(x) => {
                self.array(*x).dispose();
                self.arrays[*x] = None;
                None
            }
            Step::Await(n) => {
                let (promise, read) = self.promises[*n].take().expect("awaited once");
                check(settle(promise).await, read.map(|x| &values[x]))?;
                None
            }
            Step::SetMemoryLimit(limit) => {
                let limit = limit.map_or(f64::INFINITY, |l| self.base + l as f64);
                set_memory_limit(limit).unwrap();
                None
            }
            Step::SetCacheLimit(limit) => {
                set_cache_limit(*limit as f64).unwrap();
                None
            }
            Step::ClearCache => {
                clear_cache();
                None
            }
        };
        let made = match made {
            Some(Err(err)) if describe(&err).starts_with("MemoryLimitError") => {
                // Data past the limit: the page lifts the limit and makes it again.
                set_memory_limit(f64::INFINITY).unwrap();
                return Box::pin(self.step(step, values)).await;
            }
            other => other,
        };
        if let Some(result) = made {
            let array = result.map_err(|e| format!("an op threw {}", describe(&e)))?;
            self.arrays.push(Some(array));
        }
        Ok(())
    }

    fn dispose_all(&mut self) {
        for array in self.arrays.drain(..).flatten() {
            array.dispose();
        }
    }
}

thread_local! {
    /// Reads compared and `MemoryLimitError`s met, for the summary line.
    static TALLY: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
}

fn tally(reads: u64, limit_errors: u64) {
    TALLY.with(|t| {
        let (r, l) = t.get();
        t.set((r + reads, l + limit_errors));
    });
}

/// A settled promise against the reference: a read gives exactly the reference values; a
/// failure may only be a `MemoryLimitError` (a limit may bite where the sequential run's
/// order did not).
fn check(outcome: Result<JsValue, JsValue>, expected: Option<&Value>) -> Result<(), String> {
    let value = match outcome {
        Err(err) => {
            let is_limit = err
                .dyn_ref::<js_sys::Error>()
                .is_some_and(|e| e.name() == "MemoryLimitError");
            return if is_limit {
                tally(0, 1);
                Ok(())
            } else {
                Err(format!("a call rejected with {}", describe(&err)))
            };
        }
        Ok(value) => value,
    };
    let Some(expected) = expected else {
        return Ok(());
    };
    tally(1, 0);
    let got: Vec<f64> = match expected.dtype {
        DType::Float32 => Float32Array::from(value)
            .to_vec()
            .into_iter()
            .map(f64::from)
            .collect(),
        DType::Int32 => Int32Array::from(value)
            .to_vec()
            .into_iter()
            .map(f64::from)
            .collect(),
    };
    match interleave_model::first_difference(&got, &expected.values) {
        Some(difference) => Err(format!(
            "a read of a {:?} array of shape {:?}: {difference}",
            expected.dtype, expected.shape
        )),
        None => Ok(()),
    }
}

/// Runs `program` and checks every read and the memory invariants after it settles.
async fn run_program(program: &Program) -> Result<(), String> {
    let values = interleave_model::references(program);
    let active_before = stat("active_bytes.all.current");
    let blocks_before = active_blocks();
    let mut page = Page::new(program.steps.len() as u64);
    let mut outcome = Ok(());
    for step in &program.steps {
        outcome = page.step(step, &values).await;
        if outcome.is_err() {
            break;
        }
    }
    // Settle whatever a failure left started.
    for (promise, _) in page.promises.drain(..).flatten() {
        let _ = settle(promise).await;
    }
    page.dispose_all();
    set_memory_limit(f64::INFINITY).unwrap();
    set_cache_limit(1073741824.0).unwrap();
    fail_next_buffers_for_tests(0);
    // A buffer the GPU failed to create may still be unconfirmed: settling meets it and
    // reports it (a second failure in a row), and the next try finds none.
    if settle(synchronize(JsValue::UNDEFINED).unwrap())
        .await
        .is_err()
    {
        settle(synchronize(JsValue::UNDEFINED).unwrap())
            .await
            .map_err(|e| format!("synchronize failed: {}", describe(&e)))?;
    }
    outcome?;
    let active = stat("active_bytes.all.current");
    if active != active_before {
        return Err(format!(
            "active bytes {active} after the program, {active_before} before; active before: \
             {blocks_before}; active now: {}",
            active_blocks()
        ));
    }
    for key in ["active_bytes", "allocated_bytes", "allocation"] {
        let current = stat(&format!("{key}.all.current"));
        let net = stat(&format!("{key}.all.allocated")) - stat(&format!("{key}.all.freed"));
        if current != net {
            return Err(format!(
                "{key}: current {current} but allocated - freed = {net}"
            ));
        }
    }
    Ok(())
}

/// The active blocks, for a failure message: `device usage size op`.
fn active_blocks() -> String {
    let blocks: Vec<String> = memory_snapshot()
        .iter()
        .filter(|b| get(b, "state").as_string().as_deref() == Some("active"))
        .map(|b| {
            let field = |k| format!("{:?}", get(&b, k));
            format!(
                "{} {} {} {}",
                field("device"),
                field("usage"),
                field("size"),
                field("op")
            )
        })
        .collect();
    blocks.join("; ")
}

fn seed() -> u64 {
    option_env!("TANDEM_INTERLEAVE_SEED")
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x7A4D_E11A)
}

fn program_count() -> usize {
    option_env!("TANDEM_INTERLEAVE_PROGRAMS")
        .and_then(|s| s.parse().ok())
        .unwrap_or(200)
}

#[wasm_bindgen_test]
async fn random_interleavings_give_the_sequential_values() {
    runtime_info().await;
    let (seed, count) = (seed(), program_count());
    web_sys::console::log_1(&format!("interleave: {count} programs from seed {seed}").into());
    let mut rng = Rng::new(seed);
    for index in 0..count {
        let len = 10 + rng.below(50);
        let program = interleave_model::generate(&mut rng, len);
        let Err(first) = run_program(&program).await else {
            continue;
        };
        let mut shrunk = program.clone();
        let mut tries = 0;
        // Re-running is async, so shrink by hand: drop one step at a time while it fails.
        let mut i = shrunk.steps.len();
        while i > 0 && tries < 400 {
            i -= 1;
            tries += 1;
            let Some(candidate) = interleave_model::without(&shrunk, i) else {
                continue;
            };
            if run_program(&candidate).await.is_err() {
                shrunk = candidate;
                i = i.min(shrunk.steps.len());
            }
        }
        panic!(
            "program {index} of seed {seed} failed: {first}\nA shorter repro ({} of {} steps; \
             failures can depend on state earlier programs left):\n{}",
            shrunk.steps.len(),
            program.steps.len(),
            interleave_model::to_js(&shrunk)
        );
    }
    web_sys::console::log_1(
        &format!(
            "interleave: {count} programs from seed {seed} passed: {} reads compared, {} \
             MemoryLimitErrors met",
            TALLY.with(|t| t.get().0),
            TALLY.with(|t| t.get().1)
        )
        .into(),
    );
}
