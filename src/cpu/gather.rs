//! The gather of `take` and `takeAlongAxis`: each output element copies the word of `x` at
//! its own coordinates, with the gathered axis's coordinate read from the indices. Every
//! dtype is one word an element, so the kernel never looks at the values.

use crate::cpu::HostInput;
use crate::dtype::DType;
use crate::graph::shape::{collapse_dims, for_each_row, gather_strides};

/// An index word of `dtype` as a position on an axis of `extent` (at least 1): negative
/// counts from the end, and out-of-range clamps, as MLX's kernels do.
pub fn position(word: u32, dtype: DType, extent: usize) -> isize {
    let last = extent as i64 - 1;
    let i = match dtype {
        DType::Int32 => {
            let i = i64::from(word as i32);
            if i < 0 { i + extent as i64 } else { i }
        }
        _ => i64::from(word),
    };
    i.clamp(0, last) as isize
}

/// `x` gathered along `axis` by `indices` into the row-major words of `out` shape.
pub fn gather(
    x: (&[usize], &HostInput),
    indices: (&[usize], DType, &HostInput),
    out: &[usize],
    axis: usize,
) -> Vec<u32> {
    let (x_shape, x_data) = x;
    let (i_shape, i_dtype, i_data) = indices;
    let mut words = Vec::with_capacity(crate::graph::shape::numel(out));
    if words.capacity() == 0 {
        return words;
    }
    let (base, step) = gather_strides(x_shape, &x_data.layout.strides, out, axis);
    let i_strides = i_data.layout.broadcast(i_shape, out);
    let (dims, [sx, si]) = collapse_dims(out, [&base[..], &i_strides[..]]);
    let inner = dims[dims.len() - 1];
    let (ix, ii) = (sx[sx.len() - 1], si[si.len() - 1]);
    let extent = x_shape[axis];
    for_each_row(&dims, [&sx[..], &si[..]], |_, [ox, oi]| {
        let (px, pi) = (
            x_data.layout.offset as isize + ox,
            i_data.layout.offset as isize + oi,
        );
        words.extend((0..inner as isize).map(|k| {
            let at = position(i_data.words[(pi + k * ii) as usize], i_dtype, extent);
            x_data.words[(px + k * ix + at * step) as usize]
        }));
    });
    words
}

#[cfg(test)]
mod tests {
    use super::position;
    use crate::dtype::DType;

    #[test]
    fn negative_positions_count_from_the_end_and_the_rest_clamp() {
        let at = |i: i32| position(i as u32, DType::Int32, 5);
        assert_eq!(
            [at(0), at(4), at(-1), at(-5), at(5), at(-6), at(i32::MIN)],
            [0, 4, 4, 0, 4, 0, 0]
        );
        assert_eq!(position(u32::MAX, DType::Uint32, 5), 4);
    }
}
