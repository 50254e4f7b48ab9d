//! The patches of a 2-D convolution's input (im2col, see [`Patches`]): for each output
//! position and tap, the input's `C` channels (one contiguous run) or zeros.

use std::mem::MaybeUninit;

use crate::graph::primitive::Patches;

/// The patches of `x` (row-major words of `[N, H, W, C]`) into the node's `[N, OH, OW, taps, C]`.
/// Each part of the output starts as zeros (the padding), zeroed by the thread that fills it,
/// and each kernel row's taps inside the input are copied in as one run: a few small copies per
/// output position, not a push per tap.
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
        part.fill(MaybeUninit::new(0));
        // SAFETY: every element of the part was just written.
        let part = unsafe { &mut *(std::ptr::from_mut(part) as *mut [u32]) };
        for (r, to) in (start / row_words..).zip(part.chunks_exact_mut(row_words)) {
            let image = &x[(r / oh) * h * w * c..(r / oh + 1) * h * w * c];
            output_row(p, image, (r % oh, ow), (h, w, c), to);
        }
    });
    // SAFETY: the parts zeroed all `len` words before copying into them.
    unsafe { out.set_len(len) };
    out
}

/// The patches of output row `y` (`ow` positions) of one image (`[H, W, C]` words) into `out`.
fn output_row(
    p: &Patches,
    image: &[u32],
    (y, ow): (usize, usize),
    (h, w, c): (usize, usize, usize),
    out: &mut [u32],
) {
    let [kh, kw] = p.kernel;
    let mut at = 0;
    for xo in 0..ow {
        for i in 0..kh {
            let to = &mut out[at..at + kw * c];
            at += kw * c;
            let Some(r) = p.source(0, y, i, h) else {
                continue;
            };
            let row = &image[r * w * c..(r + 1) * w * c];
            if p.dilation[1] == 1 {
                tap_run(to, row, p.stride[1] * xo, p.padding[1], (kw, c));
                continue;
            }
            for (j, tap) in to.chunks_exact_mut(c).enumerate() {
                if let Some(col) = p.source(1, xo, j, w) {
                    tap.copy_from_slice(&row[col * c..(col + 1) * c]);
                }
            }
        }
    }
}

/// The taps of one kernel row without dilation into `to` (zeros, `kw * c` long): input columns
/// `at - padding ..` of `row` are one contiguous run, cut where it reaches past either edge.
fn tap_run(to: &mut [u32], row: &[u32], at: usize, padding: usize, (kw, c): (usize, usize)) {
    // Zero channels: nothing to copy (and no width to find).
    let Some(width) = row.len().checked_div(c) else {
        return;
    };
    let before = padding.saturating_sub(at).min(kw);
    let first = (at + before).saturating_sub(padding).min(width);
    let inside = (kw - before).min(width.saturating_sub(first));
    to[before * c..(before + inside) * c].copy_from_slice(&row[first * c..(first + inside) * c]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_of_taps_past_either_edge_is_zeros() {
        let row = [1u32, 2];
        let run = |at, padding, kw| {
            let mut out = vec![0; kw];
            tap_run(&mut out, &row, at, padding, (kw, 1));
            out
        };
        assert_eq!(run(0, 1, 3), [0, 1, 2]);
        assert_eq!(run(1, 0, 3), [2, 0, 0]);
        assert_eq!(run(4, 1, 2), [0, 0]);
        assert_eq!(run(0, 5, 2), [0, 0]);
        let mut none: [u32; 0] = [];
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
}
