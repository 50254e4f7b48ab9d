//! Random programs of overlapping calls, shared by the native and the browser interleaving
//! tests: the generator, the reference (the same program computed sequentially on the host,
//! in f64), and a printer that writes a program as the JS a page would run.
//!
//! Every value stays an integer below 2^20, so every op is exact in float32 and int32 on
//! both devices, and results compare exactly.
#![allow(dead_code)]

/// Streams of a program, by index: the two defaults, then one new stream per device.
pub const STREAMS: [&str; 4] = ["cpu", "gpu", "newStream(cpu)", "newStream(gpu)"];

const BOUND: f64 = (1 << 20) as f64;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Binary {
    Add,
    Subtract,
    Multiply,
    Maximum,
    Minimum,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Unary {
    Negative,
    Abs,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DType {
    Float32,
    Int32,
}

/// One call of a program. Arrays are numbered in creation order; promises in start order.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Array {
        values: Vec<f64>,
        shape: [usize; 2],
        stream: usize,
    },
    Unary {
        op: Unary,
        x: usize,
        stream: usize,
    },
    Binary {
        op: Binary,
        a: usize,
        b: usize,
        stream: usize,
    },
    /// `sum` over one axis with `keepdims`.
    Sum {
        x: usize,
        axis: usize,
        stream: usize,
    },
    AsType {
        x: usize,
        dtype: DType,
        stream: usize,
    },
    /// A view: no kernel runs, the storage is shared.
    Transpose {
        x: usize,
        stream: usize,
    },
    /// Starts `evaluate(...)`; its promise is awaited by a later `Await`.
    Evaluate(Vec<usize>),
    /// Starts `x.toArray()`.
    Read(usize),
    Dispose(usize),
    /// Awaits the promise started `n`-th.
    Await(usize),
    /// A limit this many bytes above the active memory at the program's start; `None`
    /// removes it.
    SetMemoryLimit(Option<u64>),
    SetCacheLimit(u64),
    ClearCache,
}

/// An array's reference value.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    pub values: Vec<f64>,
    pub shape: [usize; 2],
    pub dtype: DType,
}

impl Value {
    fn at(&self, r: usize, c: usize) -> f64 {
        let r = if self.shape[0] == 1 { 0 } else { r };
        let c = if self.shape[1] == 1 { 0 } else { c };
        self.values[r * self.shape[1] + c]
    }

    fn max_abs(&self) -> f64 {
        self.values.iter().fold(0.0, |m, v| m.max(v.abs()))
    }
}

/// The reference value of the array `step` creates, given the values of earlier arrays.
pub fn reference(step: &Step, arrays: &[Value]) -> Option<Value> {
    let value = match step {
        Step::Array { values, shape, .. } => Value {
            values: values.clone(),
            shape: *shape,
            dtype: DType::Float32,
        },
        Step::Unary { op, x, .. } => {
            let x = &arrays[*x];
            let f = |v: f64| match op {
                Unary::Negative => -v,
                Unary::Abs => v.abs(),
            };
            Value {
                values: x.values.iter().map(|&v| f(v)).collect(),
                ..x.clone()
            }
        }
        Step::Binary { op, a, b, .. } => {
            let (a, b) = (&arrays[*a], &arrays[*b]);
            let shape = [a.shape[0].max(b.shape[0]), a.shape[1].max(b.shape[1])];
            let f = |x: f64, y: f64| match op {
                Binary::Add => x + y,
                Binary::Subtract => x - y,
                Binary::Multiply => x * y,
                Binary::Maximum => x.max(y),
                Binary::Minimum => x.min(y),
            };
            let mut values = Vec::with_capacity(shape[0] * shape[1]);
            for r in 0..shape[0] {
                for c in 0..shape[1] {
                    values.push(f(a.at(r, c), b.at(r, c)));
                }
            }
            let dtype = if a.dtype == DType::Int32 && b.dtype == DType::Int32 {
                DType::Int32
            } else {
                DType::Float32
            };
            Value {
                values,
                shape,
                dtype,
            }
        }
        Step::Sum { x, axis, .. } => {
            let x = &arrays[*x];
            let mut shape = x.shape;
            shape[*axis] = 1;
            let mut values = vec![0.0; shape[0] * shape[1]];
            for r in 0..x.shape[0] {
                for c in 0..x.shape[1] {
                    let (rr, cc) = if *axis == 0 { (0, c) } else { (r, 0) };
                    values[rr * shape[1] + cc] += x.at(r, c);
                }
            }
            Value {
                values,
                shape,
                dtype: x.dtype,
            }
        }
        Step::AsType { x, dtype, .. } => Value {
            dtype: *dtype,
            ..arrays[*x].clone()
        },
        Step::Transpose { x, .. } => {
            let x = &arrays[*x];
            let shape = [x.shape[1], x.shape[0]];
            let mut values = Vec::with_capacity(x.values.len());
            for r in 0..shape[0] {
                for c in 0..shape[1] {
                    values.push(x.at(c, r));
                }
            }
            Value {
                values,
                shape,
                dtype: x.dtype,
            }
        }
        _ => return None,
    };
    Some(value)
}

#[path = "../rng/mod.rs"]
mod rng;
pub use rng::Rng;

/// A program and the reference value of each array it creates.
#[derive(Debug, Clone)]
pub struct Program {
    pub steps: Vec<Step>,
}

/// Generates a program of about `len` calls. Arrays are `n × n` (or rows and columns of it)
/// with `n` up to 48, or larger now and then so memory limits bite.
pub fn generate(rng: &mut Rng, len: usize) -> Program {
    let n = if rng.chance(10) {
        256 + rng.below(256)
    } else {
        1 + rng.below(48)
    };
    let mut steps = Vec::new();
    let mut values: Vec<Value> = Vec::new();
    let mut live: Vec<usize> = Vec::new();
    let mut promises = 0;
    let mut awaited = Vec::new();
    while steps.len() < len {
        let step = match rng.below(100) {
            _ if live.is_empty() => make_array(rng, n),
            0..=9 => make_array(rng, n),
            10..=49 => make_op(rng, &values, &live),
            50..=59 => {
                let k = 1 + rng.below(3);
                Step::Evaluate((0..k).map(|_| live[rng.below(live.len())]).collect())
            }
            60..=71 => Step::Read(live[rng.below(live.len())]),
            72..=79 => {
                let x = live.swap_remove(rng.below(live.len()));
                Step::Dispose(x)
            }
            80..=91 => {
                let open: Vec<usize> = (0..promises).filter(|p| !awaited.contains(p)).collect();
                if open.is_empty() {
                    continue;
                }
                Step::Await(open[rng.below(open.len())])
            }
            92..=94 => Step::SetMemoryLimit(rng.chance(60).then(|| {
                // Room for 2 to 40 arrays of the program's largest shape, so the limit bites.
                (2 + rng.below(39)) as u64 * (n * n * 4) as u64
            })),
            95..=97 => Step::SetCacheLimit([0, 4096, 1 << 16, 1 << 20, 1 << 30][rng.below(5)]),
            _ => Step::ClearCache,
        };
        match &step {
            Step::Evaluate(_) | Step::Read(_) => promises += 1,
            Step::Await(p) => awaited.push(*p),
            _ => {}
        }
        if let Some(value) = reference(&step, &values) {
            live.push(values.len());
            values.push(value);
        }
        steps.push(step);
    }
    // Every promise is awaited, the open ones in a random order.
    let mut open: Vec<usize> = (0..promises).filter(|p| !awaited.contains(p)).collect();
    while !open.is_empty() {
        steps.push(Step::Await(open.swap_remove(rng.below(open.len()))));
    }
    Program { steps }
}

fn make_array(rng: &mut Rng, n: usize) -> Step {
    let shape = match rng.below(4) {
        0 => [n, 1],
        1 => [1, n],
        _ => [n, n],
    };
    let values = (0..shape[0] * shape[1])
        .map(|_| rng.below(7) as f64 - 3.0)
        .collect();
    Step::Array {
        values,
        shape,
        stream: rng.below(STREAMS.len()),
    }
}

/// An op on live arrays whose result stays within [`BOUND`].
fn make_op(rng: &mut Rng, values: &[Value], live: &[usize]) -> Step {
    let stream = rng.below(STREAMS.len());
    let x = live[rng.below(live.len())];
    let y = live[rng.below(live.len())];
    let (mx, my) = (values[x].max_abs(), values[y].max_abs());
    let step = match rng.below(7) {
        0 => Step::Unary {
            op: [Unary::Negative, Unary::Abs][rng.below(2)],
            x,
            stream,
        },
        1 if mx * my < BOUND => Step::Binary {
            op: Binary::Multiply,
            a: x,
            b: y,
            stream,
        },
        1 | 2 => Step::Binary {
            op: [
                Binary::Add,
                Binary::Subtract,
                Binary::Maximum,
                Binary::Minimum,
            ][rng.below(4)],
            a: x,
            b: y,
            stream,
        },
        3 => Step::Sum {
            x,
            axis: rng.below(2),
            stream,
        },
        4 => Step::AsType {
            x,
            dtype: [DType::Float32, DType::Int32][rng.below(2)],
            stream,
        },
        _ => Step::Transpose { x, stream },
    };
    let grows = reference(&step, values).is_none_or(|v| v.max_abs() >= BOUND);
    if grows {
        Step::Unary {
            op: Unary::Negative,
            x,
            stream,
        }
    } else {
        step
    }
}

/// The program as a page would write it, for a failure report.
pub fn to_js(program: &Program) -> String {
    let mut out = String::from(
        "import * as tn from \"tandem\";\nawait tn.initRuntime();\nconst base = tn.getActiveMemory();\nconst s = [\"cpu\", \"gpu\", tn.newStream(\"cpu\"), tn.newStream(\"gpu\")];\nconst a = [], p = [];\n",
    );
    let mut arrays = 0;
    for step in &program.steps {
        let line = match step {
            Step::Array {
                values,
                shape,
                stream,
            } => format!(
                "a[{arrays}] = tn.array(new Float32Array({values:?}), {{shape: {shape:?}, stream: s[{stream}]}});"
            ),
            Step::Unary { op, x, stream } => {
                let f = match op {
                    Unary::Negative => "neg",
                    Unary::Abs => "abs",
                };
                format!("a[{arrays}] = tn.{f}(a[{x}], {{stream: s[{stream}]}});")
            }
            Step::Binary { op, a, b, stream } => {
                let f = format!("{op:?}").to_lowercase();
                format!("a[{arrays}] = tn.{f}(a[{a}], a[{b}], {{stream: s[{stream}]}});")
            }
            Step::Sum { x, axis, stream } => format!(
                "a[{arrays}] = tn.sum(a[{x}], {{axis: {axis}, keepdims: true, stream: s[{stream}]}});"
            ),
            Step::AsType { x, dtype, stream } => {
                let d = format!("{dtype:?}").to_lowercase();
                format!("a[{arrays}] = tn.astype(a[{x}], \"{d}\", {{stream: s[{stream}]}});")
            }
            Step::Transpose { x, stream } => {
                format!("a[{arrays}] = tn.transpose(a[{x}], {{stream: s[{stream}]}});")
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
        };
        if matches!(
            step,
            Step::Array { .. }
                | Step::Unary { .. }
                | Step::Binary { .. }
                | Step::Sum { .. }
                | Step::AsType { .. }
                | Step::Transpose { .. }
        ) {
            arrays += 1;
        }
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str("// each read must equal the same calls awaited in program order\n");
    out
}

/// The reference values of a program's arrays, in creation order.
pub fn references(program: &Program) -> Vec<Value> {
    let mut values = Vec::new();
    for step in &program.steps {
        if let Some(v) = reference(step, &values) {
            values.push(v);
        }
    }
    values
}

/// The program without step `i`, with later indices renumbered; `None` if later steps use
/// the array it makes.
pub fn without(program: &Program, i: usize) -> Option<Program> {
    let made = |steps: &[Step]| {
        let values = references(&Program {
            steps: steps.to_vec(),
        });
        values.len()
    };
    let step = &program.steps[i];
    let array = (reference(
        step,
        &references(&Program {
            steps: program.steps[..i].to_vec(),
        }),
    )
    .is_some())
    .then(|| made(&program.steps[..i]));
    let promise = matches!(step, Step::Evaluate(_) | Step::Read(_)).then(|| {
        program.steps[..i]
            .iter()
            .filter(|s| matches!(s, Step::Evaluate(_) | Step::Read(_)))
            .count()
    });
    let mut steps = Vec::with_capacity(program.steps.len());
    for (j, s) in program.steps.iter().enumerate() {
        if j == i {
            continue;
        }
        if j < i {
            steps.push(s.clone());
            continue;
        }
        if let (Some(p), Step::Await(q)) = (promise, s) {
            if *q == p {
                continue;
            }
        }
        steps.push(renumber(s, array, promise)?);
    }
    Some(Program { steps })
}

/// `step` with array indices above `array` and promise indices above `promise` lowered by
/// one; `None` if it uses `array` itself.
fn renumber(step: &Step, array: Option<usize>, promise: Option<usize>) -> Option<Step> {
    let a = |x: usize| match array {
        Some(k) if x == k => None,
        Some(k) if x > k => Some(x - 1),
        _ => Some(x),
    };
    let p = |x: usize| match promise {
        Some(k) if x > k => x - 1,
        _ => x,
    };
    Some(match step.clone() {
        Step::Unary { op, x, stream } => Step::Unary {
            op,
            x: a(x)?,
            stream,
        },
        Step::Binary {
            op,
            a: x,
            b: y,
            stream,
        } => Step::Binary {
            op,
            a: a(x)?,
            b: a(y)?,
            stream,
        },
        Step::Sum { x, axis, stream } => Step::Sum {
            x: a(x)?,
            axis,
            stream,
        },
        Step::AsType { x, dtype, stream } => Step::AsType {
            x: a(x)?,
            dtype,
            stream,
        },
        Step::Transpose { x, stream } => Step::Transpose { x: a(x)?, stream },
        Step::Evaluate(xs) => Step::Evaluate(xs.into_iter().map(a).collect::<Option<_>>()?),
        Step::Read(x) => Step::Read(a(x)?),
        Step::Dispose(x) => Step::Dispose(a(x)?),
        Step::Await(x) => Step::Await(p(x)),
        other => other,
    })
}

/// Where `got` first differs from `expected`, for a failure message; `None` if equal.
pub fn first_difference(got: &[f64], expected: &[f64]) -> Option<String> {
    if got.len() != expected.len() {
        return Some(format!(
            "read {} elements, expected {}",
            got.len(),
            expected.len()
        ));
    }
    let differ = got.iter().zip(expected).filter(|(g, e)| g != e).count();
    let (i, (g, e)) = got
        .iter()
        .zip(expected)
        .enumerate()
        .find(|(_, (g, e))| g != e)?;
    Some(format!(
        "element {i} read {g}, expected {e} ({differ} of {} elements differ)",
        got.len()
    ))
}
