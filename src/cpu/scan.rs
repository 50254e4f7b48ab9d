//! Running reductions along rows (`cumsum cumprod cummax cummin logcumsumexp`), in order from
//! the row's start (or its end, reversed); exclusive scans shift by one and start from the
//! op's identity.

use crate::cpu::binary::logaddexp;
use crate::dtype::DType;
use crate::graph::primitive::ScanOp;

/// How a scan combines in one dtype: its identity and its step.
trait Combine: Copy {
    fn identity(op: ScanOp) -> Self;
    fn combine(op: ScanOp, acc: Self, x: Self) -> Self;
}

impl Combine for f32 {
    fn identity(op: ScanOp) -> f32 {
        match op {
            ScanOp::Sum => 0.0,
            ScanOp::Prod => 1.0,
            ScanOp::Max | ScanOp::LogAddExp => f32::NEG_INFINITY,
            ScanOp::Min => f32::INFINITY,
        }
    }

    fn combine(op: ScanOp, acc: f32, x: f32) -> f32 {
        match op {
            ScanOp::Sum => acc + x,
            ScanOp::Prod => acc * x,
            _ if acc.is_nan() || x.is_nan() => f32::NAN,
            ScanOp::Max => acc.max(x),
            ScanOp::Min => acc.min(x),
            ScanOp::LogAddExp => logaddexp(acc, x),
        }
    }
}

macro_rules! integer_combine {
    ($t:ty) => {
        impl Combine for $t {
            fn identity(op: ScanOp) -> $t {
                match op {
                    ScanOp::Sum | ScanOp::LogAddExp => 0,
                    ScanOp::Prod => 1,
                    ScanOp::Max => <$t>::MIN,
                    ScanOp::Min => <$t>::MAX,
                }
            }

            fn combine(op: ScanOp, acc: $t, x: $t) -> $t {
                match op {
                    ScanOp::Sum | ScanOp::LogAddExp => acc.wrapping_add(x),
                    ScanOp::Prod => acc.wrapping_mul(x),
                    ScanOp::Max => acc.max(x),
                    ScanOp::Min => acc.min(x),
                }
            }
        }
    };
}
integer_combine!(i32);
integer_combine!(u32);

/// The scan node of `op` over `input`'s rows (its last axis), in `out`'s dtype.
pub fn eval(
    op: ScanOp,
    reverse: bool,
    inclusive: bool,
    out: DType,
    input: &crate::cpu::Spec,
    host: &crate::cpu::HostInput,
) -> crate::error::Result<Vec<u32>> {
    let words = crate::cpu::row_major(input, host)?;
    let words = crate::dtype::convert::cast(&words, input.size(), input.dtype(), out);
    let row_len = input.shape().last().copied().unwrap_or(1);
    Ok(scan(op, out, &words, row_len, reverse, inclusive))
}

/// The scan of each row of `words` (row-major, `row_len` to a row, already in `dtype`).
pub fn scan(
    op: ScanOp,
    dtype: DType,
    words: &[u32],
    row_len: usize,
    reverse: bool,
    inclusive: bool,
) -> Vec<u32> {
    let run = Rows {
        op,
        row_len,
        reverse,
        inclusive,
    };
    match dtype {
        DType::Float32 => bytemuck::cast_vec(run.all::<f32>(bytemuck::cast_slice(words))),
        DType::Int32 => bytemuck::cast_vec(run.all::<i32>(bytemuck::cast_slice(words))),
        DType::Uint32 => run.all::<u32>(words),
        // Bool words are 0 or 1: max and min are "or" and "and", products "and". Only min's
        // identity (all ones as a u32) is not a bool word: it stands for true.
        DType::Bool => run
            .all::<u32>(words)
            .into_iter()
            .map(|w| w.min(1))
            .collect(),
        packed => unreachable!("{packed:?} is widened before a kernel runs"),
    }
}

struct Rows {
    op: ScanOp,
    row_len: usize,
    reverse: bool,
    inclusive: bool,
}

impl Rows {
    fn all<T: Combine + bytemuck::Pod>(&self, x: &[T]) -> Vec<T> {
        let mut out = vec![T::identity(self.op); x.len()];
        if self.row_len == 0 {
            return out;
        }
        for (row, dst) in x.chunks(self.row_len).zip(out.chunks_mut(self.row_len)) {
            self.row(row, dst);
        }
        out
    }

    fn row<T: Combine>(&self, x: &[T], out: &mut [T]) {
        let n = x.len();
        let mut acc = T::identity(self.op);
        for step in 0..n {
            let i = if self.reverse { n - 1 - step } else { step };
            let next = T::combine(self.op, acc, x[i]);
            out[i] = if self.inclusive { next } else { acc };
            acc = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floats(op: ScanOp, x: &[f32], reverse: bool, inclusive: bool) -> Vec<f32> {
        let words: Vec<u32> = x.iter().map(|v| v.to_bits()).collect();
        let out = scan(op, DType::Float32, &words, x.len(), reverse, inclusive);
        out.into_iter().map(f32::from_bits).collect()
    }

    #[test]
    fn sums_run_forwards_backwards_and_exclusively() {
        let x = [1.0, 2.0, 3.0];
        assert_eq!(floats(ScanOp::Sum, &x, false, true), [1.0, 3.0, 6.0]);
        assert_eq!(floats(ScanOp::Sum, &x, true, true), [6.0, 5.0, 3.0]);
        assert_eq!(floats(ScanOp::Sum, &x, false, false), [0.0, 1.0, 3.0]);
        assert_eq!(floats(ScanOp::Prod, &x, true, false), [6.0, 3.0, 1.0]);
    }

    #[test]
    fn nan_spreads_through_running_maxima() {
        let got = floats(ScanOp::Max, &[1.0, f32::NAN, 5.0], false, true);
        assert!(got[0] == 1.0 && got[1].is_nan() && got[2].is_nan());
    }
}
