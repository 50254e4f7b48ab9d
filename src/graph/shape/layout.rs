//! Layouts: where an array's elements sit in its storage, and the views (reshape, transpose,
//! slice) that only change the layout.

use super::{broadcast_strides, contiguous_strides};

/// Where an array's elements sit in its storage: a stride per axis (in elements) and the
/// offset of the first element. Views share storage and differ only in layout.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Layout {
    pub strides: Vec<isize>,
    pub offset: usize,
}

impl Layout {
    /// The row-major layout of a fresh array.
    pub fn contiguous(shape: &[usize]) -> Layout {
        Layout {
            strides: contiguous_strides(shape),
            offset: 0,
        }
    }

    /// Whether a row-major walk of `shape` reads the storage densely and in order from
    /// `offset` (axes of extent 1 may have any stride).
    pub fn is_contiguous(&self, shape: &[usize]) -> bool {
        let expected = contiguous_strides(shape);
        shape
            .iter()
            .zip(self.strides.iter().zip(&expected))
            .all(|(&extent, (s, e))| extent == 1 || s == e)
    }

    /// Strides that read this array (of `shape`) as the broadcast shape `target`.
    pub fn broadcast(&self, shape: &[usize], target: &[usize]) -> Vec<isize> {
        broadcast_strides(shape, &self.strides, target)
    }
}

/// How a kernel can walk the matrices of an array of shape `[batch…, rows, cols]` without a
/// copy: the distance between consecutive matrices (0 when one matrix is broadcast across the
/// batch), if each matrix is dense row-major and the batch is either broadcast or dense.
pub fn matrix_batch_stride(shape: &[usize], layout: &Layout) -> Option<usize> {
    let n = shape.len();
    let (rows, cols) = (shape[n - 2], shape[n - 1]);
    let matrix = Layout {
        strides: layout.strides[n - 2..].to_vec(),
        offset: 0,
    };
    if !matrix.is_contiguous(&shape[n - 2..]) {
        return None;
    }
    let (batch, strides) = (&shape[..n - 2], &layout.strides[..n - 2]);
    let significant = || batch.iter().zip(strides).filter(|(d, _)| **d != 1);
    if significant().all(|(_, &s)| s == 0) {
        return Some(0);
    }
    let unit = (rows * cols) as isize;
    let dense = contiguous_strides(batch);
    let is_dense = batch
        .iter()
        .zip(strides.iter().zip(&dense))
        .all(|(&d, (&s, &e))| d == 1 || s == e * unit);
    is_dense.then_some(rows * cols)
}

/// The length of the row that `strides` repeat along `shape`, if they do (a bias over a
/// matmul's rows): every axis from some split on is dense over the row, every axis before it
/// is broadcast (stride 0 or extent 1), and at least one of those repeats (extent above 1).
pub fn repeated_row(shape: &[usize], strides: &[isize]) -> Option<usize> {
    let split = (0..shape.len())
        .rev()
        .find(|&d| shape[d] > 1 && strides[d] == 0)?
        + 1;
    let inner = &shape[split..];
    let dense = contiguous_strides(inner);
    let fits = inner
        .iter()
        .zip(strides[split..].iter().zip(&dense))
        .all(|(&extent, (&s, &d))| extent <= 1 || s == d);
    let broadcast = (0..split).all(|d| shape[d] <= 1 || strides[d] == 0);
    let len: usize = inner.iter().product();
    (fits && broadcast && len > 0).then_some(len)
}

/// How a kernel that takes a row stride can walk the matrices of an array of shape
/// `[batch…, rows, cols]` in place: `(batch stride, row stride)`, if each row is contiguous
/// and the matrices are broadcast (batch stride 0) or evenly spaced. A column slice of a wider
/// matrix qualifies (the heads of a fused QKV projection: rows 2304 apart, heads 64 apart);
/// a transposed matrix does not.
pub fn matrix_rows_walk(shape: &[usize], layout: &Layout) -> Option<(usize, usize)> {
    let n = shape.len();
    let (rows, cols) = (shape[n - 2], shape[n - 1]);
    let (row_stride, col_stride) = (layout.strides[n - 2], layout.strides[n - 1]);
    if cols > 1 && col_stride != 1 {
        return None;
    }
    let row_stride = if rows > 1 { row_stride } else { cols as isize };
    if row_stride < cols as isize {
        return None;
    }
    let batch: Vec<(usize, isize)> = shape[..n - 2]
        .iter()
        .zip(&layout.strides[..n - 2])
        .filter(|(d, _)| **d != 1)
        .map(|(&d, &s)| (d, s))
        .collect();
    if batch.iter().all(|&(_, s)| s == 0) {
        return Some((0, row_stride as usize));
    }
    // One evenly spaced run of matrices: each batch axis steps over the ones inside it.
    let evenly = batch.windows(2).all(|w| w[0].1 == w[1].1 * w[1].0 as isize);
    let step = batch.last().map_or(0, |&(_, s)| s);
    (evenly && step > 0).then_some((step as usize, row_stride as usize))
}

/// The walk of [`matrix_rows_walk`] over the columns of a transposed view: `(batch stride,
/// column stride)` where each column of the `[batch…, rows, cols]` matrices is contiguous.
pub fn matrix_columns_walk(shape: &[usize], layout: &Layout) -> Option<(usize, usize)> {
    let n = shape.len();
    let mut swapped_shape = shape.to_vec();
    swapped_shape.swap(n - 2, n - 1);
    let mut strides = layout.strides.clone();
    strides.swap(n - 2, n - 1);
    let swapped = Layout {
        strides,
        offset: layout.offset,
    };
    matrix_rows_walk(&swapped_shape, &swapped)
}

/// The layout of `reshape(x, new_shape)` when it can share `x`'s storage, or `None` when the
/// data must be copied first. It can whenever each group of `x`'s axes that the new shape
/// merges or splits is itself laid out as one run (NumPy's no-copy rule): adding or removing
/// axes of extent 1, any contiguous array, and, for example, the heads split out of a column
/// slice of a fused projection (`[128, 768]` with row stride 2304 as `[128, 12, 64]`).
pub fn reshape_view(shape: &[usize], layout: &Layout, new_shape: &[usize]) -> Option<Layout> {
    if layout.is_contiguous(shape) {
        return Some(Layout {
            strides: contiguous_strides(new_shape),
            offset: layout.offset,
        });
    }
    let old: Vec<(usize, isize)> = shape
        .iter()
        .zip(&layout.strides)
        .filter(|(d, _)| **d != 1)
        .map(|(&d, &s)| (d, s))
        .collect();
    let mut strides = vec![0isize; new_shape.len()];
    let (mut o, mut n) = (0, 0);
    while o < old.len() {
        // The next group: old axes o..o_end and new axes n..n_end of equal product.
        let (mut o_end, mut n_end) = (o + 1, n);
        let (mut old_product, mut new_product) = (old[o].0, 1);
        while new_product != old_product || n_end == n {
            if new_product < old_product || n_end == n {
                new_product *= *new_shape.get(n_end)?;
                n_end += 1;
            } else {
                old_product *= old.get(o_end)?.0;
                o_end += 1;
            }
        }
        let one_run = (o..o_end - 1).all(|k| old[k].1 == old[k + 1].1 * old[k + 1].0 as isize);
        if !one_run {
            return None;
        }
        // Row-major inside the group, from the stride of its innermost old axis.
        let mut stride = old[o_end - 1].1;
        for k in (n..n_end).rev() {
            strides[k] = if new_shape[k] == 1 { 0 } else { stride };
            stride *= new_shape[k] as isize;
        }
        (o, n) = (o_end, n_end);
    }
    Some(Layout {
        strides,
        offset: layout.offset,
    })
}

/// The layout of `transpose(x, axes)`: output axis `i` is input axis `axes[i]`.
pub fn transpose_view(layout: &Layout, axes: &[usize]) -> Layout {
    Layout {
        strides: axes.iter().map(|&a| layout.strides[a]).collect(),
        offset: layout.offset,
    }
}

/// The layout of a slice that starts at `start` and steps by `step` on each axis.
pub fn slice_view(layout: &Layout, start: &[usize], step: &[isize]) -> Layout {
    let shift: isize = start
        .iter()
        .zip(&layout.strides)
        .map(|(&i, &s)| i as isize * s)
        .sum();
    Layout {
        strides: layout
            .strides
            .iter()
            .zip(step)
            .map(|(s, k)| s * k)
            .collect(),
        offset: (layout.offset as isize + shift) as usize,
    }
}

/// The strides that read `x` (of `shape`, with `strides`) for each element of a gather's
/// output of `out` shape: 0 on the gathered axis and on broadcast axes. With them, the stride
/// on the axis itself.
pub fn gather_strides(
    shape: &[usize],
    strides: &[isize],
    out: &[usize],
    axis: usize,
) -> (Vec<isize>, isize) {
    let base = (0..out.len())
        .map(|d| {
            if d == axis || shape[d] == 1 {
                0
            } else {
                strides[d]
            }
        })
        .collect();
    (base, strides[axis])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrices_are_walked_in_place_when_dense_or_broadcast() {
        let dense = Layout::contiguous(&[3, 2, 4]);
        assert_eq!(matrix_batch_stride(&[3, 2, 4], &dense), Some(8));
        let broadcast = Layout {
            strides: vec![0, 4, 1],
            offset: 0,
        };
        assert_eq!(matrix_batch_stride(&[3, 2, 4], &broadcast), Some(0));
        let transposed = transpose_view(&Layout::contiguous(&[4, 2]), &[1, 0]);
        assert_eq!(matrix_batch_stride(&[2, 4], &transposed), None);
        assert_eq!(matrix_rows_walk(&[2, 4], &transposed), None);
        // ...but its columns are: 2 apart, each of 4 contiguous elements.
        assert_eq!(matrix_columns_walk(&[2, 4], &transposed), Some((0, 2)));
        assert_eq!(
            matrix_columns_walk(&[2, 4], &Layout::contiguous(&[2, 4])),
            None
        );
        // The keys of 12 heads transposed for q kᵀ: [1, 12, 64, 128] over a [128, 2304] slice.
        let keys = Layout {
            strides: vec![0, 64, 1, 2304],
            offset: 768,
        };
        assert_eq!(
            matrix_columns_walk(&[1, 12, 64, 128], &keys),
            Some((64, 2304))
        );
        assert_eq!(matrix_rows_walk(&[3, 2, 4], &dense), Some((8, 4)));
        assert_eq!(matrix_rows_walk(&[3, 2, 4], &broadcast), Some((0, 4)));
        // The 12 heads of q in a [128, 2304] projection, as [1, 12, 1, 128, 64].
        let heads = Layout {
            strides: vec![0, 64, 0, 2304, 1],
            offset: 0,
        };
        assert_eq!(
            matrix_rows_walk(&[1, 12, 1, 128, 64], &heads),
            Some((64, 2304))
        );
        // Batch axes that do not step evenly, or rows that overlap, are not walked.
        let uneven = Layout {
            strides: vec![100, 8, 4, 1],
            offset: 0,
        };
        assert_eq!(matrix_rows_walk(&[2, 3, 2, 4], &uneven), None);
        let overlapping = Layout {
            strides: vec![2, 1],
            offset: 0,
        };
        assert_eq!(matrix_rows_walk(&[3, 4], &overlapping), None);
    }
}
