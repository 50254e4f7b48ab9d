//! `layerNorm` and `rmsNorm` over rows: the mean and the variance in two passes (in float64,
//! so the CPU stream is the accurate reference), then each element scaled and shifted.

/// A norm's shape of work: whether it is RMS, its epsilon, and its optional affine rows.
pub struct Norm<'a> {
    pub rms: bool,
    pub eps: f32,
    pub weight: Option<&'a [f32]>,
    pub bias: Option<&'a [f32]>,
}

/// The norm of each `row_len`-long row of `x`.
pub fn norm(norm: &Norm, x: &[f32], row_len: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; x.len()];
    if row_len == 0 {
        return out;
    }
    let per = crate::cpu::pool::rows_per_part(x.len() / row_len, 4 * row_len) * row_len;
    crate::cpu::pool::fill_parts(&mut out, per, |start, to| {
        norm_rows(norm, &x[start..start + to.len()], row_len, to);
    });
    out
}

/// [`norm`] of the rows of `x` into `out`, as long.
fn norm_rows(norm: &Norm, x: &[f32], row_len: usize, out: &mut [f32]) {
    for (row, dst) in x.chunks(row_len).zip(out.chunks_mut(row_len)) {
        let n = row_len as f64;
        let mean = if norm.rms {
            0.0
        } else {
            row.iter().map(|&v| f64::from(v)).sum::<f64>() / n
        };
        let spread = row
            .iter()
            .map(|&v| (f64::from(v) - mean).powi(2))
            .sum::<f64>()
            / n;
        let scale = 1.0 / (spread + f64::from(norm.eps)).sqrt();
        for (i, (&v, y)) in row.iter().zip(dst.iter_mut()).enumerate() {
            let mut value = (f64::from(v) - mean) * scale;
            if let Some(w) = norm.weight {
                value *= f64::from(w[i]);
            }
            if let Some(b) = norm.bias {
                value += f64::from(b[i]);
            }
            *y = value as f32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_come_out_centred_and_scaled() {
        let plain = Norm {
            rms: false,
            eps: 0.0,
            weight: None,
            bias: None,
        };
        let y = norm(&plain, &[1.0, 3.0, 5.0, 7.0], 2);
        assert_eq!(y, vec![-1.0, 1.0, -1.0, 1.0]);
        let rms = Norm {
            rms: true,
            eps: 0.0,
            weight: Some(&[2.0, 1.0]),
            bias: None,
        };
        let y = norm(&rms, &[3.0, 4.0], 2);
        let r = (12.5f64).sqrt();
        assert_eq!(y, vec![(6.0 / r) as f32, (4.0 / r) as f32]);
    }
}
