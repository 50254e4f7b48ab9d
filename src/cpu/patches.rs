//! The patches of a 2-D convolution's input (im2col, see [`Patches`]): for each output
//! position and tap, the input's `C` channels (one contiguous run) or zeros.

use crate::graph::primitive::Patches;

/// The patches of `x` (row-major words of `[N, H, W, C]`) into the node's `[N, OH, OW, taps, C]`.
pub fn patches(p: &Patches, x_shape: &[usize], x: &[u32], out_shape: &[usize]) -> Vec<u32> {
    let (h, w, c) = (x_shape[1], x_shape[2], x_shape[3]);
    let (n, oh, ow) = (out_shape[0], out_shape[1], out_shape[2]);
    let [kh, kw] = p.kernel;
    let mut out = Vec::with_capacity(out_shape.iter().product());
    for image in 0..n {
        let base = image * h * w * c;
        for y in 0..oh {
            for xo in 0..ow {
                for i in 0..kh {
                    let row = p.source(0, y, i, h);
                    for j in 0..kw {
                        match (row, p.source(1, xo, j, w)) {
                            (Some(r), Some(col)) => {
                                let at = base + (r * w + col) * c;
                                out.extend_from_slice(&x[at..at + c]);
                            }
                            _ => out.resize(out.len() + c, 0),
                        }
                    }
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
