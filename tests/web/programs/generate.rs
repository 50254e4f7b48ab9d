//! The generator's proposals: a creation, an op on live arrays with arguments that usually
//! fit their shapes, a read, an evaluate, a dispose, an await, a limit. Proposals need not be
//! valid: the reference run drops any call the API refuses, so odd arguments (an axis out of
//! range, a reduction MLX rejects on an empty axis) are tried too.

use super::page::{BINARY, ELEMENTWISE, UNARY};
use super::{Arg, Call, Rng, STREAMS, Step};

/// A live array as the generator knows it.
#[derive(Debug, Clone)]
pub struct Known {
    pub index: usize,
    pub shape: Vec<usize>,
    pub dtype: String,
}

const DTYPES: [&str; 8] = [
    "float32", "int32", "uint32", "bool", "float16", "bfloat16", "int8", "uint8",
];

/// What the generator knows when it proposes: the live arrays, the next array's index, and
/// the promises started and not yet awaited.
pub struct State<'a> {
    pub live: &'a [Known],
    pub next: usize,
    pub open: &'a [usize],
    /// Every size in this program is at most this many elements per axis.
    pub big: bool,
}

/// One proposal: the steps to try, in order (a partner array, then the op that reads it).
pub fn propose(rng: &mut Rng, state: &State) -> Vec<Step> {
    if state.live.is_empty() {
        return vec![creation(rng, state.big)];
    }
    match rng.below(100) {
        0..=9 => vec![creation(rng, state.big)],
        10..=54 => op(rng, state),
        55..=62 => {
            let k = 1 + rng.below(3);
            vec![Step::Evaluate(
                (0..k).map(|_| pick(rng, state.live).index).collect(),
            )]
        }
        63..=72 => vec![Step::Read(pick(rng, state.live).index)],
        73..=80 => vec![Step::Dispose(pick(rng, state.live).index)],
        81..=91 if !state.open.is_empty() => vec![Step::Await(rng.pick(state.open))],
        // Room for 2 to 40 of the program's largest arrays, so that the limit bites.
        92..=94 => vec![Step::SetMemoryLimit(
            rng.chance(60)
                .then(|| (2 + rng.below(39)) as u64 * largest(state.live)),
        )],
        95..=96 => vec![Step::SetCacheLimit(rng.pick(&[
            0,
            4096,
            1 << 16,
            1 << 20,
            1 << 30,
        ]))],
        97 => vec![Step::ClearCache],
        _ => vec![Step::FailNextBuffer],
    }
}

/// Bytes of the largest live array (at least a 256-byte block).
fn largest(live: &[Known]) -> u64 {
    live.iter()
        .map(|k| k.shape.iter().product::<usize>() as u64 * 4)
        .max()
        .unwrap_or(0)
        .max(256)
}

fn pick<'a>(rng: &mut Rng, live: &'a [Known]) -> &'a Known {
    &live[rng.below(live.len())]
}

/// A stream option: one of the four streams, or (rarely) none, for the default device.
fn stream(rng: &mut Rng) -> Vec<(&'static str, Arg)> {
    if rng.chance(8) {
        Vec::new()
    } else {
        vec![("stream", Arg::Stream(rng.below(STREAMS.len())))]
    }
}

fn dim(rng: &mut Rng, big: bool) -> usize {
    match rng.below(20) {
        0 => 0,
        1 if big => 128 + rng.below(128),
        _ => 1 + rng.below(4),
    }
}

fn random_shape(rng: &mut Rng, big: bool) -> Vec<usize> {
    (0..rng.below(5)).map(|_| dim(rng, big)).collect()
}

fn ints(values: &[usize]) -> Arg {
    Arg::Ints(values.iter().map(|&v| v as i64).collect())
}

/// Values of `dtype` that every op handles exactly in f32 and i32: small integers, halves,
/// now and then a special value.
fn values(rng: &mut Rng, dtype: &str, n: usize) -> Vec<f64> {
    (0..n)
        .map(|_| match dtype {
            "bool" => rng.below(2) as f64,
            "uint32" | "uint8" => rng.below(8) as f64,
            "int32" | "int8" => rng.below(11) as f64 - 5.0,
            _ => match rng.below(24) {
                0 => f64::NAN,
                1 => f64::INFINITY,
                2 => -0.0,
                3 => 1e-3,
                4 => 60.0,
                5..=8 => rng.below(9) as f64 / 2.0 - 2.0,
                _ => rng.below(11) as f64 - 5.0,
            },
        })
        .collect()
}

fn typed_kind(dtype: &str) -> &'static str {
    match dtype {
        "int32" => "Int32Array",
        "uint32" => "Uint32Array",
        "int8" => "Int8Array",
        "bool" | "uint8" => "Uint8Array",
        _ => "Float32Array",
    }
}

/// An array of `shape` and `dtype` from data, as a page makes one.
pub fn data(rng: &mut Rng, shape: &[usize], dtype: &'static str) -> Step {
    let n = shape.iter().product();
    let mut opts = vec![("shape", ints(shape))];
    // bool and the half floats come from another typed array, so they must say their dtype.
    if matches!(dtype, "bool" | "float16" | "bfloat16") || rng.chance(20) {
        opts.push(("dtype", Arg::Str(dtype)));
    }
    Step::Make {
        call: Call {
            op: "array",
            args: vec![Arg::Data(typed_kind(dtype), values(rng, dtype, n))],
            opts,
        },
        count: 1,
    }
}

fn creation(rng: &mut Rng, big: bool) -> Step {
    let shape = random_shape(rng, big);
    let dtype = rng.pick(&DTYPES);
    let with = |mut opts: Vec<(&'static str, Arg)>, rng: &mut Rng| {
        opts.extend(stream(rng));
        opts
    };
    let call = |op, args, opts| Step::Make {
        call: Call { op, args, opts },
        count: 1,
    };
    match rng.below(12) {
        0 => call(
            "zeros",
            vec![ints(&shape)],
            with(vec![("dtype", Arg::Str(dtype))], rng),
        ),
        1 => call(
            "ones",
            vec![ints(&shape)],
            with(vec![("dtype", Arg::Str(dtype))], rng),
        ),
        2 => {
            let value = Arg::Num(rng.below(9) as f64 - 4.0);
            call(
                "full",
                vec![ints(&shape), value],
                with(vec![("dtype", Arg::Str(dtype))], rng),
            )
        }
        3 => {
            let (start, stop, step) = (
                rng.below(5) as f64 - 2.0,
                rng.below(12) as f64,
                rng.pick(&[1.0, 2.0, 0.5, -1.0]),
            );
            let args = vec![Arg::Num(start), Arg::Num(stop), Arg::Num(step)];
            call(
                "arange",
                args,
                with(
                    vec![("dtype", Arg::Str(rng.pick(&["float32", "int32"])))],
                    rng,
                ),
            )
        }
        4 => {
            let args = vec![
                Arg::Num(-1.0),
                Arg::Num(rng.below(5) as f64),
                Arg::Num(rng.below(7) as f64),
            ];
            call("linspace", args, with(Vec::new(), rng))
        }
        5 => call(
            "eye",
            vec![Arg::Num(rng.below(5) as f64)],
            with(vec![("dtype", Arg::Str(dtype))], rng),
        ),
        6 => {
            let opts = vec![
                ("low", Arg::Num(-2.0)),
                ("high", Arg::Num(2.0)),
                ("key", Arg::Num(rng.below(1000) as f64)),
            ];
            call("randomUniform", vec![ints(&shape)], with(opts, rng))
        }
        7 => {
            let opts = vec![("key", Arg::Num(rng.below(1000) as f64))];
            call("randomNormal", vec![ints(&shape)], with(opts, rng))
        }
        _ => data(rng, &shape, dtype),
    }
}

/// A shape that broadcasts with `shape`: a suffix of it, some axes made 1, now and then a
/// leading axis more.
fn broadcastable(rng: &mut Rng, shape: &[usize]) -> Vec<usize> {
    let keep = shape.len() - rng.below(shape.len() + 1);
    let mut out: Vec<usize> = shape[shape.len() - keep..]
        .iter()
        .map(|&d| if rng.chance(30) { 1 } else { d })
        .collect();
    if rng.chance(10) && out.len() < 4 {
        out.insert(0, 1 + rng.below(2));
    }
    out
}

fn broadcasts(a: &[usize], b: &[usize]) -> bool {
    a.iter()
        .rev()
        .zip(b.iter().rev())
        .all(|(&x, &y)| x == y || x == 1 || y == 1)
}

/// An operand that broadcasts with `x`: a live array, a new one, or a number.
fn operand(rng: &mut Rng, state: &State, x: &Known, partner: &mut Vec<Step>) -> Arg {
    match rng.below(10) {
        0..=2 => Arg::Num(rng.below(9) as f64 - 4.0),
        3 => Arg::Bool(rng.chance(50)),
        4..=6 => {
            let fits: Vec<&Known> = state
                .live
                .iter()
                .filter(|k| broadcasts(&k.shape, &x.shape))
                .collect();
            match fits.is_empty() {
                true => Arg::Array(x.index),
                false => Arg::Array(fits[rng.below(fits.len())].index),
            }
        }
        _ => {
            let shape = broadcastable(rng, &x.shape);
            let dtype = rng.pick(&DTYPES);
            partner.push(data(rng, &shape, dtype));
            Arg::Array(state.next + partner.len() - 1)
        }
    }
}

pub fn axis(rng: &mut Rng, rank: usize) -> i64 {
    rng.below(2 * rank.max(1) + 1) as i64 - rank as i64
}

/// Some distinct axes of a rank-`rank` array, or none.
fn axes(rng: &mut Rng, rank: usize) -> Option<Arg> {
    match rng.below(4) {
        0 => None,
        1 => Some(Arg::Num(axis(rng, rank) as f64)),
        _ => {
            let mut list: Vec<i64> = (0..rank as i64).filter(|_| rng.chance(50)).collect();
            if rng.chance(30) && !list.is_empty() {
                list[0] -= rank as i64;
            }
            Some(Arg::Ints(list))
        }
    }
}

/// An op on a live array, after the partner arrays it makes for it.
pub fn op(rng: &mut Rng, state: &State) -> Vec<Step> {
    let x = pick(rng, state.live).clone();
    let rank = x.shape.len();
    let mut steps = Vec::new();
    let mut opts = stream(rng);
    let (op, args): (&'static str, Vec<Arg>) = match rng.below(19) {
        0..=2 => (UNARY[rng.below(ELEMENTWISE)].0, vec![Arg::Array(x.index)]),
        3..=5 => {
            let name = BINARY[rng.below(BINARY.len())].0;
            let y = operand(rng, state, &x, &mut steps);
            let mut args = vec![Arg::Array(x.index), y];
            if rng.chance(30) {
                args.swap(0, 1);
            }
            (name, args)
        }
        6 => {
            let (c, y) = (
                operand(rng, state, &x, &mut steps),
                operand(rng, state, &x, &mut steps),
            );
            let mut args = vec![c, Arg::Array(x.index), y];
            args[1..].rotate_left(rng.below(2));
            ("where", args)
        }
        7 => {
            let bound = |rng: &mut Rng| match rng.below(3) {
                0 => Arg::Null,
                _ => Arg::Num(rng.below(7) as f64 - 3.0),
            };
            ("clip", vec![Arg::Array(x.index), bound(rng), bound(rng)])
        }
        8 => (
            "astype",
            vec![Arg::Array(x.index), Arg::Str(rng.pick(&DTYPES))],
        ),
        // Two slots: the reductions and scans are many.
        9 | 15 => {
            let name = UNARY[ELEMENTWISE + rng.below(UNARY.len() - ELEMENTWISE)].0;
            let sorts = name == "sort" || name == "argsort";
            if name.starts_with("cum") || name == "logcumsumexp" || sorts {
                // Scans and sorts take one axis (or, for sorts, null: the flattened array).
                if rank > 0 && rng.chance(70) {
                    opts.push(("axis", Arg::Num(axis(rng, rank) as f64)));
                } else if sorts && rng.chance(50) {
                    opts.push(("axis", Arg::Null));
                }
                if !sorts {
                    opts.push(("reverse", Arg::Bool(rng.chance(50))));
                    opts.push(("inclusive", Arg::Bool(rng.chance(50))));
                }
                return vec![Step::Make {
                    call: Call {
                        op: name,
                        args: vec![Arg::Array(x.index)],
                        opts,
                    },
                    count: 1,
                }];
            }
            if let Some(a) = axes(rng, rank) {
                opts.push(("axis", a));
            }
            if name != "softmax" && rng.chance(50) {
                opts.push(("keepdims", Arg::Bool(rng.chance(50))));
            }
            (name, vec![Arg::Array(x.index)])
        }
        10 => matmul(rng, state, &x, &mut steps),
        11 => shape_view(rng, &x),
        12 | 13 => slice(rng, &x),
        14 => join(rng, state, &x, &mut steps, &mut opts),
        17 | 18 => super::model::model_op(rng, state, &x, &mut steps, &mut opts),
        _ => {
            let length = x.shape.first().copied().unwrap_or(0);
            let how = match rng.below(2) {
                0 => Arg::Num((1 + rng.below(3)) as f64),
                _ => Arg::Ints(vec![
                    rng.below(length + 2) as i64,
                    rng.below(length + 2) as i64,
                ]),
            };
            if rank > 0 && rng.chance(50) {
                opts.push(("axis", Arg::Num(axis(rng, rank) as f64)));
            }
            let count = match &how {
                Arg::Num(n) => *n as usize,
                _ => 3,
            };
            steps.push(Step::Make {
                call: Call {
                    op: "split",
                    args: vec![Arg::Array(x.index), how],
                    opts,
                },
                count,
            });
            return steps;
        }
    };
    steps.push(Step::Make {
        call: Call { op, args, opts },
        count: 1,
    });
    steps
}

fn matmul(
    rng: &mut Rng,
    state: &State,
    x: &Known,
    partner: &mut Vec<Step>,
) -> (&'static str, Vec<Arg>) {
    let k = x.shape.last().copied().unwrap_or(1);
    let n = rng.below(5);
    let mut shape = match rng.below(3) {
        0 => vec![k],
        1 => vec![k, n],
        _ => vec![1 + rng.below(2), k, n],
    };
    if x.shape.len() > 2 && rng.chance(50) {
        shape = x.shape[..x.shape.len() - 2].to_vec();
        shape.extend([k, n]);
    }
    partner.push(data(rng, &shape, "float32"));
    let y = Arg::Array(state.next + partner.len() - 1);
    ("matmul", vec![Arg::Array(x.index), y])
}

/// reshape, transpose, expandDims, squeeze, broadcastTo or flatten.
fn shape_view(rng: &mut Rng, x: &Known) -> (&'static str, Vec<Arg>) {
    let rank = x.shape.len();
    let size: usize = x.shape.iter().product();
    let a = Arg::Array(x.index);
    match rng.below(6) {
        0 => ("reshape", vec![a, Arg::Ints(reshaped(rng, size))]),
        1 => {
            let mut perm: Vec<i64> = (0..rank as i64).collect();
            for i in (1..perm.len()).rev() {
                perm.swap(i, rng.below(i + 1));
            }
            let axes = if rng.chance(25) {
                Arg::Undefined
            } else {
                Arg::Ints(perm)
            };
            ("transpose", vec![a, axes])
        }
        2 => ("expandDims", vec![a, Arg::Num(axis(rng, rank + 1) as f64)]),
        3 => ("squeeze", vec![a]),
        4 => {
            let mut target: Vec<usize> = x
                .shape
                .iter()
                .map(|&d| if d == 1 { rng.below(4) } else { d })
                .collect();
            if rng.chance(40) && target.len() < 4 {
                target.insert(0, rng.below(3));
            }
            ("broadcastTo", vec![a, ints(&target)])
        }
        _ => ("flatten", vec![a]),
    }
}

/// A shape of `size` elements (one axis -1 now and then).
fn reshaped(rng: &mut Rng, size: usize) -> Vec<i64> {
    let mut dims = Vec::new();
    let mut rest = size;
    for _ in 0..rng.below(4) {
        let d = [1, 2, 3, 4]
            .into_iter()
            .filter(|d| rest.is_multiple_of(*d))
            .collect::<Vec<_>>();
        let d = if size == 0 {
            rng.below(3)
        } else {
            d[rng.below(d.len())]
        };
        dims.push(d as i64);
        rest = rest.checked_div(d).unwrap_or(0);
    }
    if size == 0 && !dims.contains(&0) {
        dims.push(0);
    } else if size > 0 {
        dims.push(if rng.chance(30) { -1 } else { rest as i64 });
    }
    dims
}

fn slice(rng: &mut Rng, x: &Known) -> (&'static str, Vec<Arg>) {
    let bound = |rng: &mut Rng, d: usize| rng.below(2 * d + 3) as i64 - d as i64 - 1;
    let start: Vec<i64> = x.shape.iter().map(|&d| bound(rng, d)).collect();
    let stop: Vec<i64> = x.shape.iter().map(|&d| bound(rng, d)).collect();
    let strides = match rng.below(3) {
        0 => Arg::Undefined,
        _ => Arg::Ints(x.shape.iter().map(|_| rng.pick(&[1, 2, -1, -2])).collect()),
    };
    (
        "slice",
        vec![
            Arg::Array(x.index),
            Arg::Ints(start),
            Arg::Ints(stop),
            strides,
        ],
    )
}

/// concatenate or stack of `x` with itself or new arrays of fitting shapes.
fn join(
    rng: &mut Rng,
    state: &State,
    x: &Known,
    partner: &mut Vec<Step>,
    opts: &mut Vec<(&'static str, Arg)>,
) -> (&'static str, Vec<Arg>) {
    let rank = x.shape.len();
    let stack = rng.chance(40);
    let axis_rank = if stack { rank + 1 } else { rank };
    let at = axis(rng, axis_rank);
    opts.push(("axis", Arg::Num(at as f64)));
    let mut list = vec![x.index];
    for _ in 0..rng.below(3) {
        if rng.chance(40) {
            list.push(x.index);
            continue;
        }
        let mut shape = x.shape.clone();
        if !stack && rank > 0 {
            let a = at.rem_euclid(rank as i64) as usize;
            shape[a] = rng.below(4);
        }
        let dtype = if rng.chance(70) {
            "float32"
        } else {
            rng.pick(&DTYPES)
        };
        partner.push(data(rng, &shape, dtype));
        list.push(state.next + partner.len() - 1);
    }
    let op = if stack { "stack" } else { "concatenate" };
    (op, vec![Arg::Arrays(list)])
}
