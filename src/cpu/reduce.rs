//! Reductions over the trailing axes of a row-major input: `rows` outputs, each reducing a
//! contiguous run of `len` elements. Float sums run on sixteen float32 accumulators (four
//! vectors) over blocks of 256 elements, and the blocks add up in `f64`: each block's error
//! stays near that of 16 additions, so the sum is as accurate as the GPU's tree or better.
//! Float max and min run four lanes at a time; products and the arg-reductions run in order.

use crate::cpu::pool;
use crate::cpu::simd::{F32x4, LANES};
use crate::dtype::DType;
use crate::graph::primitive::ReduceOp;

/// Reduces `rows` rows of `len` elements (works for `len == 0`, giving the identity).
pub fn reduce_rows(op: ReduceOp, dtype: DType, words: &[u32], rows: usize, len: usize) -> Vec<u32> {
    let mut out = vec![0u32; rows];
    pool::fill_parts(&mut out, pool::rows_per_part(rows, len), |first, to| {
        for (r, t) in (first..).zip(to) {
            *t = reduce_row(op, dtype, &words[r * len..(r + 1) * len]);
        }
    });
    out
}

fn reduce_row(op: ReduceOp, dtype: DType, row: &[u32]) -> u32 {
    if dtype == DType::Float32 {
        let values: &[f32] = bytemuck::cast_slice(row);
        match op {
            ReduceOp::Sum => return (sum_f32(values) as f32).to_bits(),
            ReduceOp::Max => return extreme(values, f32::NEG_INFINITY, F32x4::max).to_bits(),
            ReduceOp::Min => return extreme(values, f32::INFINITY, F32x4::min).to_bits(),
            _ => {}
        }
    }
    match dtype {
        DType::Float32 => float_row(op, row.iter().map(|&w| f32::from_bits(w))),
        DType::Int32 => int_row(
            op,
            row.iter().map(|&w| w as i32 as i64),
            i32::MIN as i64,
            i32::MAX as i64,
        ),
        DType::Uint32 => int_row(op, row.iter().map(|&w| w as i64), 0, u32::MAX as i64),
        // Bools count as 0/1; their sums and products are int32.
        DType::Bool => int_row(op, row.iter().map(|&w| w as i64), 0, 1),
        packed => unreachable!("{packed:?} is widened before a kernel runs"),
    }
}

/// Elements per block whose float32 partial sums are added in `f64`.
const BLOCK: usize = 256;

/// The sum of `values`, blocked as the module comment says.
pub fn sum_f32(values: &[f32]) -> f64 {
    let mut total = 0f64;
    for block in values.chunks(BLOCK) {
        let mut acc = [F32x4::splat(0.0); 4];
        let mut quads = block.chunks_exact(4 * LANES);
        for quad in &mut quads {
            for (k, a) in acc.iter_mut().enumerate() {
                *a = *a + F32x4::load(&quad[k * LANES..]);
            }
        }
        for (k, rest) in quads.remainder().chunks(LANES).enumerate() {
            acc[k] = acc[k] + F32x4::load_partial(rest, 0.0);
        }
        total += ((acc[0] + acc[2]) + (acc[1] + acc[3])).sum() as f64;
    }
    total
}

/// The maximum (`max`) or minimum (`min`) of `values`, `identity` when empty; NaN wins.
fn extreme(values: &[f32], identity: f32, pick: impl Fn(F32x4, F32x4) -> F32x4) -> f32 {
    let mut acc = F32x4::splat(identity);
    let mut vectors = values.chunks_exact(LANES);
    for v in &mut vectors {
        acc = pick(acc, F32x4::load(v));
    }
    acc = pick(acc, F32x4::load_partial(vectors.remainder(), identity));
    let [a, b, c, d] = acc.to_array();
    let two = |x: f32, y: f32| pick(F32x4::splat(x), F32x4::splat(y)).to_array()[0];
    two(two(a, b), two(c, d))
}

fn float_row(op: ReduceOp, values: impl Iterator<Item = f32>) -> u32 {
    let mut best: Option<(usize, f32)> = None;
    let (mut sum, mut prod) = (0f64, 1f64);
    for (i, v) in values.enumerate() {
        sum += v as f64;
        prod *= v as f64;
        let better = match (op, best) {
            (_, None) => true,
            (_, Some((_, b))) if b.is_nan() => false,
            (ReduceOp::Max | ReduceOp::ArgMax, Some((_, b))) => v.is_nan() || v > b,
            (ReduceOp::Min | ReduceOp::ArgMin, Some((_, b))) => v.is_nan() || v < b,
            _ => false,
        };
        if better {
            best = Some((i, v));
        }
    }
    match op {
        ReduceOp::Sum => (sum as f32).to_bits(),
        ReduceOp::Prod => (prod as f32).to_bits(),
        ReduceOp::Max => best.map_or(f32::NEG_INFINITY, |b| b.1).to_bits(),
        ReduceOp::Min => best.map_or(f32::INFINITY, |b| b.1).to_bits(),
        ReduceOp::ArgMax | ReduceOp::ArgMin => best.map_or(0, |b| b.0 as u32),
    }
}

/// Integer rows in i64; sums and products wrap to 32 bits like the GPU's.
fn int_row(op: ReduceOp, values: impl Iterator<Item = i64>, lowest: i64, highest: i64) -> u32 {
    let mut best: Option<(usize, i64)> = None;
    let (mut sum, mut prod) = (0u32, 1u32);
    for (i, v) in values.enumerate() {
        sum = sum.wrapping_add(v as u32);
        prod = prod.wrapping_mul(v as u32);
        let better = match (op, best) {
            (_, None) => true,
            (ReduceOp::Max | ReduceOp::ArgMax, Some((_, b))) => v > b,
            (ReduceOp::Min | ReduceOp::ArgMin, Some((_, b))) => v < b,
            _ => false,
        };
        if better {
            best = Some((i, v));
        }
    }
    match op {
        ReduceOp::Sum => sum,
        ReduceOp::Prod => prod,
        ReduceOp::Max => best.map_or(lowest, |b| b.1) as u32,
        ReduceOp::Min => best.map_or(highest, |b| b.1) as u32,
        ReduceOp::ArgMax | ReduceOp::ArgMin => best.map_or(0, |b| b.0 as u32),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn sums_rows_and_finds_first_maximum() {
        let words = f(&[1.0, 5.0, 5.0, -2.0, 0.5, 0.25]);
        assert_eq!(
            reduce_rows(ReduceOp::Sum, DType::Float32, &words, 2, 3),
            f(&[11.0, -1.25])
        );
        assert_eq!(
            reduce_rows(ReduceOp::ArgMax, DType::Float32, &words, 2, 3),
            vec![1, 1]
        );
        assert_eq!(
            reduce_rows(ReduceOp::ArgMin, DType::Float32, &words, 2, 3),
            vec![0, 0]
        );
    }

    #[test]
    fn nan_wins_max_and_argmax() {
        let words = f(&[1.0, f32::NAN, 7.0]);
        assert!(
            f32::from_bits(reduce_rows(ReduceOp::Max, DType::Float32, &words, 1, 3)[0]).is_nan()
        );
        assert_eq!(
            reduce_rows(ReduceOp::ArgMax, DType::Float32, &words, 1, 3),
            vec![1]
        );
    }

    #[test]
    fn empty_rows_give_the_identity() {
        assert_eq!(
            reduce_rows(ReduceOp::Sum, DType::Int32, &[], 2, 0),
            vec![0, 0]
        );
        assert_eq!(
            reduce_rows(ReduceOp::Prod, DType::Float32, &[], 1, 0),
            f(&[1.0])
        );
    }

    #[test]
    fn float_sums_and_extremes_cover_every_length_and_nan() {
        for n in [0usize, 1, 3, 4, 15, 16, 17, 255, 256, 257, 1000] {
            let values: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
            let words = f(&values);
            let want: f64 = values.iter().map(|&v| v as f64).sum();
            let got = f32::from_bits(reduce_rows(ReduceOp::Sum, DType::Float32, &words, 1, n)[0]);
            // Float32 sums of 16 terms per lane: a few float32 spacings of the terms' size.
            let size: f64 = values.iter().map(|&v| v.abs() as f64).sum();
            assert!(
                (got as f64 - want).abs() <= 1e-7 * (1.0 + size),
                "{n}: {got} {want}"
            );
            let max = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let got_max = reduce_rows(ReduceOp::Max, DType::Float32, &words, 1, n)[0];
            assert_eq!(f32::from_bits(got_max), max, "{n}");
            let min = values.iter().copied().fold(f32::INFINITY, f32::min);
            let got_min = reduce_rows(ReduceOp::Min, DType::Float32, &words, 1, n)[0];
            assert_eq!(f32::from_bits(got_min), min, "{n}");
        }
        let words = f(&[1.0, 2.0, 3.0, 4.0, 5.0, f32::NAN, 0.0]);
        let min = reduce_rows(ReduceOp::Min, DType::Float32, &words, 1, 7)[0];
        assert!(f32::from_bits(min).is_nan());
    }

    #[test]
    fn int_sums_wrap() {
        let words = [i32::MAX as u32, 1];
        assert_eq!(
            reduce_rows(ReduceOp::Sum, DType::Int32, &words, 1, 2),
            vec![i32::MIN as u32]
        );
    }
}
