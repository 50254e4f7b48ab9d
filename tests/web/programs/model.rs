//! The generator's proposals for the ops a model needs: indexing (gathers and scatters),
//! `topk`, construction (`pad tile repeat roll tril triu diagonal`), `einsum`, the fused layers
//! and `conv1d`. Like the rest, they usually fit their operand's shape and sometimes do not;
//! the reference run drops what the API refuses. A scatter's indices put one update per line
//! of its axis, so no element is written twice (which of two writes lands is unspecified on a
//! GPU) and the interleaved run must give the reference run's bits.

use super::generate::{Known, State, axis, data};
use super::{Arg, Rng, Step};

type Opts = Vec<(&'static str, Arg)>;

/// A model op on `x`: its name and arguments, after any partner arrays pushed to `partner`.
pub fn model_op(
    rng: &mut Rng,
    state: &State,
    x: &Known,
    partner: &mut Vec<Step>,
    opts: &mut Opts,
) -> (&'static str, Vec<Arg>) {
    let rank = x.shape.len();
    let a = Arg::Array(x.index);
    let mut new = |rng: &mut Rng, shape: &[usize], dtype: &'static str| {
        partner.push(data(rng, shape, dtype));
        Arg::Array(state.next + partner.len() - 1)
    };
    let small = |rng: &mut Rng, n: usize| rng.below(2 * n + 1) as i64 - n as i64;
    match rng.below(13) {
        0 => {
            let extent = x.shape.iter().product::<usize>().max(1);
            let indices = match rng.below(3) {
                0 => Arg::Num(small(rng, extent) as f64),
                _ => Arg::Ints((0..rng.below(4)).map(|_| small(rng, extent)).collect()),
            };
            if rank > 0 && rng.chance(60) {
                opts.push(("axis", Arg::Num(axis(rng, rank) as f64)));
            }
            ("take", vec![a, indices])
        }
        1 | 2 => {
            // Indices of x's rank (int32 data: small, some negative, out of range now and
            // then, which clamps on the device), along one axis.
            let along = if rank > 0 { rng.below(rank) } else { 0 };
            let mut shape = x.shape.clone();
            let put = rng.chance(50);
            if let Some(d) = shape.get_mut(along) {
                *d = if put { 1 } else { rng.below(4) };
            }
            let indices = new(rng, &shape, "int32");
            opts.push(("axis", Arg::Num(along as f64)));
            if !put {
                return ("takeAlongAxis", vec![a, indices]);
            }
            let values = match rng.below(3) {
                0 => Arg::Num(small(rng, 4) as f64),
                _ => new(rng, &shape, "float32"),
            };
            ("putAlongAxis", vec![a, indices, values])
        }
        3 => {
            let bound = |rng: &mut Rng, d: usize| rng.below(2 * d + 3) as i64 - d as i64 - 1;
            let start = x.shape.iter().map(|&d| bound(rng, d)).collect();
            let stop = x.shape.iter().map(|&d| bound(rng, d)).collect();
            let strides = x.shape.iter().map(|_| rng.pick(&[1, 2, -1, -2])).collect();
            let update = match rng.below(2) {
                0 => Arg::Num(small(rng, 4) as f64),
                _ => new(rng, &[], "float32"),
            };
            (
                "sliceUpdate",
                vec![
                    a,
                    update,
                    Arg::Ints(start),
                    Arg::Ints(stop),
                    Arg::Ints(strides),
                ],
            )
        }
        4 => {
            let last = x.shape.last().copied().unwrap_or(1);
            ("topk", vec![a, Arg::Num(rng.below(last + 2) as f64)])
        }
        5 => {
            let width = match rng.below(2) {
                0 => Arg::Num(rng.below(3) as f64),
                _ => Arg::Ints(vec![rng.below(3) as i64, rng.below(3) as i64]),
            };
            if rng.chance(40) {
                opts.push(("mode", Arg::Str("edge")));
            } else if rng.chance(50) {
                opts.push(("constantValues", Arg::Num(small(rng, 3) as f64)));
            }
            ("pad", vec![a, width])
        }
        6 => {
            let reps = (0..1 + rng.below(3)).map(|_| rng.below(3) as i64).collect();
            ("tile", vec![a, Arg::Ints(reps)])
        }
        7 | 8 => {
            if rank > 0 && rng.chance(60) {
                opts.push(("axis", Arg::Num(axis(rng, rank) as f64)));
            }
            match rng.below(2) {
                0 => ("repeat", vec![a, Arg::Num(rng.below(3) as f64)]),
                _ => ("roll", vec![a, Arg::Num(small(rng, 5) as f64)]),
            }
        }
        9 => {
            let name = if rng.chance(50) { "tril" } else { "triu" };
            (name, vec![a, Arg::Num(small(rng, 2) as f64)])
        }
        10 => {
            opts.push(("offset", Arg::Num(small(rng, 2) as f64)));
            ("diagonal", vec![a])
        }
        11 => {
            let last = x.shape.last().copied().unwrap_or(1);
            let weight = match rng.below(2) {
                0 => Arg::Null,
                _ => new(rng, &[last], "float32"),
            };
            let eps = Arg::Num(rng.pick(&[1e-5, 0.5]));
            match rng.below(2) {
                0 => ("fast.layerNorm", vec![a, weight, Arg::Null, eps]),
                _ => ("fast.rmsNorm", vec![a, weight, eps]),
            }
        }
        _ => {
            // einsum of x alone: its axes permuted, some summed away; or conv1d of a rank-3 x.
            if rank == 3 && rng.chance(60) {
                let shape = [1 + rng.below(2), 1 + rng.below(2), x.shape[2]];
                let weight = new(rng, &shape, "float32");
                opts.push(("padding", Arg::Num(rng.below(2) as f64)));
                return ("conv1d", vec![a, weight]);
            }
            let specs: &[&'static str] = match rank {
                0 => &["->"],
                1 => &["a->a", "a->"],
                2 => &["ab->ba", "ab->a", "ab->b", "ab->"],
                3 => &["abc->cab", "abc->ac", "abc->b", "abc->cba"],
                _ => &["abcd->dcba", "abcd->bd", "abcd->a", "abcd->acdb"],
            };
            let spec = rng.pick(specs);
            ("einsum", vec![Arg::Str(spec), a])
        }
    }
}
