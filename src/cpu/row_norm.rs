//! Softmax and logsumexp over contiguous float32 rows, fused (see [`RowNorm`]).

use crate::primitive::RowNorm;

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
    let rows = x.chunks_exact(row_len);
    let out: Vec<f32> = match op {
        RowNorm::Softmax => rows.flat_map(softmax_row).collect(),
        RowNorm::LogSumExp => rows.map(logsumexp_row).collect(),
    };
    bytemuck::cast_vec(out)
}

/// The row's maximum; NaN if any element is NaN.
fn row_max(row: &[f32]) -> f32 {
    row.iter().fold(f32::NEG_INFINITY, |m, &v| {
        if m.is_nan() || v.is_nan() {
            f32::NAN
        } else {
            m.max(v)
        }
    })
}

fn softmax_row(row: &[f32]) -> Vec<f32> {
    let m = row_max(row);
    if !m.is_finite() {
        return vec![f32::NAN; row.len()];
    }
    let total: f32 = row.iter().map(|&v| (v - m).exp()).sum();
    row.iter().map(|&v| (v - m).exp() / total).collect()
}

fn logsumexp_row(row: &[f32]) -> f32 {
    let m = row_max(row);
    if !m.is_finite() {
        return m;
    }
    let total: f32 = row.iter().map(|&v| (v - m).exp()).sum();
    total.ln() + m
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
}
