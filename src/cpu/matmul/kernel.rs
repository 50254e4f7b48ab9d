//! The register tile: MR rows by NR columns of C held in eight vectors while k runs.

use crate::cpu::simd::{F32x4, LANES};

/// Rows of the register tile.
pub const MR: usize = 4;
/// Columns of the register tile (two vectors).
pub const NR: usize = 2 * LANES;

/// Adds a packed A panel (`kc` steps of MR values) times a packed B panel (`kc` steps of NR
/// values) into the MR x NR tile at `c`, whose rows are `ldc` apart.
#[inline(always)]
pub fn tile(a: &[f32], b: &[f32], c: &mut [f32], ldc: usize) {
    let mut acc = [[F32x4::splat(0.0); 2]; MR];
    for (ap, bp) in a.chunks_exact(MR).zip(b.chunks_exact(NR)) {
        let (b0, b1) = (F32x4::load(&bp[..LANES]), F32x4::load(&bp[LANES..]));
        for (row, &coefficient) in acc.iter_mut().zip(ap) {
            let coefficient = F32x4::splat(coefficient);
            row[0] = coefficient.mul_add(b0, row[0]);
            row[1] = coefficient.mul_add(b1, row[1]);
        }
    }
    add_into(&acc, c, ldc);
}

/// [`tile`] with A's MR rows read in place (each `kc` long) instead of from a packed panel.
#[inline(always)]
pub fn tile_rows(a: [&[f32]; MR], b: &[f32], c: &mut [f32], ldc: usize) {
    let mut acc = [[F32x4::splat(0.0); 2]; MR];
    let steps = b.chunks_exact(NR).zip(a[0]).zip(a[1]).zip(a[2]).zip(a[3]);
    for ((((bp, &a0), &a1), &a2), &a3) in steps {
        let (b0, b1) = (F32x4::load(&bp[..LANES]), F32x4::load(&bp[LANES..]));
        for (row, coefficient) in acc.iter_mut().zip([a0, a1, a2, a3]) {
            let coefficient = F32x4::splat(coefficient);
            row[0] = coefficient.mul_add(b0, row[0]);
            row[1] = coefficient.mul_add(b1, row[1]);
        }
    }
    add_into(&acc, c, ldc);
}

/// Adds the tile's accumulators into C's MR x NR tile at `c`, rows `ldc` apart.
#[inline(always)]
fn add_into(acc: &[[F32x4; 2]; MR], c: &mut [f32], ldc: usize) {
    for (r, row) in acc.iter().enumerate() {
        let to = &mut c[r * ldc..r * ldc + NR];
        (F32x4::load(&to[..LANES]) + row[0]).store(&mut to[..LANES]);
        (F32x4::load(&to[LANES..]) + row[1]).store(&mut to[LANES..]);
    }
}
