//! Softmax and logsumexp over contiguous float32 rows, fused (see [`RowNorm`]): a pass for the
//! row's maximum, then one that takes exp(x - max) four lanes at a time and sums it (softmax
//! stores it too), then for softmax a pass that scales by the sum's reciprocal.

use std::mem::MaybeUninit;

use crate::cpu::math::{self, LaneFn};
use crate::cpu::pool;
use crate::cpu::simd::{F32x4, LANES};
use crate::graph::primitive::RowNorm;

/// `op` over `rows` rows of `row_len` elements of `x`; the result's words, row-major. An
/// empty row's logsumexp is -inf, the log of an empty sum.
pub fn row_norm(op: RowNorm, x: &[f32], rows: usize, row_len: usize) -> Vec<u32> {
    if row_len == 0 {
        let out = match op {
            RowNorm::Softmax => Vec::new(),
            RowNorm::LogSumExp => vec![f32::NEG_INFINITY; rows],
        };
        return bytemuck::cast_vec(out);
    }
    // Rows split over the CPU pool: each row is a few passes of its length.
    let per = pool::rows_per_part(rows, 4 * row_len);
    let out: Vec<f32> = match op {
        RowNorm::Softmax => {
            let n = rows * row_len;
            let mut out = Vec::with_capacity(n);
            let dst = &mut out.spare_capacity_mut()[..n];
            pool::fill_parts(dst, per * row_len, |start, to| {
                let from = x[start..start + to.len()].chunks_exact(row_len);
                for (row, to) in from.zip(to.chunks_exact_mut(row_len)) {
                    softmax_row(row, to);
                }
            });
            // SAFETY: softmax_row wrote every element of every row.
            unsafe { out.set_len(n) };
            out
        }
        RowNorm::LogSumExp => {
            let mut out = vec![0f32; rows];
            pool::fill_parts(&mut out, per, |first, to| {
                let from = x[first * row_len..].chunks_exact(row_len);
                for (row, t) in from.zip(to) {
                    *t = logsumexp_row(row);
                }
            });
            out
        }
    };
    bytemuck::cast_vec(out)
}

/// Elements per block of the exp sum: each block's four-lane sums are added in f64.
const BLOCK: usize = 256;

/// The row's largest element, NaN if any is: four accumulators, so that the comparisons do
/// not wait on each other, with `pmax`, one instruction where a NaN-propagating max takes
/// several, and NaN found apart (x == x fails only for NaN).
fn row_max(row: &[f32]) -> f32 {
    let mut acc = [F32x4::splat(f32::NEG_INFINITY); 4];
    let mut ordered = acc[0].eq(acc[0]);
    let mut quads = row.chunks_exact(4 * LANES);
    for quad in &mut quads {
        for (k, a) in acc.iter_mut().enumerate() {
            let v = F32x4::load(&quad[k * LANES..]);
            *a = a.pmax(v);
            ordered = ordered.and(v.eq(v));
        }
    }
    for v in quads.remainder().chunks(LANES) {
        let v = F32x4::load_partial(v, f32::NEG_INFINITY);
        acc[0] = acc[0].pmax(v);
        ordered = ordered.and(v.eq(v));
    }
    if !ordered.all() {
        return f32::NAN;
    }
    let [a, b, c, d] = acc[0].pmax(acc[1]).pmax(acc[2].pmax(acc[3])).to_array();
    a.max(b).max(c.max(d))
}

/// Sums exp(x - m) over the row, each block of [`BLOCK`] elements in a four-lane
/// accumulator; with `STORE`, writes each term to `out` too.
fn sum_exp<const STORE: bool>(row: &[f32], m: f32, out: &mut [MaybeUninit<f32>]) -> f64 {
    // x - m <= 0: no overflow to handle.
    let (exp, shift) = (math::ExpNonPositive::new(), F32x4::splat(m));
    let term = |x: F32x4| exp.apply(x - shift);
    // Padding lanes are -inf: e^-inf = 0 adds nothing.
    let last = |rest: &[f32]| term(F32x4::load_partial(rest, f32::NEG_INFINITY));
    let mut total = 0f64;
    let mut out_blocks = out.chunks_mut(BLOCK);
    for block in row.chunks(BLOCK) {
        let mut acc = F32x4::splat(0.0);
        let mut vectors = block.chunks_exact(LANES);
        if STORE {
            let mut to = out_blocks
                .next()
                .expect("out holds the row")
                .chunks_exact_mut(LANES);
            for (v, d) in (&mut vectors).zip(&mut to) {
                let e = term(F32x4::load(v));
                e.store_uninit(d);
                acc = acc + e;
            }
            let rest = vectors.remainder();
            if !rest.is_empty() {
                let e = last(rest);
                for (o, e) in to.into_remainder().iter_mut().zip(e.to_array()) {
                    o.write(e);
                }
                acc = acc + e;
            }
        } else {
            for v in &mut vectors {
                acc = acc + term(F32x4::load(v));
            }
            if !vectors.remainder().is_empty() {
                acc = acc + last(vectors.remainder());
            }
        }
        total += acc.sum() as f64;
    }
    total
}

fn softmax_row(row: &[f32], out: &mut [MaybeUninit<f32>]) {
    let m = row_max(row);
    if !m.is_finite() {
        out.iter_mut().for_each(|o| {
            o.write(f32::NAN);
        });
        return;
    }
    let total = sum_exp::<true>(row, m, out);
    // SAFETY: sum_exp stored every element of the row above.
    let out: &mut [f32] = unsafe { &mut *(out as *mut [MaybeUninit<f32>] as *mut [f32]) };
    // A multiply by the reciprocal (rounded once from f64) instead of a divide, which takes
    // six times as long: one more rounding, half a ULP.
    let scale = F32x4::splat((1.0 / total) as f32);
    let mut vectors = out.chunks_exact_mut(LANES);
    for v in &mut vectors {
        (F32x4::load(v) * scale).store(v);
    }
    let rest = vectors.into_remainder();
    for v in rest {
        *v = (F32x4::splat(*v) * scale).to_array()[0];
    }
}

fn logsumexp_row(row: &[f32]) -> f32 {
    let m = row_max(row);
    if !m.is_finite() {
        return m;
    }
    (sum_exp::<false>(row, m, &mut []).ln() + m as f64) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floats(words: Vec<u32>) -> Vec<f32> {
        bytemuck::cast_vec(words)
    }

    #[test]
    fn softmax_rows_sum_to_one_and_non_finite_rows_are_nan() {
        let x = [1.0, 2.0, 3.0, f32::NEG_INFINITY, 0.0, f32::INFINITY];
        let out = floats(row_norm(RowNorm::Softmax, &x, 2, 3));
        let total: f32 = out[..3].iter().sum();
        assert!((total - 1.0).abs() < 1e-6);
        assert!(out[2] > out[1] && out[1] > out[0]);
        assert!(out[3..].iter().all(|v| v.is_nan()), "{out:?}");
    }

    #[test]
    fn every_row_length_is_normalized_whole() {
        for len in 1..300 {
            let x: Vec<f32> = (0..2 * len).map(|i| (i as f32 * 0.7).cos() * 5.0).collect();
            let out = floats(row_norm(RowNorm::Softmax, &x, 2, len));
            for (row, y) in x.chunks(len).zip(out.chunks(len)) {
                let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
                let total: f64 = row.iter().map(|&v| (v as f64 - m).exp()).sum();
                for (&v, &got) in row.iter().zip(y) {
                    let want = (v as f64 - m).exp() / total;
                    // x - max rounds in float32: e^x's error grows with |x - max|.
                    let bound = (3.0 + (v as f64 - m).abs()) * 1.2e-7 * want;
                    assert!((got as f64 - want).abs() <= bound, "{len}: {got} {want}");
                }
            }
            let lse = floats(row_norm(RowNorm::LogSumExp, &x, 2, len));
            let want = x[..len].iter().map(|&v| (v as f64).exp()).sum::<f64>().ln();
            assert!(
                (lse[0] as f64 - want).abs() <= 2e-7 * want.abs().max(1.0),
                "{len}"
            );
        }
    }

    #[test]
    fn logsumexp_is_the_shifted_log_of_the_sum() {
        let x = [
            1000.0,
            1000.0,
            f32::NEG_INFINITY,
            f32::NEG_INFINITY,
            1.0,
            f32::NAN,
        ];
        let out = floats(row_norm(RowNorm::LogSumExp, &x, 3, 2));
        assert!((out[0] - (1000.0 + 2f32.ln())).abs() < 1e-3);
        assert_eq!(out[1], f32::NEG_INFINITY);
        assert!(out[2].is_nan());
        let empty = floats(row_norm(RowNorm::LogSumExp, &[], 2, 0));
        assert_eq!(empty, vec![f32::NEG_INFINITY; 2]);
    }

    #[test]
    fn a_nan_anywhere_in_a_row_makes_the_row_nan() {
        // Each position, beside each kind of neighbour: the exp never sees a NaN.
        let len = 37;
        for at in 0..len {
            for other in [0.5, f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
                let mut x: Vec<f32> = (0..len).map(|i| i as f32 * 0.25).collect();
                x[(at + 5) % len] = other;
                x[at] = f32::NAN;
                let soft = floats(row_norm(RowNorm::Softmax, &x, 1, len));
                assert!(soft.iter().all(|v| v.is_nan()), "{at} {other}: {soft:?}");
                let lse = floats(row_norm(RowNorm::LogSumExp, &x, 1, len));
                assert!(lse[0].is_nan(), "{at} {other}: {lse:?}");
            }
        }
    }
}
