//! Batched float32 matmul on the CPU. Products with at least a tile's rows run the packed,
//! blocked scheme of BLIS and XNNPACK (`packed.rs`): panels of B and A copied into the order a
//! 4x8 register tile reads them, so the inner loop is two vector loads, four broadcasts and
//! eight vector multiply-adds per step of k; fewer than 8 columns are padded (MLX's 4096x512
//! by 512x4 ran 7x faster so than by row updates). Fewer rows (a vector-matrix product) run
//! `simple.rs`, whose row updates need no packing.

mod kernel;
mod packed;
mod simple;

use crate::cpu::patches::PatchRows;
use crate::cpu::pool;

pub use kernel::{MR, NR};
use packed::Lhs;

/// One operand's storage: its data, where its first matrix starts, and how far apart its
/// matrices are (0: one matrix broadcast over the batch).
pub type Operand<'a> = (&'a [f32], usize, usize);

/// B's storage, as [`Operand`], of float32 or of a packed dtype widened as it is read.
pub type Source<'a> = (Elements<'a>, usize, usize);

/// Elements of B: float32, or a packed dtype's storage words (a float16 weight), widened
/// exactly when a panel of B is packed, so that no float32 copy of a whole weight is made.
#[derive(Clone, Copy)]
pub enum Elements<'a> {
    F32(&'a [f32]),
    Packed(&'a [u32], crate::dtype::DType),
}

impl Elements<'_> {
    /// Elements `at..at + out.len()` as float32, into `out`.
    pub fn read(&self, at: usize, out: &mut [f32]) {
        use crate::dtype::DType;
        let end = at + out.len();
        match *self {
            Elements::F32(v) => out.copy_from_slice(&v[at..end]),
            Elements::Packed(words, DType::Float16) => {
                let halves: &[u16] = bytemuck::cast_slice(words);
                for (o, &h) in out.iter_mut().zip(&halves[at..end]) {
                    *o = f32::from_bits(crate::dtype::packed::f32_bits_from_f16(u32::from(h)));
                }
            }
            Elements::Packed(words, DType::BFloat16) => {
                let halves: &[u16] = bytemuck::cast_slice(words);
                for (o, &h) in out.iter_mut().zip(&halves[at..end]) {
                    *o = f32::from_bits(u32::from(h) << 16);
                }
            }
            Elements::Packed(words, dtype) => {
                for (i, o) in out.iter_mut().enumerate() {
                    let wide = crate::dtype::packed::element(words, dtype, at + i);
                    *o = f32::from_bits(crate::dtype::convert::cast_element(
                        wide,
                        dtype,
                        DType::Float32,
                    ));
                }
            }
        }
    }
}

/// Rows of one matrix of B: its elements from `base`, rows `n` apart.
#[derive(Clone, Copy)]
pub struct Rows<'a> {
    pub elements: Elements<'a>,
    pub base: usize,
}

impl Rows<'_> {
    /// Row `r`'s columns `from..from + out.len()` (rows `ld` apart), as float32.
    pub fn read(&self, r: usize, ld: usize, from: usize, out: &mut [f32]) {
        self.elements.read(self.base + r * ld + from, out);
    }
}

/// `batch` products of (m x k) by (k x n) row-major matrices; operand `x`'s matrix `i` starts
/// at `x.1 + i * x.2` in `x.0`.
pub fn matmul(batch: usize, m: usize, n: usize, k: usize, a: Operand, b: Operand) -> Vec<f32> {
    let b = (Elements::F32(b.0), b.1, b.2);
    matmul_then(batch, m, n, k, a, b, &|_, _| {})
}

/// What runs on each finished stretch of the product: its first element (counted over the
/// whole batch) and its values, in place. Called once on every row, right after it is final
/// and while it is still in cache where the loop nest allows (an epilogue: a bias and an
/// activation), from whichever thread of the CPU pool computed it.
pub type Finish<'a> = dyn Fn(usize, &mut [f32]) + Sync + 'a;

/// [`matmul`], with `finish` run over every row of the product once it is final. Split over
/// the CPU pool by rows (a row of C needs all of B, so no two threads write one element): a
/// large product's threads share its packed panels of B and claim blocks of its rows in turn;
/// a batch of small products is cut into runs of rows once, each run packing its own panels.
pub fn matmul_then(
    batch: usize,
    m: usize,
    n: usize,
    k: usize,
    a: Operand,
    b: Source,
    finish: &Finish,
) -> Vec<f32> {
    product(batch, Dims { m, n, k }, BatchA::Dense(a), b, finish)
}

/// The product of a convolution's patches (`m` rows of `k`, [`PatchRows`]) by one matrix
/// of B, as [`matmul_then`] (`finish` on every row once it is final), with the patches made
/// a block of rows at a time by the thread that multiplies them: the patches never go through
/// memory whole.
pub fn patches_then(
    m: usize,
    n: usize,
    k: usize,
    a: PatchRows,
    b: Source,
    finish: &Finish,
) -> Vec<f32> {
    product(1, Dims { m, n, k }, BatchA::Patches(a), b, finish)
}

/// A batch's A: dense matrices, or one convolution's patches.
#[derive(Clone, Copy)]
enum BatchA<'a> {
    Dense(Operand<'a>),
    Patches(PatchRows<'a>),
}

impl<'a> BatchA<'a> {
    /// Rows `r0..r0 + rows` of matrix `i` (of `m` rows of `k`), as the loop nest reads them.
    fn rows(self, i: usize, (m, k): (usize, usize), r0: usize, rows: usize) -> Lhs<'a> {
        match self {
            BatchA::Dense(a) => Lhs::Dense(&a.0[a.1 + i * a.2 + r0 * k..][..rows * k]),
            BatchA::Patches(p) => Lhs::Patches(p, i * m + r0),
        }
    }
}

/// The batch's products, split over the pool (see [`matmul_then`]).
fn product(batch: usize, dims: Dims, a: BatchA, b: Source, finish: &Finish) -> Vec<f32> {
    let Dims { m, n, k } = dims;
    let len = batch * m * n;
    if len == 0 {
        return Vec::new();
    }
    if shares_panels(dims) {
        let mut out = Vec::with_capacity(len);
        let slots = &mut out.spare_capacity_mut()[..len];
        for (i, c) in slots.chunks_exact_mut(m * n).enumerate() {
            let rows_done = |first_row: usize, c: &mut [f32]| finish((i * m + first_row) * n, c);
            let a = a.rows(i, (m, k), 0, m);
            packed::matmul_shared(m, n, k, a, matrix_b(i, b), c, &rows_done);
        }
        // SAFETY: `matmul_shared` wrote every element of each product.
        unsafe { out.set_len(len) };
        return out;
    }
    // Packed products split by whole register tiles of rows; row updates by whole matrices.
    let rows = if m >= MR {
        pool::even_rows_per_part(batch * m, n * k).next_multiple_of(MR)
    } else {
        m * pool::even_rows_per_part(batch, m * n * k)
    };
    // The products add into their rows: each part zeroes its own first.
    pool::zeroed_parts(len, rows * n, |start, c| {
        product_rows(dims, start / n, c, (a, b), finish);
    })
}

/// Whether each product is large enough, with enough rows, that the pool's threads share its
/// packed panels and claim blocks of its rows in turn (`packed::matmul_shared`), rather than
/// split the batch's rows once. A narrow B (a convolution's filters) shares too: its panels
/// are small, but a split into one run of rows per thread leaves the job waiting on the
/// slower thread, and on this machine one core is often a third slower than the other for a
/// while (the peer benchmark's CNN on 2 threads: the slowest quarter of forwards 10.7 ms
/// against 11.6 ms with the fixed split, in alternating runs of one page).
fn shares_panels(Dims { m, n, k }: Dims) -> bool {
    pool::threads() > 1 && m >= 2 * packed::MC && m.saturating_mul(n).saturating_mul(k) >= 1 << 22
}

/// Matrix `i` of the batch's B, as rows.
fn matrix_b(i: usize, b: Source) -> Rows {
    Rows {
        elements: b.0,
        base: b.1 + i * b.2,
    }
}

/// One product's sizes.
#[derive(Clone, Copy)]
struct Dims {
    m: usize,
    n: usize,
    k: usize,
}

/// Rows `first..` of the batch's products (counted over the whole batch, possibly across
/// matrices) into `c`, which holds whole rows.
fn product_rows(
    Dims { m, n, k }: Dims,
    first: usize,
    c: &mut [f32],
    (a, b): (BatchA, Source),
    finish: &Finish,
) {
    let end = first + c.len() / n;
    let mut row = first;
    while row < end {
        let (i, r0) = (row / m, row % m);
        let rows = (m - r0).min(end - row);
        let to = &mut c[(row - first) * n..(row - first + rows) * n];
        let (a, b) = (a.rows(i, (m, k), r0, rows), matrix_b(i, b));
        let mut rows_done = |first_row: usize, c: &mut [f32]| finish((row + first_row) * n, c);
        if m >= MR {
            packed::matmul(rows, n, k, a, b, to, &mut rows_done);
        } else {
            // Fewer rows than a register tile: row updates, of A in place or made whole.
            let mut scratch = Vec::new();
            let (a, _) = a.block((0, rows), (0, k), k, &mut scratch);
            simple::matmul(rows, n, k, a, b, to);
            rows_done(0, to);
        }
        row += rows;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The product in f64, row-major.
    fn reference(m: usize, n: usize, k: usize, a: &[f32], b: &[f32]) -> Vec<f64> {
        let mut c = vec![0f64; m * n];
        for r in 0..m {
            for p in 0..k {
                for j in 0..n {
                    c[r * n + j] += a[r * k + p] as f64 * b[p * n + j] as f64;
                }
            }
        }
        c
    }

    fn values(len: usize, seed: u32) -> Vec<f32> {
        (0..len)
            .map(|i| {
                ((i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed) % 2001) as f32 / 1000.0
                    - 1.0
            })
            .collect()
    }

    #[test]
    fn multiplies_and_broadcasts_the_batch() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]; // two 2x2
        let b = [1.0, 0.0, 1.0, 1.0]; // one 2x2, broadcast
        let out = matmul(2, 2, 2, 2, (&a, 0, 4), (&b, 0, 0));
        assert_eq!(out, vec![3.0, 2.0, 7.0, 4.0, 11.0, 6.0, 15.0, 8.0]);
    }

    #[test]
    #[cfg(not(target_arch = "wasm32"))]
    fn finish_sees_every_row_once_after_it_is_final_on_any_thread() {
        crate::cpu::pool::start_native(2);
        let shapes = [
            (2, 3, 5, 4),
            (1, 200, 9, 700),
            (1, 130, 3000, 20),
            (3, 70, 90, 300),
        ];
        for (batch, m, n, k) in shapes {
            let (a, b) = (values(batch * m * k, 3), values(k * n, 4));
            let plain = matmul(batch, m, n, k, (&a, 0, m * k), (&b, 0, 0));
            let seen = std::sync::Mutex::new(vec![0u8; batch * m]);
            let source = (Elements::F32(&b), 0, 0);
            let doubled = matmul_then(batch, m, n, k, (&a, 0, m * k), source, &|at, c| {
                assert_eq!((at % n, c.len() % n), (0, 0), "{m}x{n}x{k}: whole rows");
                for (i, v) in c.iter_mut().enumerate() {
                    assert_eq!(
                        *v,
                        plain[at + i],
                        "{m}x{n}x{k}: row {} is final",
                        (at + i) / n
                    );
                    *v *= 2.0;
                }
                let mut seen = seen.lock().unwrap();
                (at / n..(at + c.len()) / n).for_each(|r| seen[r] += 1);
            });
            assert!(
                seen.into_inner().unwrap().iter().all(|&s| s == 1),
                "{m}x{n}x{k}"
            );
            assert!(doubled.iter().zip(&plain).all(|(d, p)| *d == 2.0 * p));
        }
    }

    #[test]
    #[cfg(not(target_arch = "wasm32"))]
    fn a_product_split_over_threads_matches_one_thread_bit_for_bit() {
        crate::cpu::pool::start_native(2);
        for (batch, m, n, k) in [
            (1, 256, 256, 256),
            (3, 61, 130, 77),
            (5, 2, 300, 200),
            (2, 300, 100, 150),
            (1, 200, 2100, 12),
            (1, 1000, 333, 77),
            (1, 1000, 40, 300),
            (2, 700, 8, 900),
        ] {
            let (a, b) = (values(batch * m * k, 5), values(batch * k * n, 6));
            let (a, b) = ((&a[..], 0, m * k), (&b[..], 0, k * n));
            let split = matmul(batch, m, n, k, a, b);
            crate::cpu::pool::set_limit(1);
            let alone = matmul(batch, m, n, k, a, b);
            crate::cpu::pool::set_limit(usize::MAX);
            assert_eq!(split, alone, "{batch}x{m}x{n}x{k}");
        }
    }

    #[test]
    fn every_edge_of_the_tiles_and_blocks_matches_f64() {
        let shapes = [
            (1, 1, 1),
            (4, 8, 1),
            (5, 9, 3),
            (3, 20, 7),
            (17, 3, 5),
            (13, 29, 300),
            (67, 70, 257),
            (130, 17, 33),
            (8, 1030, 9),
            (9, 20, 1100),
            (0, 5, 3),
            (4, 8, 0),
        ];
        for (m, n, k) in shapes {
            let (a, b) = (values(m * k + 3, 1), values(k * n + 5, 2));
            let got = matmul(1, m, n, k, (&a, 3, 0), (&b, 5, 0));
            let want = reference(m, n, k, &a[3..], &b[5..]);
            for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (g as f64 - w).abs() <= 1e-5 * (1.0 + k as f64),
                    "{m}x{n}x{k} at {i}: {g} {w}"
                );
            }
        }
    }
}
