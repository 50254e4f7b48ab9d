//! Drivers that run a four-lane function over dense float32 data: the fast path of the
//! elementwise kernels. The last partial vector is padded, so every element goes through the
//! same instructions wherever it sits; the output is written once, never zeroed first.

use std::mem::MaybeUninit;

use crate::cpu::elementwise::Strided;
use crate::cpu::pool;
use crate::cpu::simd::{F32x4, LANES};

/// One operand of a binary lane function: dense data, one value for every element, or one row
/// for every row (a bias added to a matrix), which only pairs with a dense side.
#[derive(Clone, Copy)]
pub enum Side<'a> {
    Dense(&'a [f32]),
    Splat(f32),
    Row(&'a [f32]),
}

/// The shortest row a [`Side::Row`] is made for: a shorter one is faster gathered.
const MIN_ROW: usize = 4 * LANES;

/// Whether [`binary`] takes this pair of sides.
pub fn pairs(a: &Side, b: &Side) -> bool {
    !matches!(
        (a, b),
        (Side::Row(_), Side::Row(_) | Side::Splat(_)) | (Side::Splat(_), Side::Row(_))
    )
}

/// `f` over `x`, split over the CPU pool when long.
pub fn unary(x: &[f32], f: impl Fn(F32x4) -> F32x4 + Sync) -> Vec<f32> {
    split(x, |from, dst| unary_into(from, dst, &f))
}

/// A new array as long as `x`, made by `fill` from runs of `x` into the same runs of the
/// output (every slot of which it writes), split over the CPU pool when long.
pub fn split(x: &[f32], fill: impl Fn(&[f32], &mut [MaybeUninit<f32>]) + Sync) -> Vec<f32> {
    let n = x.len();
    let mut out = Vec::with_capacity(n);
    let per = pool::part_len(n, 1, LANES);
    pool::fill_parts(&mut out.spare_capacity_mut()[..n], per, |start, dst| {
        fill(&x[start..start + dst.len()], dst);
    });
    // SAFETY: the parts wrote all n elements.
    unsafe { out.set_len(n) };
    out
}

/// `f` over `x` into `dst`, as long.
pub fn unary_into(x: &[f32], dst: &mut [MaybeUninit<f32>], f: &impl Fn(F32x4) -> F32x4) {
    let mut from = x.chunks_exact(LANES);
    let mut to = dst.chunks_exact_mut(LANES);
    for (s, d) in (&mut from).zip(&mut to) {
        f(F32x4::load(s)).store_uninit(d);
    }
    finish(from.remainder(), to.into_remainder(), f);
}

/// `f` over `n` pairs from `a` and `b` (a dense side holds `n` elements).
pub fn binary(n: usize, a: Side, b: Side, f: impl Fn(F32x4, F32x4) -> F32x4 + Sync) -> Vec<f32> {
    match (a, b) {
        (Side::Dense(a), Side::Dense(b)) => zip(&a[..n], &b[..n], f),
        (Side::Dense(a), Side::Splat(v)) => unary(&a[..n], |x| f(x, F32x4::splat(v))),
        (Side::Splat(v), Side::Dense(b)) => unary(&b[..n], |y| f(F32x4::splat(v), y)),
        (Side::Splat(u), Side::Splat(v)) => {
            let [value, ..] = f(F32x4::splat(u), F32x4::splat(v)).to_array();
            vec![value; n]
        }
        (Side::Dense(a), Side::Row(r)) => rows(&a[..n], r, f),
        (Side::Row(r), Side::Dense(b)) => rows(&b[..n], r, |y, x| f(x, y)),
        _ => unreachable!("binary is given only the sides it pairs"),
    }
}

/// `f` over each row of `a` (rows as long as `row`) with `row`, split over the CPU pool by
/// whole rows when long.
fn rows(a: &[f32], row: &[f32], f: impl Fn(F32x4, F32x4) -> F32x4 + Sync) -> Vec<f32> {
    let (n, len) = (a.len(), row.len());
    let mut out = Vec::with_capacity(n);
    let per = pool::rows_per_part(n / len, len) * len;
    pool::fill_parts(&mut out.spare_capacity_mut()[..n], per, |start, dst| {
        for (at, d) in (start..).step_by(len).zip(dst.chunks_exact_mut(len)) {
            zip_into(&a[at..at + len], row, d, &f);
        }
    });
    // SAFETY: the parts wrote all n elements (whole rows: `per` is a multiple of `len`).
    unsafe { out.set_len(n) };
    out
}

fn zip(a: &[f32], b: &[f32], f: impl Fn(F32x4, F32x4) -> F32x4 + Sync) -> Vec<f32> {
    let n = a.len();
    let mut out = Vec::with_capacity(n);
    let per = pool::part_len(n, 1, LANES);
    pool::fill_parts(&mut out.spare_capacity_mut()[..n], per, |start, dst| {
        let end = start + dst.len();
        zip_into(&a[start..end], &b[start..end], dst, &f);
    });
    // SAFETY: the parts wrote all n elements.
    unsafe { out.set_len(n) };
    out
}

/// `f` over pairs of `a` and `b` into `dst`, all as long.
pub fn zip_into(
    a: &[f32],
    b: &[f32],
    dst: &mut [MaybeUninit<f32>],
    f: &impl Fn(F32x4, F32x4) -> F32x4,
) {
    let (mut ca, mut cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let mut to = dst.chunks_exact_mut(LANES);
    for ((x, y), d) in (&mut ca).zip(&mut cb).zip(&mut to) {
        f(F32x4::load(x), F32x4::load(y)).store_uninit(d);
    }
    let rest = to.into_remainder();
    if !rest.is_empty() {
        let y = F32x4::load_partial(cb.remainder(), 0.0);
        finish(ca.remainder(), rest, |x| f(x, y));
    }
}

/// The last partial vector: `from` padded with zeros, and as many lanes stored as `to` holds.
fn finish(from: &[f32], to: &mut [MaybeUninit<f32>], f: impl Fn(F32x4) -> F32x4) {
    if to.is_empty() {
        return;
    }
    let lanes = f(F32x4::load_partial(from, 0.0)).to_array();
    for (d, v) in to.iter_mut().zip(lanes) {
        d.write(v);
    }
}

/// A strided operand over `shape` as a lane side: its data when it is dense row-major, its one
/// value when every element reads the same, its one row when every row reads the same, or
/// `None` when it must be gathered first.
pub fn side<'a>(shape: &[usize], x: &Strided<'a, f32>) -> Option<Side<'a>> {
    let n = crate::graph::shape::numel(shape);
    let (dims, [strides]) = crate::graph::shape::collapse_dims(shape, [&x.strides[..]]);
    if n == 0 {
        return Some(Side::Dense(&[]));
    }
    match (&dims[..], &strides[..]) {
        (_, [0]) => Some(Side::Splat(x.data[x.offset])),
        ([_], [1]) => Some(Side::Dense(&x.data[x.offset..x.offset + n])),
        ([_, len], [0, 1]) if *len >= MIN_ROW => Some(Side::Row(&x.data[x.offset..x.offset + len])),
        _ => None,
    }
}

/// `x`'s elements over `shape`, row-major: its dense side, or a gathered copy.
pub fn dense<'a>(shape: &[usize], x: &Strided<'a, f32>) -> std::borrow::Cow<'a, [f32]> {
    match side(shape, x) {
        Some(Side::Dense(data)) => std::borrow::Cow::Borrowed(data),
        _ => std::borrow::Cow::Owned(crate::cpu::elementwise::map1(shape, x, |v| v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strided(data: &[f32], strides: Vec<isize>, offset: usize) -> Strided<'_, f32> {
        Strided {
            data,
            strides,
            offset,
        }
    }

    #[test]
    fn every_length_is_written_whole() {
        for n in 0..11 {
            let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
            let y = unary(&x, |v| v + F32x4::splat(1.0));
            assert_eq!(y, (1..=n).map(|i| i as f32).collect::<Vec<_>>());
            let z = binary(n, Side::Dense(&x), Side::Dense(&y), |a, b| a * b);
            assert_eq!(z, x.iter().zip(&y).map(|(a, b)| a * b).collect::<Vec<_>>());
            let w = binary(n, Side::Splat(2.0), Side::Dense(&x), |a, b| a - b);
            assert_eq!(w, x.iter().map(|b| 2.0 - b).collect::<Vec<_>>());
        }
        assert_eq!(
            binary(3, Side::Splat(2.0), Side::Splat(3.0), |a, b| a * b),
            [6.0; 3]
        );
    }

    #[test]
    fn sides_are_dense_splat_or_gathered() {
        let data = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
        let dense_rows = strided(&data, vec![3, 1], 0);
        assert!(matches!(side(&[2, 3], &dense_rows), Some(Side::Dense(d)) if d.len() == 6));
        let offset = strided(&data, vec![1], 2);
        assert!(matches!(
            side(&[3], &offset),
            Some(Side::Dense([2.0, 3.0, 4.0]))
        ));
        let broadcast = strided(&data, vec![0, 0], 4);
        assert!(matches!(side(&[2, 3], &broadcast), Some(Side::Splat(4.0))));
        let transposed = strided(&data, vec![1, 3], 0);
        assert!(side(&[3, 2], &transposed).is_none());
        assert_eq!(
            &*dense(&[3, 2], &transposed),
            &[0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
        );
        assert!(matches!(side(&[0, 3], &transposed), Some(Side::Dense([]))));
        // A row read by every row: a side of its own when long enough to pay.
        let row: Vec<f32> = (0..MIN_ROW).map(|v| v as f32).collect();
        let rows = strided(&row, vec![0, 1], 0);
        assert!(matches!(side(&[5, MIN_ROW], &rows), Some(Side::Row(r)) if r.len() == MIN_ROW));
        assert!(side(&[5, 3], &strided(&data, vec![0, 1], 0)).is_none());
    }

    #[test]
    fn a_row_side_gives_each_row_the_scalar_answer() {
        #[cfg(not(target_arch = "wasm32"))]
        crate::cpu::pool::start_native(2);
        for (rows, len) in [(1, 16), (3, 17), (700, 64), (5000, 33)] {
            let x: Vec<f32> = (0..rows * len)
                .map(|v| (v % 97) as f32 * 0.37 - 9.0)
                .collect();
            let r: Vec<f32> = (0..len).map(|v| v as f32 * 1.3 - 4.0).collect();
            let n = x.len();
            let sum = binary(n, Side::Dense(&x), Side::Row(&r), |a, b| a + b);
            let quotient = binary(n, Side::Row(&r), Side::Dense(&x), |a, b| a / b);
            for i in 0..n {
                assert_eq!(
                    sum[i].to_bits(),
                    (x[i] + r[i % len]).to_bits(),
                    "{rows}x{len}"
                );
                let q = r[i % len] / x[i];
                assert_eq!(quotient[i].to_bits(), q.to_bits(), "{rows}x{len}");
            }
        }
        assert!(!pairs(&Side::Row(&[]), &Side::Splat(1.0)));
        assert!(pairs(&Side::Dense(&[]), &Side::Row(&[])));
    }
}
