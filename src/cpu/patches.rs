//! The patches of a 2-D convolution's input (im2col, see [`Patches`]): for each output
//! position and tap, the input's `C` channels (one contiguous run) or zeros.

use std::mem::MaybeUninit;

use crate::graph::primitive::Patches;

/// The patches of `x` (row-major words of `[N, H, W, C]`) into the node's `[N, OH, OW, taps, C]`.
/// Each kernel row's taps are written once, as one run: the taps inside the input copied, those
/// past its edges zeros (the padding), so the output is written once and never zeroed first (a
/// whole zero pass over 9 MB took about as long as the copies in the peer benchmark's CNN).
pub fn patches(p: &Patches, x_shape: &[usize], x: &[u32], out_shape: &[usize]) -> Vec<u32> {
    let (h, w, c) = (x_shape[1], x_shape[2], x_shape[3]);
    let (n, oh, ow) = (out_shape[0], out_shape[1], out_shape[2]);
    let [kh, kw] = p.kernel;
    let len: usize = out_shape.iter().product();
    if len == 0 {
        // No channels (or no positions): nothing to copy.
        return Vec::new();
    }
    // Rows of output positions (an image's row of outputs each) split over the CPU pool.
    let row_words = ow * kh * kw * c;
    let per = crate::cpu::pool::rows_per_part(n * oh, row_words) * row_words;
    let mut out = Vec::with_capacity(len);
    crate::cpu::pool::fill_parts(&mut out.spare_capacity_mut()[..len], per, |start, part| {
        for (r, to) in (start / row_words..).zip(part.chunks_exact_mut(row_words)) {
            let image = &x[(r / oh) * h * w * c..(r / oh + 1) * h * w * c];
            output_row(p, image, (r % oh, ow), (h, w, c), to);
        }
    });
    // SAFETY: `output_row` wrote every word of every row, and the rows cover all `len` words.
    unsafe { out.set_len(len) };
    out
}

/// The patches of output row `y` (`ow` positions) of one image (`[H, W, C]` words) into `out`,
/// every word of which it writes.
fn output_row(
    p: &Patches,
    image: &[u32],
    (y, ow): (usize, usize),
    (h, w, c): (usize, usize, usize),
    out: &mut [MaybeUninit<u32>],
) {
    let [kh, kw] = p.kernel;
    let mut at = 0;
    for xo in 0..ow {
        for i in 0..kh {
            let to = &mut out[at..at + kw * c];
            at += kw * c;
            let Some(r) = p.source(0, y, i, h) else {
                to.fill(MaybeUninit::new(0));
                continue;
            };
            let row = &image[r * w * c..(r + 1) * w * c];
            if p.dilation[1] == 1 {
                tap_run(to, row, p.stride[1] * xo, p.padding[1], (kw, c));
                continue;
            }
            for (j, tap) in to.chunks_exact_mut(c).enumerate() {
                match p.source(1, xo, j, w) {
                    Some(col) => copy(tap, &row[col * c..(col + 1) * c]),
                    None => tap.fill(MaybeUninit::new(0)),
                }
            }
        }
    }
}

/// The taps of one kernel row without dilation into all of `to` (`kw * c` long): input
/// columns `at - padding ..` of `row` are one contiguous run, cut where it reaches past either
/// edge, and zeros stand for the columns past the edges.
fn tap_run(
    to: &mut [MaybeUninit<u32>],
    row: &[u32],
    at: usize,
    padding: usize,
    (kw, c): (usize, usize),
) {
    // Zero channels: nothing to write (and no width to find).
    let Some(width) = row.len().checked_div(c) else {
        return;
    };
    let before = padding.saturating_sub(at).min(kw);
    let first = (at + before).saturating_sub(padding).min(width);
    let inside = (kw - before).min(width.saturating_sub(first));
    let (zeros, rest) = to.split_at_mut(before * c);
    let (run, after) = rest.split_at_mut(inside * c);
    zeros.fill(MaybeUninit::new(0));
    copy(run, &row[first * c..(first + inside) * c]);
    after.fill(MaybeUninit::new(0));
}

/// A convolution's patches read as the rows of a matmul's A without making them all: row `r`
/// is output position `r` (over `[N, OH, OW]`), its `taps * C` elements the patch. The matmul
/// makes a block of rows at a time in a buffer that stays in cache, so the patches never go
/// through memory (they were 9 MB in the peer benchmark's CNN, written once and read again).
#[derive(Clone, Copy)]
pub struct PatchRows<'a> {
    pub spec: &'a Patches,
    /// The input, row-major `[N, H, W, C]`.
    pub x: &'a [f32],
    /// `[H, W, C]`.
    pub image: [usize; 3],
    /// `[OH, OW]`.
    pub out: [usize; 2],
}

impl PatchRows<'_> {
    /// Elements `from..from + len` of rows `first..`, one run of `len` after another, into
    /// all of `out`. The rows are consecutive output positions, so each one's image and
    /// place are stepped to, not divided out (four divisions a row cost more than the copies
    /// of an RGB image's patches).
    pub fn fill_rows(&self, first: usize, from: usize, len: usize, out: &mut [f32]) {
        let [oh, ow] = self.out;
        let span = self.spec.kernel[1] * self.image[2];
        if len == 0 || span == 0 {
            return;
        }
        // The kernel rows the range touches, the same for every row.
        let kernel_rows = (from / span, (from + len).div_ceil(span));
        let (mut n, at) = (first / (oh * ow), first % (oh * ow));
        let (mut y, mut x) = (at / ow, at % ow);
        for to in out.chunks_exact_mut(len) {
            self.fill_at((n, y, x), from, kernel_rows, to);
            x += 1;
            if x == ow {
                (x, y) = (0, y + 1);
                if y == oh {
                    (y, n) = (0, n + 1);
                }
            }
        }
    }

    /// Elements `from..from + to.len()` of the patch of image `n` at output `(y, x)`, a
    /// kernel row at a time (rows `kernel_rows`): without dilation its taps are one run of
    /// the input's row.
    fn fill_at(
        &self,
        (n, y, x): (usize, usize, usize),
        from: usize,
        kernel_rows: (usize, usize),
        to: &mut [f32],
    ) {
        let [h, w, c] = self.image;
        let span = self.spec.kernel[1] * c;
        let end = from + to.len();
        let image = &self.x[n * h * w * c..][..h * w * c];
        // The input column of tap 0 (negative or past the row: padding).
        let column = (x * self.spec.stride[1]) as isize - self.spec.padding[1] as isize;
        for i in kernel_rows.0..kernel_rows.1 {
            let (lo, hi) = ((i * span).max(from), ((i + 1) * span).min(end));
            let run = &mut to[lo - from..hi - from];
            let Some(row) = self.spec.source(0, y, i, h) else {
                run.fill(0.0);
                continue;
            };
            let row = &image[row * w * c..(row + 1) * w * c];
            let within = lo - i * span;
            if self.spec.dilation[1] == 1 {
                copy_clipped(run, row, column * c as isize + within as isize);
                continue;
            }
            // Dilated: each tap (or the part of one in range) on its own.
            let mut at = 0;
            while at < run.len() {
                let (j, channel) = ((within + at) / c, (within + at) % c);
                let len = (c - channel).min(run.len() - at);
                let tap = column + (j * self.spec.dilation[1]) as isize;
                copy_clipped(
                    &mut run[at..at + len],
                    row,
                    tap * c as isize + channel as isize,
                );
                at += len;
            }
        }
    }
}

/// `to` from `row` starting at `start` (which may be before it or run past it: zeros there).
fn copy_clipped(to: &mut [f32], row: &[f32], start: isize) {
    let len = to.len() as isize;
    let first = start.clamp(0, row.len() as isize);
    let last = (start + len).clamp(0, row.len() as isize).max(first);
    let before = (first - start).clamp(0, len) as usize;
    let inside = (last - first) as usize;
    let (zeros, rest) = to.split_at_mut(before);
    zeros.fill(0.0);
    let (run, after) = rest.split_at_mut(inside);
    run.copy_from_slice(&row[first as usize..last as usize]);
    after.fill(0.0);
}

/// Copies `from` into `to`, of the same length.
fn copy(to: &mut [MaybeUninit<u32>], from: &[u32]) {
    for (t, &f) in to.iter_mut().zip(from) {
        t.write(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_of_taps_past_either_edge_is_zeros() {
        let row = [1u32, 2];
        let run = |at, padding, kw| {
            // Filled with a marker, so that a word `tap_run` left unwritten shows.
            let mut out = vec![MaybeUninit::new(7u32); kw];
            tap_run(&mut out, &row, at, padding, (kw, 1));
            // SAFETY: every word was initialized above.
            out.into_iter()
                .map(|w| unsafe { w.assume_init() })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(0, 1, 3), [0, 1, 2]);
        assert_eq!(run(1, 0, 3), [2, 0, 0]);
        assert_eq!(run(4, 1, 2), [0, 0]);
        assert_eq!(run(0, 5, 2), [0, 0]);
        let mut none: [MaybeUninit<u32>; 0] = [];
        tap_run(&mut none, &[], 1, 1, (3, 0));
    }

    #[test]
    fn taps_outside_the_input_are_zeros() {
        // A 1x3x3x1 image of 1..9, 2x2 taps, stride 2, padding 1: outputs 2x2.
        let x: Vec<u32> = (1..=9u32).map(|v| (v as f32).to_bits()).collect();
        let p = Patches {
            kernel: [2, 2],
            stride: [2, 2],
            padding: [1, 1],
            dilation: [1, 1],
        };
        let got: Vec<f32> = patches(&p, &[1, 3, 3, 1], &x, &[1, 2, 2, 4, 1])
            .into_iter()
            .map(f32::from_bits)
            .collect();
        let expected = [
            0., 0., 0., 1., 0., 0., 2., 3., 0., 4., 0., 7., 5., 6., 8., 9.,
        ];
        assert_eq!(got, expected);
    }

    /// Each word from its definition: tap (i, j) of output (y, x) is input (y * stride + i *
    /// dilation - padding, ...) when inside the image, else zero.
    fn reference(p: &Patches, shape: [usize; 4], x: &[u32], out_shape: &[usize]) -> Vec<u32> {
        let [_, h, w, c] = shape;
        let mut out = Vec::new();
        for b in 0..out_shape[0] {
            for y in 0..out_shape[1] {
                for xo in 0..out_shape[2] {
                    for i in 0..p.kernel[0] {
                        for j in 0..p.kernel[1] {
                            let at = (p.source(0, y, i, h), p.source(1, xo, j, w));
                            for ch in 0..c {
                                out.push(match at {
                                    (Some(r), Some(col)) => x[((b * h + r) * w + col) * c + ch],
                                    _ => 0,
                                });
                            }
                        }
                    }
                }
            }
        }
        out
    }

    #[test]
    fn every_word_is_written_for_any_stride_padding_and_dilation() {
        // Padding wider than the kernel (whole runs of zeros), dilation, strides, one channel.
        let cases = [
            ([2, 5, 6, 3], [3, 3], [1, 1], [1, 1], [1, 1]),
            ([1, 4, 4, 2], [3, 3], [2, 2], [1, 1], [1, 1]),
            ([1, 5, 5, 1], [2, 3], [1, 2], [4, 3], [1, 1]),
            ([2, 6, 7, 2], [3, 2], [1, 2], [2, 1], [2, 3]),
            ([1, 3, 3, 4], [5, 5], [1, 1], [2, 2], [1, 1]),
        ];
        for (shape, kernel, stride, padding, dilation) in cases {
            let p = Patches {
                kernel,
                stride,
                padding,
                dilation,
            };
            let out_extent = |axis: usize| {
                (shape[1 + axis] + 2 * padding[axis] - dilation[axis] * (kernel[axis] - 1) - 1)
                    / stride[axis]
                    + 1
            };
            let out_shape = [
                shape[0],
                out_extent(0),
                out_extent(1),
                kernel[0] * kernel[1],
                shape[3],
            ];
            let x: Vec<u32> = (1..=shape.iter().product::<usize>() as u32).collect();
            // Freed just before, so that the output likely reuses these non-zero words: a word
            // left unwritten then shows.
            drop(std::hint::black_box(vec![
                0xDEAD_BEEFu32;
                out_shape.iter().product()
            ]));
            let got = patches(&p, &shape, &x, &out_shape);
            assert_eq!(got, reference(&p, shape, &x, &out_shape), "{shape:?} {p:?}");
        }
    }
}
