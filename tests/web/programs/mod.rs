//! Random programs over the whole JS API, for the browser's interleaving test
//! (`web_interleave.rs`): every op of the API at ranks 0 to 4, empty shapes, number
//! operands, negative strides, views of another stream's array, reads and evaluates started
//! without awaiting, disposes, memory and cache limits.
//!
//! A program is made by running it: each step the generator proposes runs at once, in order
//! and awaited (the reference run), and a call the API refuses is dropped and another tried.
//! So every kept call is valid, and the reference run's reads are what the same program,
//! interleaved, must read. This module holds the program's representation, its printing as
//! the JS a page runs, and its shrinking; `generate` proposes steps and `page` runs them.
#![allow(dead_code)]

pub mod compiled;
pub mod generate;
pub mod model;
pub mod page;

use compiled::Function;
use generate::Known;
use wasm_bindgen::JsValue;

/// Streams of a program, by index: the two defaults, then one new stream per device.
pub const STREAMS: [&str; 4] = ["\"cpu\"", "\"gpu\"", "s2", "s3"];

#[path = "../../rng/mod.rs"]
mod rng;
pub use rng::Rng;

/// An argument as a page writes it.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// `a[i]`.
    Array(usize),
    /// `[a[i], a[j], …]`.
    Arrays(Vec<usize>),
    Num(f64),
    Bool(bool),
    Null,
    Undefined,
    Str(&'static str),
    /// `[1, 2, 3]`: a shape, axes, starts.
    Ints(Vec<i64>),
    /// `new Float32Array([...])` (or Int32Array, Uint32Array, Uint8Array for bool).
    Data(&'static str, Vec<f64>),
    /// A stream, by index into [`STREAMS`].
    Stream(usize),
}

/// A call that makes arrays: `op(args…, {opts…})`.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub op: &'static str,
    pub args: Vec<Arg>,
    pub opts: Vec<(&'static str, Arg)>,
}

impl Call {
    /// Array indices the call reads.
    pub fn inputs(&self) -> Vec<usize> {
        let mut found = Vec::new();
        for arg in self.args.iter().chain(self.opts.iter().map(|(_, a)| a)) {
            match arg {
                Arg::Array(i) => found.push(*i),
                Arg::Arrays(list) => found.extend(list),
                _ => {}
            }
        }
        found
    }
}

/// One step of a program. Arrays are numbered in the order calls make them (`split` makes
/// several); promises in the order `Evaluate` and `Read` start them.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A call that makes `count` arrays (1, or the parts of a `split`).
    Make {
        call: Call,
        count: usize,
    },
    /// Starts `evaluate(...)`.
    Evaluate(Vec<usize>),
    /// Starts `a[i].toArray()`.
    Read(usize),
    Dispose(usize),
    /// Awaits the `n`-th promise.
    Await(usize),
    /// A limit this many bytes above the active memory at the program's start; `None` lifts
    /// it.
    SetMemoryLimit(Option<u64>),
    SetCacheLimit(u64),
    ClearCache,
    /// The GPU reports that it could not create the next buffer (as its error scope would).
    FailNextBuffer,
    /// Compiles a function, the program's next (`f[n]`).
    Compile(Function),
    /// Calls function `f` (inside `tidy` or not); it makes `count` arrays.
    CallCompiled {
        f: usize,
        args: Vec<Arg>,
        tidy: bool,
        count: usize,
    },
    DisposeCompiled(usize),
    /// Lets go of function `f` for the garbage collector.
    DropCompiled(usize),
}

impl Step {
    /// Array indices the step uses.
    pub fn uses(&self) -> Vec<usize> {
        match self {
            Step::Make { call, .. } => call.inputs(),
            Step::Evaluate(list) => list.clone(),
            Step::Read(i) | Step::Dispose(i) => vec![*i],
            Step::Compile(function) => function.captures.clone(),
            Step::CallCompiled { args, .. } => args
                .iter()
                .filter_map(|a| match a {
                    Arg::Array(i) => Some(*i),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The function the step uses, if any.
    pub fn function(&self) -> Option<usize> {
        match self {
            Step::CallCompiled { f, .. } | Step::DisposeCompiled(f) | Step::DropCompiled(f) => {
                Some(*f)
            }
            _ => None,
        }
    }

    /// Arrays the step makes.
    pub fn made(&self) -> usize {
        match self {
            Step::Make { count, .. } | Step::CallCompiled { count, .. } => *count,
            _ => 0,
        }
    }

    pub fn starts_promise(&self) -> bool {
        matches!(self, Step::Evaluate(_) | Step::Read(_))
    }
}

/// A program: its steps, run in order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Program {
    pub steps: Vec<Step>,
}

impl Program {
    /// The program without step `at` and every later step that uses what it made, arrays and
    /// promises renumbered; `None` if the step is an `Await` (dropped with its promise).
    pub fn without(&self, at: usize) -> Option<Program> {
        if matches!(self.steps[at], Step::Await(_)) {
            return None;
        }
        let (mut arrays, mut promises, mut functions) = (0usize, 0usize, 0usize);
        // Old array, promise and function index -> new; None: dropped.
        let mut array_map: Vec<Option<usize>> = Vec::new();
        let mut promise_map: Vec<Option<usize>> = Vec::new();
        let mut function_map: Vec<Option<usize>> = Vec::new();
        let mut steps = Vec::new();
        for (i, step) in self.steps.iter().enumerate() {
            let uses_dropped = step.uses().iter().any(|&a| array_map[a].is_none());
            let awaits_dropped = matches!(step, Step::Await(p) if promise_map[*p].is_none());
            let function_dropped = step.function().is_some_and(|f| function_map[f].is_none());
            let dropped = i == at || uses_dropped || awaits_dropped || function_dropped;
            if matches!(step, Step::Compile(_)) {
                function_map.push((!dropped).then(|| {
                    functions += 1;
                    functions - 1
                }));
            }
            for _ in 0..step.made() {
                array_map.push((!dropped).then(|| {
                    arrays += 1;
                    arrays - 1
                }));
            }
            if step.starts_promise() {
                promise_map.push((!dropped).then(|| {
                    promises += 1;
                    promises - 1
                }));
            }
            if !dropped {
                steps.push(renumber(step, &array_map, &promise_map, &function_map));
            }
        }
        Some(Program { steps })
    }

    /// The program as a page would write it, for a failure report.
    pub fn to_js(&self) -> String {
        let mut out = String::from(
            "import * as tn from \"tandem\";\nawait tn.initRuntime();\n\
             const s2 = tn.newStream(\"cpu\"), s3 = tn.newStream(\"gpu\");\n\
             const base = tn.getActiveMemory();\nconst a = [], p = [], f = [];\n",
        );
        let (mut arrays, mut functions) = (0, 0);
        for step in &self.steps {
            let line = match step {
                Step::Compile(function) => {
                    functions += 1;
                    function.to_js(functions - 1)
                }
                Step::CallCompiled {
                    f,
                    args,
                    tidy,
                    count,
                } => {
                    let args: Vec<String> = args.iter().map(arg_js).collect();
                    let mut text = format!("f[{f}]({})", args.join(", "));
                    if *tidy {
                        text = format!("tn.tidy(() => {text})");
                    }
                    let line = match count {
                        1 => format!("a[{arrays}] = {text};"),
                        _ => format!("a.push(...{text}); // a[{arrays}..{}]", arrays + count),
                    };
                    arrays += count;
                    line
                }
                Step::DisposeCompiled(f) => format!("f[{f}].dispose();"),
                Step::DropCompiled(f) => format!("f[{f}] = null; // for the garbage collector"),
                Step::Make { call, count } => {
                    let text = call_js(call);
                    let line = if *count == 1 {
                        format!("a[{arrays}] = {text};")
                    } else {
                        format!("a.push(...{text}); // a[{arrays}..{}]", arrays + count)
                    };
                    arrays += count;
                    line
                }
                Step::Evaluate(xs) => {
                    let list: Vec<String> = xs.iter().map(|x| format!("a[{x}]")).collect();
                    format!("p.push(tn.evaluate({}));", list.join(", "))
                }
                Step::Read(x) => format!("p.push(a[{x}].toArray());"),
                Step::Dispose(x) => format!("a[{x}].dispose();"),
                Step::Await(n) => format!("await p[{n}];"),
                Step::SetMemoryLimit(limit) => format!(
                    "tn.setMemoryLimit({});",
                    limit.map_or("Infinity".to_string(), |l| format!("base + {l}"))
                ),
                Step::SetCacheLimit(limit) => format!("tn.setCacheLimit({limit});"),
                Step::ClearCache => "tn.clearCache();".to_string(),
                Step::FailNextBuffer => {
                    "// the GPU fails to create the next buffer (a test hook)".to_string()
                }
            };
            out.push_str(&line);
            out.push('\n');
        }
        out.push_str(
            "// each read must equal the same calls awaited in program order, each compiled \
             function's body run plainly\n",
        );
        out
    }
}

fn renumber(
    step: &Step,
    arrays: &[Option<usize>],
    promises: &[Option<usize>],
    functions: &[Option<usize>],
) -> Step {
    let a = |i: &usize| arrays[*i].expect("a kept step uses kept arrays");
    let f = |i: &usize| functions[*i].expect("a kept step uses kept functions");
    let map_arg = |arg: &Arg| match arg {
        Arg::Array(i) => Arg::Array(a(i)),
        Arg::Arrays(list) => Arg::Arrays(list.iter().map(a).collect()),
        other => other.clone(),
    };
    match step {
        Step::Compile(function) => Step::Compile(Function {
            captures: function.captures.iter().map(a).collect(),
            ..function.clone()
        }),
        Step::CallCompiled {
            f: n,
            args,
            tidy,
            count,
        } => Step::CallCompiled {
            f: f(n),
            args: args.iter().map(map_arg).collect(),
            tidy: *tidy,
            count: *count,
        },
        Step::DisposeCompiled(n) => Step::DisposeCompiled(f(n)),
        Step::DropCompiled(n) => Step::DropCompiled(f(n)),
        Step::Make { call, count } => Step::Make {
            call: Call {
                op: call.op,
                args: call.args.iter().map(map_arg).collect(),
                opts: call.opts.iter().map(|(k, v)| (*k, map_arg(v))).collect(),
            },
            count: *count,
        },
        Step::Evaluate(list) => Step::Evaluate(list.iter().map(a).collect()),
        Step::Read(i) => Step::Read(a(i)),
        Step::Dispose(i) => Step::Dispose(a(i)),
        Step::Await(p) => Step::Await(promises[*p].expect("a kept await's promise is kept")),
        other => other.clone(),
    }
}

/// `tn.op(args, {opts})`.
fn call_js(call: &Call) -> String {
    call_js_named(call, &|i| format!("a[{i}]"))
}

/// `tn.op(args, {opts})`, with `name(i)` for array `i`.
pub fn call_js_named(call: &Call, name: &dyn Fn(usize) -> String) -> String {
    let arg = |a: &Arg| match a {
        Arg::Array(i) => name(*i),
        Arg::Arrays(list) => {
            let items: Vec<String> = list.iter().map(|&i| name(i)).collect();
            format!("[{}]", items.join(", "))
        }
        other => arg_js(other),
    };
    let mut parts: Vec<String> = call.args.iter().map(arg).collect();
    if !call.opts.is_empty() {
        let fields: Vec<String> = call
            .opts
            .iter()
            .map(|(k, v)| format!("{k}: {}", arg(v)))
            .collect();
        parts.push(format!("{{{}}}", fields.join(", ")));
    }
    format!("tn.{}({})", call.op, parts.join(", "))
}

fn arg_js(arg: &Arg) -> String {
    match arg {
        Arg::Array(i) => format!("a[{i}]"),
        Arg::Arrays(list) => {
            let items: Vec<String> = list.iter().map(|i| format!("a[{i}]")).collect();
            format!("[{}]", items.join(", "))
        }
        Arg::Num(x) => number_js(*x),
        Arg::Bool(b) => b.to_string(),
        Arg::Null => "null".into(),
        Arg::Undefined => "undefined".into(),
        Arg::Str(s) => format!("{s:?}"),
        Arg::Ints(list) => format!("{list:?}"),
        Arg::Data(kind, values) => {
            let items: Vec<String> = values.iter().map(|&v| number_js(v)).collect();
            format!("new {kind}([{}])", items.join(", "))
        }
        Arg::Stream(s) => STREAMS[*s].to_string(),
    }
}

fn number_js(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x.is_infinite() {
        if x > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        format!("{x}")
    }
}

/// What the generator knows of a JS `NDArray`: its shape and dtype, as array `index`.
pub fn known_of(index: usize, array: &JsValue) -> Known {
    let get = |key: &str| js_sys::Reflect::get(array, &key.into()).unwrap();
    let shape = js_sys::Array::from(&get("shape"))
        .iter()
        .map(|d| d.as_f64().unwrap() as usize)
        .collect();
    Known {
        index,
        shape,
        dtype: get("dtype").as_string().unwrap(),
    }
}
