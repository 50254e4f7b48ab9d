//! Reductions over the trailing axes of a row-major input: `rows` outputs, each reducing a
//! contiguous run of `len` elements. Float sums and products accumulate in `f64`, so this is
//! the accurate reference the GPU's tree is compared with.

use crate::dtype::DType;
use crate::primitive::ReduceOp;

/// Reduces `rows` rows of `len` elements (works for `len == 0`, giving the identity).
pub fn reduce_rows(op: ReduceOp, dtype: DType, words: &[u32], rows: usize, len: usize) -> Vec<u32> {
    (0..rows)
        .map(|r| reduce_row(op, dtype, &words[r * len..(r + 1) * len]))
        .collect()
}

fn reduce_row(op: ReduceOp, dtype: DType, row: &[u32]) -> u32 {
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
    }
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
    fn int_sums_wrap() {
        let words = [i32::MAX as u32, 1];
        assert_eq!(
            reduce_rows(ReduceOp::Sum, DType::Int32, &words, 1, 2),
            vec![i32::MIN as u32]
        );
    }
}
