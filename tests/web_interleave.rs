//! Random programs of overlapping calls in the browser, over the whole JS API
//! (`tests/web/programs/`): ops at ranks 0 to 4 across streams, empty shapes, number operands,
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

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

#[path = "web/common/mod.rs"]
mod common;
#[path = "web/programs/mod.rs"]
mod programs;

use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

use tandem::js::memory::{clear_cache, memory_snapshot, set_cache_limit, set_memory_limit};
use tandem::js::stream::{evaluate, synchronize};
use tandem::memory::device_errors::fail_next_buffers_for_tests;

use crate::common::{collect_garbage, describe, gauge_offsets, get, runtime_info, settle, stat};
use crate::programs::compiled::{self, PageFunction, RefFunction};
use crate::programs::generate::{Known, State, propose};
use crate::programs::page::{Arrays, dispose, read, words_of};
use crate::programs::{Arg, Program, Rng, Step, known_of};

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
    /// Compiled functions, by the program's numbering; `None` once disposed or dropped.
    functions: Vec<Option<RefFunction>>,
    /// Per promise: a read's words, or `None` for an evaluate.
    reads: Vec<Option<Vec<u64>>>,
}

impl Reference {
    fn new() -> Reference {
        Reference {
            page: Arrays::new(),
            known: Vec::new(),
            functions: Vec::new(),
            reads: Vec::new(),
        }
    }

    /// Keeps arrays a call made.
    fn keep(&mut self, made: &[JsValue]) -> Applied {
        for array in made {
            self.known.push(Some(known_of(self.known.len(), array)));
            self.page.arrays.push(Some(array.clone()));
        }
        Applied::Made(made.len())
    }

    /// A compiled function's call, run plainly (the interleaved run compiles it). An array
    /// the function closed over and the page disposed since is refused as a bad call is.
    fn call_compiled(&mut self, f: usize, args: &[Arg]) -> Result<Applied, String> {
        let Some(function) = self.functions[f].as_mut() else {
            return Ok(Applied::Refused);
        };
        match function.call(&self.page, args) {
            Ok(made) => Ok(self.keep(&made)),
            Err(err) if refusal(&err) || error_name(&err) == "DisposedArrayError" => {
                Ok(Applied::Refused)
            }
            Err(err) => Err(format!("compiled function {f} threw {}", describe(&err))),
        }
    }

    async fn apply(&mut self, step: &Step) -> Result<Applied, String> {
        match step {
            Step::Make { call, .. } => match self.page.make(call) {
                Ok(made) => Ok(self.keep(&made)),
                Err(err) if refusal(&err) => Ok(Applied::Refused),
                Err(err) => Err(format!("{} threw {}", call.op, describe(&err))),
            },
            Step::Compile(function) => {
                self.functions
                    .push(Some(RefFunction::new(function, &self.page)));
                Ok(Applied::Done)
            }
            Step::CallCompiled { f, args, .. } => self.call_compiled(*f, args),
            Step::DisposeCompiled(f) | Step::DropCompiled(f) => {
                self.functions[*f] = None;
                Ok(Applied::Done)
            }
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

/// Makes a program of about `len` steps by running it (see `tests/web/programs/`), then reads every
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
        let proposal = compiled::propose(rng, &reference.page, &live, &reference.functions)
            .unwrap_or_else(|| propose(rng, &state));
        for mut step in proposal {
            match reference.apply(&step).await? {
                Applied::Refused => break,
                Applied::Made(made) => {
                    if let Step::Make { count, .. } | Step::CallCompiled { count, .. } = &mut step {
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
    /// Compiled functions, by the program's numbering; `None` once disposed or dropped.
    functions: Vec<Option<PageFunction>>,
    promises: Vec<Option<(js_sys::Promise, bool)>>,
    /// Active bytes when the program started; limits are set above it.
    base: f64,
}

impl Page {
    fn new() -> Page {
        Page {
            arrays: Arrays::new(),
            functions: Vec::new(),
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
            Step::Compile(function) => {
                let captured = function.captures.iter();
                let captured = captured.map(|&c| self.arrays.get(c).clone()).collect();
                let compiled = PageFunction::new(function, &self.arrays.streams, captured);
                self.functions.push(Some(compiled));
            }
            Step::CallCompiled { f, args, tidy, .. } => {
                let function = self.functions[*f].as_ref().expect("a live function");
                let args: js_sys::Array = args.iter().map(|a| self.arrays.value(a)).collect();
                let made = match function.call(args.clone(), *tidy) {
                    Err(err) if error_name(&err) == "MemoryLimitError" => {
                        // A number's array past the limit: lift it and call again.
                        set_memory_limit(f64::INFINITY).unwrap();
                        function.call(args, *tidy)
                    }
                    other => other,
                };
                let made = made.map_err(|e| format!("f[{f}] threw {}", describe(&e)))?;
                self.arrays.arrays.extend(made.into_iter().map(Some));
            }
            Step::DisposeCompiled(f) => {
                let function = self.functions[*f].take().expect("a live function");
                function.dispose();
            }
            Step::DropCompiled(f) => self.functions[*f] = None,
        }
        Ok(())
    }

    /// Disposes every array; disposes every other compiled function and drops the rest for
    /// the garbage collector.
    fn dispose_all(&mut self) {
        for array in self.arrays.arrays.drain(..).flatten() {
            dispose(&array);
        }
        for (i, function) in self.functions.drain(..).enumerate() {
            match function {
                Some(function) if i % 2 == 0 => function.dispose(),
                _ => {}
            }
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
    // Dropped compiled functions free their traces when the garbage collector takes them.
    if program.steps.iter().any(|s| matches!(s, Step::Compile(_))) {
        collect_garbage().await;
    }
    check_memory(&before)
}

/// After every array is disposed: memory released (see [`check_released`]), and every
/// gauge's current value moved exactly as its allocations less its frees.
fn check_memory(before: &Mark) -> Result<(), String> {
    check_released(before, "interleaved run")?;
    let after = gauge_offsets();
    for key in [
        "active_bytes",
        "allocated_bytes",
        "allocation",
        "inactive_split_bytes",
    ] {
        let key = format!("{key}.all");
        if after.get(&key) != before.offsets.get(&key) {
            return Err(format!(
                "{key}: current less (allocated - freed) was {:?}, is {:?}",
                before.offsets.get(&key),
                after.get(&key)
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
    /// Each gauge's current value less its allocations less its frees (see `gauge_offsets`).
    offsets: std::collections::BTreeMap<String, f64>,
}

fn mark() -> Mark {
    Mark {
        active: stat("active_bytes.all.current"),
        stray: stray_blocks().into_iter().map(|(id, _)| id).collect(),
        offsets: gauge_offsets(),
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
    let queued = tandem::cpu::pool::offloaded();
    let mut steps = 0;
    let mut calls = std::collections::BTreeMap::<&str, usize>::new();
    for index in 0..count {
        let len = 10 + rng.below(50);
        // In the threaded build every other program runs each CPU node on the pool's workers
        // (the reference run keeps them on the page's thread).
        let pooled = cfg!(target_feature = "atomics") && index % 2 == 1;
        tandem::scheduler::set_offload_work(usize::MAX);
        let made = generate(&mut rng, len).await;
        tandem::scheduler::set_offload_work(if pooled {
            0
        } else {
            tandem::scheduler::DEFAULT_OFFLOAD_WORK
        });
        let (program, reads) = match made {
            Ok(made) => made,
            // The program is lost with the failure; the message says what went wrong.
            Err(e) => panic!("program {index} of seed {seed}: the reference run: {e}"),
        };
        steps += program.steps.len();
        for step in &program.steps {
            let name = match step {
                Step::Make { call, .. } => call.op,
                Step::Compile(_) => "compile",
                Step::CallCompiled { tidy: false, .. } => "compiled call",
                Step::CallCompiled { tidy: true, .. } => "compiled call in tidy",
                Step::DisposeCompiled(_) => "compiled dispose",
                Step::DropCompiled(_) => "compiled drop",
                _ => continue,
            };
            *calls.entry(name).or_default() += 1;
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
        .chain(&COMPILED)
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
    if cfg!(target_feature = "atomics") && count > 1 {
        assert!(
            tandem::cpu::pool::offloaded() > queued,
            "no CPU node went to the pool's workers"
        );
    }
}

/// Every op of the API (`docs/reference.md`) that makes arrays.
const ALL_OPS: [&str; 80] = [
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
    "take",
    "takeAlongAxis",
    "putAlongAxis",
    "sliceUpdate",
    "topk",
    "pad",
    "tile",
    "repeat",
    "roll",
    "tril",
    "triu",
    "diagonal",
    "fast.layerNorm",
    "fast.rmsNorm",
    "conv1d",
    "einsum",
];

/// What programs do with compiled functions, also in every long run.
const COMPILED: [&str; 5] = [
    "compile",
    "compiled call",
    "compiled call in tidy",
    "compiled dispose",
    "compiled drop",
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
