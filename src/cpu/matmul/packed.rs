//! The blocked loop nest (BLIS's order): B in panels of KC rows by NC columns, A in blocks of
//! MC rows by KC, each packed once into micro-panels of NR columns (B) or MR rows (A) padded
//! with zeros, then one register tile per (MR, NR) pair. KC x NR of B (8 KiB) and MR x KC of A
//! (4 KiB) stay in the first-level cache while a tile runs; MC x KC of A (96 KiB) stays in the
//! second level while B's panel streams past it.

use std::mem::MaybeUninit;

use super::Rows;
use super::kernel::{MR, NR, tile, tile_rows};
use crate::cpu::patches::PatchRows;
use crate::cpu::pool;

/// Where a product's A comes from.
#[derive(Clone, Copy)]
pub enum Lhs<'a> {
    /// Row-major, rows `k` apart.
    Dense(&'a [f32]),
    /// A convolution's patches from row `first` on, made a block at a time.
    Patches(PatchRows<'a>, usize),
}

impl Lhs<'_> {
    /// Rows `ic..ic + mc`, columns `pc..pc + kc` of A, and how far apart its rows are: in
    /// place (`k`), or made in `scratch` (`kc`).
    pub(super) fn block<'s>(
        &'s self,
        (ic, mc): (usize, usize),
        (pc, kc): (usize, usize),
        k: usize,
        scratch: &'s mut Vec<f32>,
    ) -> (&'s [f32], usize) {
        match self {
            Lhs::Dense(a) => (&a[ic * k + pc..], k),
            Lhs::Patches(rows, first) => {
                scratch.resize(mc * kc, 0.0);
                rows.fill_rows(first + ic, pc, kc, scratch);
                (&scratch[..], kc)
            }
        }
    }
}

const KC: usize = 256;
/// A narrow B's panels may be deeper: NR columns of 512 rows are 16 KiB.
const KC_NARROW: usize = 512;
pub(super) const MC: usize = 96;
const NC: usize = 2048;

/// The depth of B's panels for k: at most KC (KC_NARROW for a narrow B), and all of one
/// depth, so that no short last panel pays a pass over C for a few steps of k (a 3x3
/// convolution of 32 channels has k = 288: one panel of 288, not 256 and 32).
fn panel_depth(k: usize, n: usize) -> usize {
    let most = if n <= DIRECT_MAX_N { KC_NARROW } else { KC };
    let panels = k.div_ceil(most).max(1);
    k.div_ceil(panels).max(1)
}

/// `c += a b` for one (m x k) by (k x n) product, row-major; `finish(first_row, rows)` runs
/// on each block of rows once it is final: right after its last tiles when B is one panel
/// wide (its rows are still in cache), else once at the end.
pub fn matmul(
    m: usize,
    n: usize,
    k: usize,
    a: Lhs,
    b: Rows,
    c: &mut [f32],
    finish: &mut dyn FnMut(usize, &mut [f32]),
) {
    let depth = panel_depth(k, n);
    let mut b_panel = vec![0f32; depth * NC.min(n).next_multiple_of(NR)];
    // A narrow B (a convolution's filters, MLX's 4 columns) has few column panels, so each
    // row of A is read only a few times: reading it in place beats copying it first (the
    // peer benchmark's CNN: 21-22 ms against 22-25). A wide one reads each row once per panel,
    // and the packed copy's locality wins (matmul 1024: 58 ms against 63).
    let zeros = (n <= DIRECT_MAX_N).then(|| vec![0f32; depth]);
    let (mut scratch, mut a_block) = (Vec::new(), Vec::new());
    for jc in (0..n).step_by(NC) {
        let nc = NC.min(n - jc);
        for pc in (0..k).step_by(depth) {
            let kc = depth.min(k - pc);
            pack_b(b, (pc, jc), n, (kc, nc), &mut b_panel);
            for ic in (0..m).step_by(MC) {
                let mc = MC.min(m - ic);
                let from = a.block((ic, mc), (pc, kc), k, &mut scratch);
                let zeros = zeros.as_deref().map(|z| &z[..kc]);
                let out = (&b_panel[..], &mut c[ic * n + jc..], n);
                block_tiles(from, (mc, nc, kc), zeros, &mut a_block, out);
                if nc == n && pc + kc == k {
                    finish(ic, &mut c[ic * n..(ic + mc) * n]);
                }
            }
        }
    }
    if n > NC || k == 0 {
        finish(0, c);
    }
}

/// [`matmul`] of one large product over the CPU pool, BLIS's way: each panel of B is packed
/// once (its micro-panels split over the pool), then the pool's threads claim blocks of rows
/// of A (a few per thread, at most MC) in turn, each packing its block (or, for a narrow B,
/// reading it in place or making a convolution's patches, as `matmul` does) and running its
/// tiles against the shared panel. Many small blocks balance the threads when one is slowed
/// (a busy machine, a late wake-up), which a fixed split of the rows cannot. `finish` runs on
/// each block's rows once they are final. C's slots need not hold values: the first pass
/// zeroes each block of rows on the thread that claimed it, just before adding into it (a
/// zeroed C made first cost the calling thread 0.7 ms alone in the peer benchmark's CNN).
pub fn matmul_shared(
    m: usize,
    n: usize,
    k: usize,
    a: Lhs,
    b: Rows,
    c: &mut [MaybeUninit<f32>],
    finish: &super::Finish,
) {
    pool::wake_ahead();
    let depth = panel_depth(k, n);
    let mut b_panel = vec![0f32; depth * NC.min(n).next_multiple_of(NR)];
    // As in `matmul`: a narrow B's A is read in place (or a convolution's patches made).
    let zeros = (n <= DIRECT_MAX_N).then(|| vec![0f32; depth]);
    // A few blocks of rows per thread, so that a thread that is done takes another's; at
    // most MC rows (A's block stays in the second-level cache).
    let block = m.div_ceil(pool::threads() * 4).next_multiple_of(MR).min(MC);
    for jc in (0..n).step_by(NC) {
        let nc = NC.min(n - jc);
        for pc in (0..k).step_by(depth) {
            let kc = depth.min(k - pc);
            let micro = NR * kc;
            let panels = nc.div_ceil(NR);
            // Packing a small panel takes less than waking a worker: one part.
            let per = if kc * nc < pool::MIN_PART_WORK * 4 {
                micro * panels
            } else {
                micro * panels.div_ceil(pool::threads() * 2)
            };
            pool::fill_parts(&mut b_panel[..panels * micro], per, |at, to| {
                let (first, cols) = (
                    at / micro * NR,
                    (to.len() / micro * NR).min(nc - at / micro * NR),
                );
                pack_b(b, (pc, jc + first), n, (kc, cols), to);
            });
            let last = nc == n && pc + kc == k;
            let panel = &b_panel[..];
            let zeros = zeros.as_deref().map(|z| &z[..kc]);
            // The first pass over C zeroes each block of rows just before its tiles add into
            // it, on the thread that claimed it (not all of C on the calling thread first).
            let first = jc == 0 && pc == 0;
            pool::fill_parts(&mut c[..m * n], block * n, |at, rows| {
                let rows = if first {
                    zeroed(rows)
                } else {
                    // SAFETY: the first pass zeroed every row of C.
                    unsafe { assume_init(rows) }
                };
                let (ic, mc) = (at / n, rows.len() / n);
                with_scratch(|scratch, a_block| {
                    let from = a.block((ic, mc), (pc, kc), k, scratch);
                    let out = (panel, &mut rows[jc..], n);
                    block_tiles(from, (mc, nc, kc), zeros, a_block, out);
                });
                if last {
                    finish(ic, rows);
                }
            });
        }
    }
    let c = if k == 0 {
        zeroed(c)
    } else {
        // SAFETY: the first pass zeroed every row of C.
        unsafe { assume_init(c) }
    };
    if n > NC || k == 0 {
        finish(0, c);
    }
}

/// `slots` written with zeros, as values.
fn zeroed(slots: &mut [MaybeUninit<f32>]) -> &mut [f32] {
    slots.fill(MaybeUninit::new(0.0));
    // SAFETY: every slot was just written.
    unsafe { assume_init(slots) }
}

/// `slots` as the values they hold.
///
/// # Safety
/// Every slot must have been written.
unsafe fn assume_init(slots: &mut [MaybeUninit<f32>]) -> &mut [f32] {
    // SAFETY: MaybeUninit<f32> has f32's layout, and the caller vouches that each is written.
    unsafe { &mut *(std::ptr::from_mut(slots) as *mut [f32]) }
}

/// The tiles of one (mc x nc) block of C (`c`, rows `ldc` apart) against B's packed panel
/// `b`, with A's block `(from, lda)` read in place where `zeros` is given (a narrow B; the
/// zeros stand in for the rows past the block), else packed into `packed` first.
fn block_tiles(
    (from, lda): (&[f32], usize),
    (mc, nc, kc): (usize, usize, usize),
    zeros: Option<&[f32]>,
    packed: &mut Vec<f32>,
    (b, c, ldc): (&[f32], &mut [f32], usize),
) {
    match zeros {
        Some(zeros) => {
            let block = Block {
                a: from,
                lda,
                zeros,
            };
            tiles(mc, nc, kc, Panels::InPlace(&block), b, c, ldc);
        }
        None => {
            packed.resize(mc.next_multiple_of(MR) * kc, 0.0);
            pack_a(from, lda, mc, kc, packed);
            tiles(mc, nc, kc, Panels::Packed(packed), b, c, ldc);
        }
    }
}

/// Runs `f` with this thread's scratch buffers (a block of patches, a packed block of A),
/// kept between blocks, so that a product's many blocks do not each allocate and zero their
/// own. A part that runs while another holds them (a nested job on the same thread) gets
/// new ones.
fn with_scratch<R>(f: impl FnOnce(&mut Vec<f32>, &mut Vec<f32>) -> R) -> R {
    thread_local! {
        static SCRATCH: std::cell::Cell<(Vec<f32>, Vec<f32>)> =
            const { std::cell::Cell::new((Vec::new(), Vec::new())) };
    }
    let (mut patches, mut packed) = SCRATCH.take();
    let result = f(&mut patches, &mut packed);
    SCRATCH.set((patches, packed));
    result
}

/// The widest B whose A is read in place rather than packed.
pub(super) const DIRECT_MAX_N: usize = 64;

/// Where a block's A comes from: packed micro-panels, or its rows in place.
#[derive(Clone, Copy)]
enum Panels<'a> {
    Packed(&'a [f32]),
    InPlace(&'a Block<'a>),
}

/// An (mc x kc) block of A read in place, rows `lda` apart; `zeros` stands in for the rows
/// past the block's end in its last register tile.
struct Block<'a> {
    a: &'a [f32],
    lda: usize,
    zeros: &'a [f32],
}

impl Block<'_> {
    /// The MR rows of A from `first`, each `kc` long (zeros past `rows`).
    fn rows(&self, first: usize, rows: usize, kc: usize) -> [&[f32]; MR] {
        std::array::from_fn(|r| {
            if r < rows {
                &self.a[(first + r) * self.lda..][..kc]
            } else {
                self.zeros
            }
        })
    }
}

/// Every register tile of an (mc x nc) block of C; tiles that overhang the block run on a
/// scratch tile whose valid part is added back.
fn tiles(mc: usize, nc: usize, kc: usize, a: Panels, b: &[f32], c: &mut [f32], ldc: usize) {
    for jr in (0..nc).step_by(NR) {
        let b_micro = &b[jr * kc..(jr + NR) * kc];
        for ir in (0..mc).step_by(MR) {
            let (rows, cols) = (MR.min(mc - ir), NR.min(nc - jr));
            let run = |to: &mut [f32], ld: usize| match a {
                Panels::Packed(packed) => tile(&packed[ir * kc..(ir + MR) * kc], b_micro, to, ld),
                Panels::InPlace(block) => tile_rows(block.rows(ir, rows, kc), b_micro, to, ld),
            };
            let at = ir * ldc + jr;
            if rows == MR && cols == NR {
                run(&mut c[at..], ldc);
            } else {
                let mut scratch = [0f32; MR * NR];
                run(&mut scratch, NR);
                for r in 0..rows {
                    let to = &mut c[at + r * ldc..at + r * ldc + cols];
                    for (o, s) in to.iter_mut().zip(&scratch[r * NR..]) {
                        *o += s;
                    }
                }
            }
        }
    }
}

/// B's (kc x nc) panel from row `pc`, column `jc` (rows `ldb` apart) as micro-panels of NR
/// columns, each `kc` rows of NR values (widened from a packed dtype here); columns past nc
/// are zeros.
fn pack_b(b: Rows, (pc, jc): (usize, usize), ldb: usize, (kc, nc): (usize, usize), to: &mut [f32]) {
    if let super::Elements::Packed(..) = b.elements {
        return pack_packed_b(b, (pc, jc), ldb, (kc, nc), to);
    }
    for (jr, panel) in (0..nc).step_by(NR).zip(to.chunks_exact_mut(NR * kc)) {
        let cols = NR.min(nc - jr);
        for (p, dst) in panel.chunks_exact_mut(NR).enumerate() {
            b.read(pc + p, ldb, jc + jr, &mut dst[..cols]);
            dst[cols..].fill(0.0);
        }
    }
}

/// [`pack_b`] for a packed B: each of the panel's rows is widened whole into a scratch row
/// (one conversion loop over nc elements, which vectorizes), then spread over the
/// micro-panels.
fn pack_packed_b(
    b: Rows,
    (pc, jc): (usize, usize),
    ldb: usize,
    (kc, nc): (usize, usize),
    to: &mut [f32],
) {
    let mut row = vec![0f32; nc];
    for p in 0..kc {
        b.read(pc + p, ldb, jc, &mut row);
        for (jr, panel) in (0..nc).step_by(NR).zip(to.chunks_exact_mut(NR * kc)) {
            let cols = NR.min(nc - jr);
            let dst = &mut panel[p * NR..(p + 1) * NR];
            dst[..cols].copy_from_slice(&row[jr..jr + cols]);
            dst[cols..].fill(0.0);
        }
    }
}

/// A's (mc x kc) block at `a` (rows `lda` apart) as micro-panels of MR rows, each `kc` steps
/// of MR values (a column of the micro-panel); rows past mc are zeros.
fn pack_a(a: &[f32], lda: usize, mc: usize, kc: usize, to: &mut [f32]) {
    for (ir, panel) in (0..mc).step_by(MR).zip(to.chunks_exact_mut(MR * kc)) {
        let rows = MR.min(mc - ir);
        for (p, dst) in panel.chunks_exact_mut(MR).enumerate() {
            for (r, d) in dst.iter_mut().enumerate() {
                *d = if r < rows { a[(ir + r) * lda + p] } else { 0.0 };
            }
        }
    }
}
