//! Matmul without packing, for thin shapes: each row of B (widened once, where it is packed)
//! is accumulated into every row of C with that row's coefficient, so the inner loop runs
//! along contiguous memory. Each element of C still sums its products in the order of k.

use super::Rows;

/// `c += a b` for one (m x k) by (k x n) product, row-major.
pub fn matmul(m: usize, n: usize, k: usize, a: &[f32], b: Rows, c: &mut [f32]) {
    let mut b_row = vec![0f32; n];
    for p in 0..k {
        b.read(p, n, 0, &mut b_row);
        for r in 0..m {
            let coefficient = a[r * k + p];
            let row = &mut c[r * n..(r + 1) * n];
            for (acc, &v) in row.iter_mut().zip(&b_row) {
                *acc += coefficient * v;
            }
        }
    }
}
