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

/// The layout of `reshape(x, new_shape)` when it can share `x`'s storage: always when only
/// axes of extent 1 are added or removed, and otherwise when `x` is contiguous. `None` means the
/// data must be copied first.
pub fn reshape_view(shape: &[usize], layout: &Layout, new_shape: &[usize]) -> Option<Layout> {
    let non_unit = |s: &[usize]| s.iter().copied().filter(|&d| d != 1).collect::<Vec<_>>();
    if non_unit(shape) == non_unit(new_shape) {
        let mut kept = shape
            .iter()
            .zip(&layout.strides)
            .filter(|(d, _)| **d != 1)
            .map(|(_, &s)| s);
        let strides = new_shape
            .iter()
            .map(|&d| if d == 1 { 0 } else { kept.next().unwrap_or(0) })
            .collect();
        return Some(Layout {
            strides,
            offset: layout.offset,
        });
    }
    layout.is_contiguous(shape).then(|| Layout {
        strides: contiguous_strides(new_shape),
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
