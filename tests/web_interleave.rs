//! Random programs of overlapping calls in the browser, over the whole JS API
//! (`web_programs`): ops at ranks 0 to 4 across streams, empty shapes, number operands,
//! views of another stream's arrays, reads and evaluates started without awaiting and awaited
//! in a random order, disposes, memory and cache limits in between, and now and then a buffer
//! that the GPU reports it could not create. Every read must equal the same program run in
//! order, each call awaited (the reference run that made the program). After each program,
//! every array is disposed: active bytes must be back where they started, and no block but
//! the runtime's own may be active.
//!
//! The number of programs and the seed come from `TANDEM_INTERLEAVE_PROGRAMS` and
//! `TANDEM_INTERLEAVE_SEED` at build time (`cargo xtask interleave` sets them).
#![cfg(target_arch = "wasm32")]

use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

use tandem::js::memory::{clear_cache, memory_snapshot, set_cache_limit, set_memory_limit};
use tandem::js::stream::{evaluate, synchronize};
use tandem::memory::device_errors::fail_next_buffers_for_tests;

wasm_bindgen_test_configure!(run_in_browser);

mod web_common;
mod web_programs;

use web_common::{describe, get, runtime_info, settle, stat};
use web_programs::generate::{Known, State, propose};
use web_programs::page::{Arrays, dispose, read, words_of};
use web_programs::{Program, Rng, Step};

/// What a reference step did.
enum Applied {
    /// The API refused the call: the step is dropped.
    Refused,
    /// The call made this many arrays.
    Made(usize),
    Done,
}

/// The reference run: each step at once, in order, awaited; no limits, no failed buffers.
struct Reference {
    page: Arrays,
    known: Vec<Option<Known>>,
    /// Per promise: a read's words, or `None` for an evaluate.
    reads: Vec<Option<Vec<u64>>>,
}

impl Reference {
    fn new() -> Reference {
        Reference {
            page: Arrays::new(),
            known: Vec::new(),
            reads: Vec::new(),
        }
    }

    async fn apply(&mut self, step: &Step) -> Result<Applied, String> {
        match step {
            Step::Make { call, .. } => match self.page.make(call) {
                Ok(made) => {
                    for array in &made {
                        self.known.push(Some(known(self.known.len(), array)));
                        self.page.arrays.push(Some(array.clone()));
                    }
                    Ok(Applied::Made(made.len()))
                }
                Err(err) if refusal(&err) => Ok(Applied::Refused),
                Err(err) => Err(format!("{} threw {}", call.op, describe(&err))),
            },
            Step::Evaluate(xs) => {
                let list: Vec<JsValue> = xs.iter().map(|&x| self.page.get(x).clone()).collect();
                let promise = evaluate(list).map_err(|e| describe(&e))?;
                settle(promise)
                    .await
                    .map_err(|e| format!("evaluate rejected with {}", describe(&e)))?;
                self.reads.push(None);
                Ok(Applied::Done)
            }
            Step::Read(x) => {
                let value = settle(read(self.page.get(*x)))
                    .await
                    .map_err(|e| format!("a read rejected with {}", describe(&e)))?;
                self.reads.push(Some(words_of(&value)));
                Ok(Applied::Done)
            }
            Step::Dispose(x) => {
                dispose(self.page.get(*x));
                self.page.arrays[*x] = None;
                self.known[*x] = None;
                Ok(Applied::Done)
            }
            _ => Ok(Applied::Done),
        }
    }

    fn live(&self) -> Vec<Known> {
        self.known.iter().flatten().cloned().collect()
    }

    /// Disposes every array and checks that the run released its memory.
    async fn finish(mut self, before: &Mark) -> Result<(), String> {
        for array in self.page.arrays.drain(..).flatten() {
            dispose(&array);
        }
        settle(synchronize(JsValue::UNDEFINED).unwrap())
            .await
            .map_err(|e| format!("synchronize failed: {}", describe(&e)))?;
        check_released(before, "reference run")
    }
}

/// An error the API throws for a call it refuses (bad shapes, dtypes or values): the
/// generator tries another. Anything else is a failure.
fn refusal(err: &JsValue) -> bool {
    let name = err
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.name()))
        .unwrap_or_default();
    matches!(name.as_str(), "ShapeError" | "DTypeError" | "ValueError")
}

fn known(index: usize, array: &JsValue) -> Known {
    let shape = js_sys::Array::from(&get(array, "shape"))
        .iter()
        .map(|d| d.as_f64().unwrap() as usize)
        .collect();
    Known {
        index,
        shape,
        dtype: get(array, "dtype").as_string().unwrap(),
    }
}

/// Makes a program of about `len` steps by running it (see `web_programs`), then reads every
/// live array and awaits every open promise; returns it with its reference reads.
async fn generate(rng: &mut Rng, len: usize) -> Result<(Program, Vec<Option<Vec<u64>>>), String> {
    let mut program = Program::default();
    match make(rng, len, &mut program).await {
        Ok(reads) => Ok((program, reads)),
        Err(e) => Err(format!("{e}\nThe program so far:\n{}", program.to_js())),
    }
}

async fn make(
    rng: &mut Rng,
    len: usize,
    program: &mut Program,
) -> Result<Vec<Option<Vec<u64>>>, String> {
    let before = mark();
    let mut reference = Reference::new();
    let big = rng.chance(10);
    let mut open: Vec<usize> = Vec::new();
    let mut tries = 0;
    while program.steps.len() < len && tries < 20 * len {
        tries += 1;
        let live = reference.live();
        let state = State {
            live: &live,
            next: reference.page.arrays.len(),
            open: &open,
            big,
        };
        for mut step in propose(rng, &state) {
            match reference.apply(&step).await? {
                Applied::Refused => break,
                Applied::Made(made) => {
                    if let Step::Make { count, .. } = &mut step {
                        *count = made;
                    }
                }
                Applied::Done => {}
            }
            note_promise(&step, &mut open, reference.reads.len());
            program.steps.push(step);
        }
    }
    for array in reference.live() {
        let step = Step::Read(array.index);
        reference.apply(&step).await?;
        note_promise(&step, &mut open, reference.reads.len());
        program.steps.push(step);
    }
    while !open.is_empty() {
        program
            .steps
            .push(Step::Await(open.swap_remove(rng.below(open.len()))));
    }
    let reads = std::mem::take(&mut reference.reads);
    reference.finish(&before).await?;
    Ok(reads)
}

fn note_promise(step: &Step, open: &mut Vec<usize>, promises: usize) {
    match step {
        Step::Evaluate(_) | Step::Read(_) => open.push(promises - 1),
        Step::Await(n) => open.retain(|p| p != n),
        _ => {}
    }
}

/// The reference reads of a program already made (a shrunk one), or why it cannot run.
/// A failing reference run counts as a failure of the program; a refused call means the
/// shrunk program cannot run at all (`Ok(None)`).
async fn reference_of(program: &Program) -> Result<Option<Vec<Option<Vec<u64>>>>, String> {
    let before = mark();
    let mut reference = Reference::new();
    let mut refused = false;
    for step in &program.steps {
        if let Applied::Refused = reference.apply(step).await? {
            refused = true;
            break;
        }
    }
    let reads = std::mem::take(&mut reference.reads);
    reference.finish(&before).await?;
    Ok((!refused).then_some(reads))
}

/// The interleaved run: calls started as the program says, promises awaited when it says.
struct Page {
    arrays: Arrays,
    promises: Vec<Option<(js_sys::Promise, bool)>>,
    /// Active bytes when the program started; limits are set above it.
    base: f64,
}

impl Page {
    fn new() -> Page {
        Page {
            arrays: Arrays::new(),
            promises: Vec::new(),
            base: stat("active_bytes.all.current"),
        }
    }

    /// Runs one step; `Err` describes a wrong value or an untyped error.
    async fn step(&mut self, step: &Step, reads: &[Option<Vec<u64>>]) -> Result<(), String> {
        match step {
            Step::Make { call, .. } => {
                let made = match self.arrays.make(call) {
                    Err(err) if error_name(&err) == "MemoryLimitError" => {
                        // Data past the limit: the page lifts the limit and makes it again.
                        set_memory_limit(f64::INFINITY).unwrap();
                        self.arrays.make(call)
                    }
                    other => other,
                };
                let made = made.map_err(|e| format!("{} threw {}", call.op, describe(&e)))?;
                self.arrays.arrays.extend(made.into_iter().map(Some));
            }
            Step::Evaluate(xs) => {
                let list: Vec<JsValue> = xs.iter().map(|&x| self.arrays.get(x).clone()).collect();
                let promise = evaluate(list).map_err(|e| describe(&e))?;
                self.promises.push(Some((promise, false)));
            }
            Step::Read(x) => self.promises.push(Some((read(self.arrays.get(*x)), true))),
            Step::Dispose(x) => {
                dispose(self.arrays.get(*x));
                self.arrays.arrays[*x] = None;
            }
            Step::Await(n) => {
                let (promise, is_read) = self.promises[*n].take().expect("awaited once");
                let expected = reads[*n].as_ref().filter(|_| is_read);
                check(settle(promise).await, expected)?;
            }
            Step::SetMemoryLimit(limit) => {
                let limit = limit.map_or(f64::INFINITY, |l| self.base + l as f64);
                set_memory_limit(limit).unwrap();
            }
            Step::SetCacheLimit(limit) => {
                set_cache_limit(*limit as f64).unwrap();
            }
            Step::ClearCache => clear_cache(),
            Step::FailNextBuffer => fail_next_buffers_for_tests(1),
        }
        Ok(())
    }

    fn dispose_all(&mut self) {
        for array in self.arrays.arrays.drain(..).flatten() {
            dispose(&array);
        }
    }
}

fn error_name(err: &JsValue) -> String {
    err.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.name()))
        .unwrap_or_default()
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

/// A settled promise against the reference: a read gives exactly the reference's words; a
/// failure may only be a `MemoryLimitError` (a limit may bite where the reference, which sets
/// none, did not).
fn check(outcome: Result<JsValue, JsValue>, expected: Option<&Vec<u64>>) -> Result<(), String> {
    let value = match outcome {
        Err(err) if error_name(&err) == "MemoryLimitError" => {
            tally(0, 1);
            return Ok(());
        }
        Err(err) => return Err(format!("a call rejected with {}", describe(&err))),
        Ok(value) => value,
    };
    let Some(expected) = expected else {
        return Ok(());
    };
    tally(1, 0);
    let got = words_of(&value);
    if got.len() != expected.len() {
        return Err(format!(
            "a read gave {} elements, the reference {}",
            got.len(),
            expected.len()
        ));
    }
    match got.iter().zip(expected).position(|(g, e)| g != e) {
        Some(i) => Err(format!(
            "a read's element {i} has bits {:#x}, the reference's {:#x} ({} of {} differ)",
            got[i],
            expected[i],
            got.iter().zip(expected).filter(|(g, e)| g != e).count(),
            got.len()
        )),
        None => Ok(()),
    }
}

/// Runs `program` interleaved and checks every read and the memory invariants after it.
async fn run_program(program: &Program, reads: &[Option<Vec<u64>>]) -> Result<(), String> {
    let before = mark();
    let mut page = Page::new();
    let mut outcome = Ok(());
    for step in &program.steps {
        outcome = page.step(step, reads).await;
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
    check_memory(&before)
}

/// After every array is disposed: memory released (see [`check_released`]), and every
/// gauge's current value its allocations less its frees.
fn check_memory(before: &Mark) -> Result<(), String> {
    check_released(before, "interleaved run")?;
    for key in [
        "active_bytes",
        "allocated_bytes",
        "allocation",
        "inactive_split_bytes",
    ] {
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

/// Active blocks but the runtime's own uniform buffers (its parameter ring): each block's id
/// and `device usage size op`.
fn stray_blocks() -> Vec<(u64, String)> {
    memory_snapshot()
        .iter()
        .filter(|b| get(b, "state").as_string().as_deref() == Some("active"))
        .filter(|b| get(b, "usage").as_string().as_deref() != Some("uniform"))
        .map(|b| {
            let field = |k| get(&b, k).as_string().unwrap_or_else(|| "host".into());
            let size = get(&b, "size").as_f64().unwrap_or(0.0);
            let id = get(&b, "id").as_f64().unwrap_or(0.0) as u64;
            (
                id,
                format!(
                    "{} {} {size} B by {}",
                    field("device"),
                    field("usage"),
                    field("op")
                ),
            )
        })
        .collect()
}

/// Where memory stands before a run: active bytes and the blocks no array holds.
struct Mark {
    active: f64,
    stray: Vec<u64>,
}

fn mark() -> Mark {
    Mark {
        active: stat("active_bytes.all.current"),
        stray: stray_blocks().into_iter().map(|(id, _)| id).collect(),
    }
}

/// After every array of a run is disposed: active bytes where they were at `before`, and no
/// block active that no array holds, but those that were already.
fn check_released(before: &Mark, run: &str) -> Result<(), String> {
    let active = stat("active_bytes.all.current");
    let stray: Vec<String> = stray_blocks()
        .into_iter()
        .filter(|(id, _)| !before.stray.contains(id))
        .map(|(_, what)| what)
        .collect();
    if active != before.active || !stray.is_empty() {
        return Err(format!(
            "after the {run}, active bytes {active} (before: {}); active blocks no array \
             holds: {}",
            before.active,
            stray.join("; ")
        ));
    }
    Ok(())
}

fn seed() -> u64 {
    option_env!("TANDEM_INTERLEAVE_SEED")
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x7A4D_E11A)
}

fn program_count() -> usize {
    option_env!("TANDEM_INTERLEAVE_PROGRAMS")
        .and_then(|s| s.parse().ok())
        .unwrap_or(300)
}

/// Drops steps while the program still fails, for a shorter report.
async fn shrink(program: &Program) -> Program {
    let mut shrunk = program.clone();
    let mut i = shrunk.steps.len();
    let mut tries = 0;
    while i > 0 && tries < 300 {
        i -= 1;
        tries += 1;
        let Some(candidate) = shrunk.without(i) else {
            continue;
        };
        let fails = match reference_of(&candidate).await {
            Err(_) => true,
            Ok(None) => false,
            Ok(Some(reads)) => run_program(&candidate, &reads).await.is_err(),
        };
        if fails {
            shrunk = candidate;
            i = i.min(shrunk.steps.len());
        }
    }
    shrunk
}

#[wasm_bindgen_test]
async fn random_interleavings_give_the_sequential_values() {
    runtime_info().await;
    let (seed, count) = (seed(), program_count());
    web_sys::console::log_1(&format!("interleave: {count} programs from seed {seed}").into());
    let mut rng = Rng::new(seed);
    let mut steps = 0;
    let mut calls = std::collections::BTreeMap::<&str, usize>::new();
    for index in 0..count {
        let len = 10 + rng.below(50);
        let (program, reads) = match generate(&mut rng, len).await {
            Ok(made) => made,
            // The program is lost with the failure; the message says what went wrong.
            Err(e) => panic!("program {index} of seed {seed}: the reference run: {e}"),
        };
        steps += program.steps.len();
        for step in &program.steps {
            if let Step::Make { call, .. } = step {
                *calls.entry(call.op).or_default() += 1;
            }
        }
        let Err(first) = run_program(&program, &reads).await else {
            continue;
        };
        let shrunk = shrink(&program).await;
        panic!(
            "program {index} of seed {seed} failed: {first}\nA shorter repro ({} of {} steps; \
             failures can depend on state earlier programs left):\n{}",
            shrunk.steps.len(),
            program.steps.len(),
            shrunk.to_js()
        );
    }
    let missing: Vec<&str> = ALL_OPS
        .iter()
        .chain(&MORE_CREATION)
        .copied()
        .filter(|op| !calls.contains_key(op))
        .collect();
    web_sys::console::log_1(
        &format!(
            "interleave: {count} programs ({steps} steps) from seed {seed} passed: {} reads \
             compared, {} MemoryLimitErrors met; calls per op: {calls:?}",
            TALLY.with(|t| t.get().0),
            TALLY.with(|t| t.get().1)
        )
        .into(),
    );
    // A long enough run calls every op of the API.
    assert!(
        count < 100 || missing.is_empty(),
        "{count} programs never called {missing:?}"
    );
}

/// Every op of `../shared/API.md` that makes arrays.
const ALL_OPS: [&str; 64] = [
    "abs",
    "neg",
    "sign",
    "square",
    "sqrt",
    "rsqrt",
    "exp",
    "expm1",
    "log",
    "log1p",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sigmoid",
    "relu",
    "gelu",
    "erf",
    "floor",
    "ceil",
    "round",
    "reciprocal",
    "logicalNot",
    "add",
    "subtract",
    "multiply",
    "divide",
    "power",
    "maximum",
    "minimum",
    "equal",
    "notEqual",
    "less",
    "lessEqual",
    "greater",
    "greaterEqual",
    "logicalAnd",
    "logicalOr",
    "where",
    "clip",
    "astype",
    "sum",
    "mean",
    "max",
    "min",
    "prod",
    "argmax",
    "argmin",
    "logsumexp",
    "softmax",
    "matmul",
    "reshape",
    "transpose",
    "expandDims",
    "squeeze",
    "broadcastTo",
    "slice",
    "concatenate",
    "stack",
    "split",
    "flatten",
    "array",
    "zeros",
    "ones",
];

/// The creation ops beyond `array`, `zeros` and `ones`, also in every long run.
const MORE_CREATION: [&str; 6] = [
    "full",
    "arange",
    "linspace",
    "eye",
    "randomUniform",
    "randomNormal",
];
