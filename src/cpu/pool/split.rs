//! How a kernel's work is cut into parts: only work large enough to pay for waking the pool is
//! split, into a few parts per thread (so a worker that wakes late finds parts left), and an
//! output into disjoint runs that each part fills.

use super::{run, threads};

/// The least work (in element operations: an element of an elementwise op, a multiply-add of
/// a matmul) worth a part of its own: waking a Web Worker costs tens of microseconds, and
/// 64K cheap operations take about as long again.
pub const MIN_PART_WORK: usize = 1 << 16;

/// Parts per thread: with more than one each, a part a late worker has not claimed is taken
/// by a thread that is done, and a thread slowed for a while (on this machine one core often
/// runs a third slower than the other for a fraction of a second) does fewer parts. With 8
/// rather than 2, the peer benchmark's softmax 4096x1024 on 2 threads: slowest quarter of
/// runs 12.8 ms against 13.6 ms, medians 12.2 against 12.3, in alternating runs of one page.
const PARTS_PER_THREAD: usize = 8;

/// How many parts `work` operations are split into: 1 when small or when only one thread runs.
pub fn parts_for(work: usize) -> usize {
    let threads = threads();
    if threads == 1 {
        return 1;
    }
    (work / MIN_PART_WORK).clamp(1, threads * PARTS_PER_THREAD)
}

/// Rows per part for `rows` rows of `row_work` operations each (at least one row).
pub fn rows_per_part(rows: usize, row_work: usize) -> usize {
    let parts = parts_for(rows.saturating_mul(row_work.max(1))).min(rows.max(1));
    rows.div_ceil(parts).max(1)
}

/// Rows per part for work whose parts each repeat a set-up (a matmul packs B's panels again
/// in each): one part per thread, not [`PARTS_PER_THREAD`].
pub fn even_rows_per_part(rows: usize, row_work: usize) -> usize {
    let parts = (rows.saturating_mul(row_work.max(1)) / MIN_PART_WORK).clamp(1, threads());
    rows.div_ceil(parts.min(rows.max(1))).max(1)
}

/// A pointer that parts share; each part touches only its own run of it.
struct Shared<T>(*mut T);
// SAFETY: parts write disjoint runs, and `run` returns only after every part is done.
unsafe impl<T: Send> Sync for Shared<T> {}

/// Cuts `out` into runs of `per` elements (the last shorter) and calls `fill(start, run)` for
/// each, spread over the pool; `start` is the run's first index.
pub fn fill_parts<T: Send>(out: &mut [T], per: usize, fill: impl Fn(usize, &mut [T]) + Sync) {
    let (len, per) = (out.len(), per.max(1));
    if len <= per {
        fill(0, out);
        return;
    }
    let base = Shared(out.as_mut_ptr());
    let base = &base;
    run(len.div_ceil(per), &|k| {
        let start = k * per;
        let end = (start + per).min(len);
        // SAFETY: runs of different k are disjoint and inside `out`, which outlives `run`.
        let part = unsafe { std::slice::from_raw_parts_mut(base.0.add(start), end - start) };
        fill(start, part);
    });
}

/// The length of each part when `len` elements of `work_each` operations are split, as a
/// multiple of `align` (whole vectors, whole words of a packed dtype, whole rows).
pub fn part_len(len: usize, work_each: usize, align: usize) -> usize {
    let parts = parts_for(len.saturating_mul(work_each.max(1)));
    len.div_ceil(parts).next_multiple_of(align.max(1)).max(1)
}

/// [`fill_parts`] with a fill that may fail: the first part's error (in output order), once
/// every part has run.
pub fn try_fill_parts<T: Send, E: Send>(
    out: &mut [T],
    per: usize,
    fill: impl Fn(usize, &mut [T]) -> Result<(), E> + Sync,
) -> Result<(), E> {
    let per = per.max(1);
    let mut errors: Vec<Option<E>> = (0..out.len().div_ceil(per).max(1)).map(|_| None).collect();
    let slots = Shared(errors.as_mut_ptr());
    let slots = &slots;
    fill_parts(out, per, |start, run| {
        if let Err(e) = fill(start, run) {
            // SAFETY: each part writes only its own slot, and `errors` outlives the parts.
            unsafe { *slots.0.add(start / per) = Some(e) };
        }
    });
    errors.into_iter().flatten().next().map_or(Ok(()), Err)
}

/// A new vector of `len` elements, filled by parts as [`try_fill_parts`] fills a slice: each
/// part is zeroed by the thread that fills it, just before `fill` writes into it, not all at
/// once on the calling thread before the parts start (4 MB for the CNN's first product).
pub fn try_zeroed_parts<T: bytemuck::Zeroable + Send, E: Send>(
    len: usize,
    per: usize,
    fill: impl Fn(usize, &mut [T]) -> Result<(), E> + Sync,
) -> Result<Vec<T>, E> {
    let mut out = Vec::with_capacity(len);
    try_fill_parts(&mut out.spare_capacity_mut()[..len], per, |start, part| {
        part.iter_mut().for_each(|e| {
            e.write(T::zeroed());
        });
        // SAFETY: every element of the part was just written.
        let part = unsafe { &mut *(std::ptr::from_mut(part) as *mut [T]) };
        fill(start, part)
    })?;
    // SAFETY: the parts cover all `len` elements, and each zeroed its own.
    unsafe { out.set_len(len) };
    Ok(out)
}

/// [`try_zeroed_parts`] with a fill that cannot fail.
pub fn zeroed_parts<T: bytemuck::Zeroable + Send>(
    len: usize,
    per: usize,
    fill: impl Fn(usize, &mut [T]) + Sync,
) -> Vec<T> {
    let filled = try_zeroed_parts(len, per, |start, part| {
        fill(start, part);
        Ok::<(), std::convert::Infallible>(())
    });
    match filled {
        Ok(out) => out,
        Err(never) => match never {},
    }
}
