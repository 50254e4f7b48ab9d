//! Concurrency in the browser: calls started without awaiting, awaited in any order, give the
//! values of the same calls awaited in program order. First the repros that once failed, in
//! the form a page writes them; then random programs of overlapping calls across streams,
//! with disposes and memory and cache limits in between (`interleave_model`), and now and then
//! a buffer that the GPU reports it could not create.
//!
//! The number of programs and the seed come from `TANDEM_INTERLEAVE_PROGRAMS` and
//! `TANDEM_INTERLEAVE_SEED` at build time (`cargo xtask interleave` sets them).
#![cfg(target_arch = "wasm32")]

use js_sys::{Float32Array, Int32Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

use tandem::js::memory::{
    clear_cache, memory_snapshot, memory_stats, set_cache_limit, set_memory_limit,
};
use tandem::js::ndarray::NdArray;
use tandem::js::ops::{
    abs, add, array, astype, exp, maximum, minimum, multiply, neg, subtract, sum, transpose,
};
use tandem::js::random::random_uniform;
use tandem::js::stream::{evaluate, new_stream, synchronize};
use tandem::memory::device_errors::fail_next_buffers_for_tests;

wasm_bindgen_test_configure!(run_in_browser);

mod interleave_model;
mod web_common;

use interleave_model::{Binary, DType, Program, Rng, STREAMS, Step, Unary, Value};
use web_common::*;

fn stat(key: &str) -> f64 {
    get(&memory_stats(), key)
        .as_f64()
        .unwrap_or_else(|| panic!("memoryStats() has no key {key}"))
}

fn float_array(values: &[f32], stream: JsValue) -> NdArray {
    let data = Float32Array::from(values);
    array(data.into(), options(&[("stream", stream)])).unwrap()
}

fn on(stream: &str) -> JsValue {
    options(&[("stream", stream.into())])
}

async fn settle(promise: js_sys::Promise) -> Result<JsValue, JsValue> {
    JsFuture::from(promise).await
}

async fn floats_of(promise: js_sys::Promise) -> Vec<f32> {
    let value = settle(promise).await.unwrap();
    value.dyn_into::<Float32Array>().unwrap().to_vec()
}

// Arrays go to the JS functions as extra handles, which are disposed at once: left to the
// garbage collector, they would free memory in the middle of a later program's accounting.

fn start_evaluate(arrays: &[&NdArray]) -> js_sys::Promise {
    let handles: Vec<JsValue> = arrays.iter().map(|a| js_value(a)).collect();
    let promise = evaluate(handles.clone()).unwrap();
    handles.iter().for_each(dispose);
    promise
}

type BinaryFn = fn(JsValue, JsValue, JsValue) -> Result<NdArray, JsValue>;

fn binary(f: BinaryFn, a: &NdArray, b: &NdArray, opts: JsValue) -> NdArray {
    let (a, b) = (js_value(a), js_value(b));
    let result = f(a.clone(), b.clone(), opts).unwrap();
    dispose(&a);
    dispose(&b);
    result
}

#[wasm_bindgen_test]
async fn a_read_during_an_unawaited_evaluate_waits_for_its_writes() {
    runtime_info().await;
    for input_stream in ["cpu", "gpu"] {
        // Any earlier GPU read, as in the report.
        let warm = add(
            float_array(&[1.0, 2.0], on("cpu")).into(),
            1.into(),
            on("gpu"),
        )
        .unwrap();
        floats_of(warm.to_array()).await;
        let x = float_array(&[1.0, 2.0, 3.0, 4.0], on(input_stream));
        let y = binary(add, &x, &x, on("gpu"));
        let pending = start_evaluate(&[&y]);
        assert_eq!(floats_of(y.to_array()).await, vec![2.0, 4.0, 6.0, 8.0]);
        assert_eq!(
            floats_of(y.to_array()).await,
            vec![2.0, 4.0, 6.0, 8.0],
            "read again"
        );
        settle(pending).await.unwrap();
    }
}

#[wasm_bindgen_test]
async fn reads_in_one_promise_all_during_an_evaluate_are_right() {
    runtime_info().await;
    let values: Vec<f32> = (0..1000).map(|i| (i % 17) as f32 * 0.25).collect();
    let x = float_array(&values, on("gpu"));
    let e = exp(&x, on("gpu")).unwrap();
    let s = sum(&x, on("gpu")).unwrap();
    let n = neg(&x, on("cpu")).unwrap();
    let pending = start_evaluate(&[&x, &e, &s, &n]);
    let reads = js_sys::Array::of4(&x.to_array(), &e.to_array(), &s.to_array(), &n.to_array());
    let all = settle(js_sys::Promise::all(&reads)).await.unwrap();
    let all: js_sys::Array = all.unchecked_into();
    let got = |i: u32| all.get(i).dyn_into::<Float32Array>().unwrap().to_vec();
    assert_eq!(got(0), values);
    for (g, v) in got(1).iter().zip(&values) {
        assert!((g - v.exp()).abs() <= 1e-5 * v.exp(), "exp({v}) = {g}");
    }
    assert_eq!(got(2), vec![values.iter().sum::<f32>()]);
    assert_eq!(got(3), values.iter().map(|v| -v).collect::<Vec<_>>());
    settle(pending).await.unwrap();
}

#[wasm_bindgen_test]
async fn fire_and_forget_evaluates_on_four_streams_then_reads_backwards() {
    runtime_info().await;
    let streams = [
        on("gpu"),
        on("cpu"),
        options(&[("stream", new_stream("gpu").unwrap().into())]),
        options(&[("stream", new_stream("cpu").unwrap().into())]),
    ];
    let one = float_array(&[1.0; 64], on("cpu"));
    let mut steps = vec![float_array(&[0.0; 64], on("cpu"))];
    let mut evaluates = Vec::new();
    for i in 0..40 {
        let next = binary(add, &steps[i], &one, streams[i % 4].clone());
        // Fire and forget, as a page that never awaits its evaluates.
        evaluates.push(start_evaluate(&[&next]));
        steps.push(next);
    }
    for (i, step) in steps.iter().enumerate().rev() {
        assert_eq!(
            floats_of(step.to_array()).await,
            vec![i as f32; 64],
            "step {i}"
        );
    }
    // Only so that the next test starts with nothing of this one in flight.
    for evaluate in evaluates {
        settle(evaluate).await.unwrap();
    }
}

#[wasm_bindgen_test]
async fn a_reduction_after_astype_with_the_cast_read_in_flight_under_a_limit() {
    runtime_info().await;
    // Disposed GPU arrays of other values in the cache, and a limit that makes allocations
    // trim it and retry.
    for _ in 0..8 {
        let junk = random_uniform(floats(&[4096.0]), on("gpu")).unwrap();
        settle(start_evaluate(&[&junk])).await.unwrap();
        junk.dispose();
    }
    let previous = set_memory_limit(stat("active_bytes.all.current") + 256.0 * 1024.0).unwrap();
    let values: Vec<f32> = (0..4096).map(|i| ((i * 7) % 11) as f32 - 5.2).collect();
    let expected: i32 = values.iter().map(|&v| v as i32).sum();
    let x = float_array(&values, on("gpu"));
    let cast = astype(&x, "int32", on("gpu")).unwrap();
    let cast_read = cast.to_array();
    let total = sum(&cast, on("gpu")).unwrap();
    let got = settle(total.to_array()).await.unwrap();
    assert_eq!(Int32Array::from(got).to_vec(), vec![expected]);
    let cast_values = Int32Array::from(settle(cast_read).await.unwrap()).to_vec();
    assert_eq!(cast_values.iter().sum::<i32>(), expected);
    set_memory_limit(previous).unwrap();
}

#[wasm_bindgen_test]
async fn a_memory_limit_error_leaves_live_arrays_readable() {
    runtime_info().await;
    let x = float_array(&[10.0; 1024], on("cpu"));
    let held = exp(&x, on("gpu")).unwrap();
    let expected = floats_of(held.to_array()).await;
    let previous = set_memory_limit(stat("active_bytes.all.current") + 64.0 * 1024.0).unwrap();
    let big = random_uniform(floats(&[1024.0, 1024.0]), on("gpu")).unwrap();
    let failing = start_evaluate(&[&big]);
    let read = held.to_array();
    let err = settle(failing).await.unwrap_err();
    assert_eq!(
        String::from(err.unchecked_ref::<js_sys::Error>().name()),
        "MemoryLimitError"
    );
    assert_eq!(floats_of(read).await, expected);
    assert_eq!(floats_of(held.to_array()).await, expected);
    set_memory_limit(previous).unwrap();
    big.dispose();
}

#[wasm_bindgen_test]
async fn readers_of_one_array_share_one_readback() {
    runtime_info().await;
    let x = float_array(&[3.0; 256], on("cpu"));
    let y = binary(multiply, &x, &x, on("gpu"));
    let before = stat("transfer_bytes.gpu_to_cpu");
    let reads = js_sys::Array::of3(&y.to_array(), &y.tolist(), &y.to_array());
    let all: js_sys::Array = settle(js_sys::Promise::all(&reads))
        .await
        .unwrap()
        .unchecked_into();
    assert_eq!(Float32Array::from(all.get(0)).to_vec(), vec![9.0; 256]);
    assert_eq!(Float32Array::from(all.get(2)).to_vec(), vec![9.0; 256]);
    assert_eq!(js_sys::Array::from(&all.get(1)).length(), 256);
    assert_eq!(
        stat("transfer_bytes.gpu_to_cpu") - before,
        1024.0,
        "three readers, one copy to the host"
    );
}

#[wasm_bindgen_test]
async fn dispose_and_cache_trims_during_reads_leave_every_value_intact() {
    runtime_info().await;
    let active = stat("active_bytes.all.current");
    let x = float_array(&[2.0; 4096], on("cpu"));
    let y = exp(&x, on("gpu")).unwrap();
    let z = binary(add, &y, &x, on("gpu"));
    let expected: Vec<f32> = floats_of(z.to_array()).await;
    let w = binary(multiply, &z, &x, on("gpu"));
    // Reads started, then their arrays disposed and the cache emptied and disabled while
    // the copies are in flight.
    let read_w = w.to_array();
    let read_z = z.to_array();
    w.dispose();
    z.dispose();
    clear_cache();
    let previous = set_cache_limit(0.0).unwrap();
    let doubled: Vec<f32> = expected.iter().map(|v| v * 2.0).collect();
    assert_eq!(floats_of(read_w).await, doubled);
    assert_eq!(floats_of(read_z).await, expected);
    set_cache_limit(previous).unwrap();
    x.dispose();
    y.dispose();
    settle(synchronize(JsValue::UNDEFINED).unwrap())
        .await
        .unwrap();
    assert_eq!(stat("active_bytes.all.current"), active, "all of it freed");
}

#[wasm_bindgen_test]
async fn a_buffer_the_gpu_failed_to_create_is_never_seen_by_another_call() {
    runtime_info().await;
    let x = float_array(&[1.5; 1000], on("cpu"));
    let warm = binary(add, &x, &x, on("gpu"));
    floats_of(warm.to_array()).await;
    // The next buffer created is y's, reported lost at once; z's report takes a while. A
    // call that uses y meanwhile must not meet the lost buffer: the batch is discarded first
    // and every node in it runs again.
    clear_cache();
    fail_next_buffers_for_tests(1);
    let y = binary(add, &x, &x, on("gpu"));
    let z = exp(&y, on("gpu")).unwrap();
    let evaluating = start_evaluate(&[&z]);
    let w = binary(multiply, &y, &x, on("gpu"));
    let read = w.to_array();
    settle(evaluating).await.unwrap();
    assert_eq!(floats_of(read).await, vec![4.5; 1000]);
    assert_eq!(floats_of(y.to_array()).await, vec![3.0; 1000]);
    for v in floats_of(z.to_array()).await {
        assert!((v - 3f32.exp()).abs() <= 1e-5 * 3f32.exp(), "{v}");
    }
}

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
            Step::Array {
                values,
                shape,
                stream,
            } => {
                let data: Vec<f32> = values.iter().map(|&v| v as f32).collect();
                let shape = floats(&[shape[0] as f64, shape[1] as f64]);
                let opts = options(&[("shape", shape), ("stream", self.streams[*stream].clone())]);
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

fn dispose(value: &JsValue) {
    let method: js_sys::Function = js_sys::Reflect::get(value, &"dispose".into())
        .unwrap()
        .unchecked_into();
    method.call0(value).unwrap();
}

fn describe(err: &JsValue) -> String {
    match err.dyn_ref::<js_sys::Error>() {
        Some(e) => format!("{}: {}", String::from(e.name()), String::from(e.message())),
        None => format!("{err:?}"),
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
