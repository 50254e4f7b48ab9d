//! Matmul without packing, for thin shapes: for each row of A, the rows of B are accumulated
//! with the row's coefficients, so the inner loop runs along contiguous memory.

/// `c += a b` for one (m x k) by (k x n) product, row-major.
pub fn matmul(m: usize, n: usize, k: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    for r in 0..m {
        let row = &mut c[r * n..(r + 1) * n];
        for p in 0..k {
            let coefficient = a[r * k + p];
            let b_row = &b[p * n..(p + 1) * n];
            for (acc, &v) in row.iter_mut().zip(b_row) {
                *acc += coefficient * v;
            }
        }
    }
}
