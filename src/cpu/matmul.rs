//! Batched float32 matmul: for each row of `a`, the rows of `b` are accumulated with the row's
//! coefficients, so the inner loop runs along contiguous memory and vectorises.

/// `batch` products of (m x k) by (k x n) row-major matrices; operand `x`'s matrix `i` starts
/// at `x.1 + i * x.2` in `x.0`.
pub fn matmul(
    batch: usize,
    m: usize,
    n: usize,
    k: usize,
    a: (&[f32], usize, usize),
    b: (&[f32], usize, usize),
) -> Vec<f32> {
    let mut out = vec![0f32; batch * m * n];
    for i in 0..batch {
        let (a0, b0) = (a.1 + i * a.2, b.1 + i * b.2);
        let c = &mut out[i * m * n..(i + 1) * m * n];
        for r in 0..m {
            let row = &mut c[r * n..(r + 1) * n];
            for p in 0..k {
                let coefficient = a.0[a0 + r * k + p];
                let b_row = &b.0[b0 + p * n..b0 + (p + 1) * n];
                for (acc, &v) in row.iter_mut().zip(b_row) {
                    *acc += coefficient * v;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiplies_and_broadcasts_the_batch() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]; // two 2x2
        let b = [1.0, 0.0, 1.0, 1.0]; // one 2x2, broadcast
        let out = matmul(2, 2, 2, 2, (&a, 0, 4), (&b, 0, 0));
        assert_eq!(out, vec![3.0, 2.0, 7.0, 4.0, 11.0, 6.0, 15.0, 8.0]);
    }
}
