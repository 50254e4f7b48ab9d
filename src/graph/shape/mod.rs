//! Shapes, strides and broadcasting, as pure functions.
//!
//! Strides count elements, not bytes, and are signed so that views with negative steps fit.

use crate::error::{Error, Result};

mod layout;
mod walk;

pub use layout::{
    Layout, gather_strides, matrix_batch_stride, matrix_columns_walk, matrix_rows_walk,
    repeated_row, reshape_view, slice_view, transpose_view,
};
pub use walk::{for_each_row, for_each_run};

/// Number of elements of a shape; 1 for a scalar (rank 0).
pub fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// The most elements an array may have: its bytes (4 per element in storage) must be
/// countable in a `usize` (32 bits on wasm32) and in 53 bits (a JS number) everywhere.
pub const MAX_ELEMENTS: u64 = (1 << 53) / 4;

/// The element count of a new array of `shape`, checked: a count past [`MAX_ELEMENTS`] (or
/// one whose bytes a `usize` cannot count) is a `MemoryLimitError` that names `op`, never a
/// silent wrap-around.
///
/// ```
/// use tandem::graph::shape::checked_size;
/// assert_eq!(checked_size("zeros", &[2, 3]).unwrap(), 6);
/// assert!(checked_size("zeros", &[usize::MAX, 2]).is_err());
/// ```
pub fn checked_size(op: &str, shape: &[usize]) -> Result<usize> {
    let count = shape
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d as u64))
        .filter(|&n| n <= MAX_ELEMENTS)
        .and_then(|n| usize::try_from(n.checked_mul(4)?).ok().map(|_| n as usize));
    count.ok_or_else(|| {
        Error::MemoryLimit(format!(
            "{op}: an array of shape {} has more bytes than this platform can address",
            fmt_shape(shape)
        ))
    })
}

/// `[2, 3]`-style text for error messages.
pub fn fmt_shape(shape: &[usize]) -> String {
    format!("{shape:?}")
}

/// Row-major strides of a contiguous array.
///
/// ```
/// assert_eq!(tandem::graph::shape::contiguous_strides(&[2, 3, 4]), vec![12, 4, 1]);
/// ```
pub fn contiguous_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![1isize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        // Saturating: only an empty array's strides can get this big, and they are never
        // stepped along.
        strides[i] = strides[i + 1].saturating_mul(shape[i + 1] as isize);
    }
    strides
}

/// The NumPy broadcast of two shapes; `op` names the caller in the error.
///
/// ```
/// use tandem::graph::shape::broadcast_shapes;
/// assert_eq!(broadcast_shapes("add", &[2, 1, 3], &[4, 1]).unwrap(), vec![2, 4, 3]);
/// assert!(broadcast_shapes("add", &[2], &[3]).is_err());
/// ```
pub fn broadcast_shapes(op: &str, a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    let rank = a.len().max(b.len());
    let dim = |s: &[usize], i: usize| {
        let lead = rank - s.len();
        if i < lead { 1 } else { s[i - lead] }
    };
    let shape = (0..rank)
        .map(|i| match (dim(a, i), dim(b, i)) {
            (x, y) if x == y => Ok(x),
            (1, y) => Ok(y),
            (x, 1) => Ok(x),
            _ => Err(Error::Shape(format!(
                "{op}: shapes {} and {} cannot be broadcast together",
                fmt_shape(a),
                fmt_shape(b)
            ))),
        })
        .collect::<Result<Vec<usize>>>()?;
    // [n, 1] and [1, n] broadcast to n * n elements, which may not fit.
    checked_size(op, &shape)?;
    Ok(shape)
}

/// Strides that read an array of `shape` as if it had the (broadcast) shape `target`: missing
/// leading dimensions and dimensions of size 1 get stride 0.
///
/// The caller guarantees that `shape` broadcasts to `target`.
pub fn broadcast_strides(shape: &[usize], strides: &[isize], target: &[usize]) -> Vec<isize> {
    let lead = target.len() - shape.len();
    (0..target.len())
        .map(|i| {
            if i < lead || shape[i - lead] == 1 {
                0
            } else {
                strides[i - lead]
            }
        })
        .collect()
}

/// Strides that read a contiguous array of `shape` as the broadcast shape `target`.
pub fn contiguous_broadcast_strides(shape: &[usize], target: &[usize]) -> Vec<isize> {
    broadcast_strides(shape, &contiguous_strides(shape), target)
}

/// Normalizes MLX's `slice(x, start, stop, strides)` on one axis of extent `n`: negative indices
/// count from the end and out-of-range ones clamp. Returns the first index and the length.
/// `step` is not 0. Any `isize` start, stop or step works: nothing here can overflow.
///
/// ```
/// use tandem::graph::shape::normalize_slice_axis;
/// assert_eq!(normalize_slice_axis(10, 1, 8, 3), (1, 3));
/// assert_eq!(normalize_slice_axis(10, -1, isize::MIN, -4), (9, 3));
/// assert_eq!(normalize_slice_axis(10, 0, 10, isize::MAX), (0, 1));
/// ```
pub fn normalize_slice_axis(n: usize, start: isize, stop: isize, step: isize) -> (usize, usize) {
    let n = n as isize;
    let wrap = |i: isize| if i < 0 { i.saturating_add(n) } else { i };
    let stride = step.unsigned_abs();
    let (first, len) = if step > 0 {
        let (a, b) = (wrap(start).clamp(0, n), wrap(stop).clamp(0, n));
        (
            a,
            if b > a {
                (b - a - 1) as usize / stride + 1
            } else {
                0
            },
        )
    } else {
        let (a, b) = (wrap(start).clamp(-1, n - 1), wrap(stop).clamp(-1, n - 1));
        (
            a,
            if a > b {
                (a - b - 1) as usize / stride + 1
            } else {
                0
            },
        )
    };
    (if len > 0 { first as usize } else { 0 }, len)
}

/// An axis in `-ndim..ndim` as an index; `op` names the caller in the error.
pub fn normalize_axis(op: &str, axis: isize, ndim: usize) -> Result<usize> {
    let n = ndim as isize;
    if axis < -n || axis >= n {
        return Err(Error::Value(format!(
            "{op}: axis {axis} is out of range for an array of {ndim} dimensions"
        )));
    }
    Ok(if axis < 0 { axis + n } else { axis } as usize)
}

/// Several axes, normalized and checked for repeats.
pub fn normalize_axes(op: &str, axes: &[isize], ndim: usize) -> Result<Vec<usize>> {
    let mut out = Vec::with_capacity(axes.len());
    for &axis in axes {
        let a = normalize_axis(op, axis, ndim)?;
        if out.contains(&a) {
            return Err(Error::Value(format!("{op}: axis {axis} is repeated")));
        }
        out.push(a);
    }
    Ok(out)
}

/// Merges adjacent dimensions that every operand walks contiguously, and drops dimensions of
/// size 1, so kernels loop over as few dimensions as possible. Returns the collapsed shape and
/// each operand's collapsed strides; a scalar becomes shape `[1]`.
///
/// ```
/// use tandem::graph::shape::collapse_dims;
/// let (shape, strides) = collapse_dims(&[2, 3, 4], [&[12, 4, 1][..], &[0, 0, 1][..]]);
/// assert_eq!(shape, vec![6, 4]);
/// assert_eq!(strides, [vec![4, 1], vec![0, 1]]);
/// ```
pub fn collapse_dims<const N: usize>(
    shape: &[usize],
    strides: [&[isize]; N],
) -> (Vec<usize>, [Vec<isize>; N]) {
    let mut out_shape: Vec<usize> = Vec::with_capacity(shape.len());
    let mut out_strides: [Vec<isize>; N] = std::array::from_fn(|_| Vec::new());
    for (d, &extent) in shape.iter().enumerate() {
        if extent == 1 {
            continue;
        }
        let mergeable = !out_shape.is_empty()
            && (0..N).all(|k| out_strides[k].last() == Some(&(strides[k][d] * extent as isize)));
        if mergeable {
            // The merged dimension steps like its inner part.
            let last = out_shape.len() - 1;
            out_shape[last] *= extent;
            for (k, s) in out_strides.iter_mut().enumerate() {
                s[last] = strides[k][d];
            }
        } else {
            out_shape.push(extent);
            for (k, s) in out_strides.iter_mut().enumerate() {
                s.push(strides[k][d]);
            }
        }
    }
    if out_shape.is_empty() {
        out_shape.push(1);
        for s in out_strides.iter_mut() {
            s.push(0);
        }
    }
    (out_shape, out_strides)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reshape_views_contiguous_data_and_unit_axis_changes() {
        let t = transpose_view(&Layout::contiguous(&[2, 3]), &[1, 0]);
        assert_eq!(
            reshape_view(&[3, 2], &t, &[6]),
            None,
            "a transposed array must be copied"
        );
        let unit = reshape_view(&[3, 2], &t, &[3, 1, 2]).unwrap();
        assert_eq!(unit.strides, vec![1, 0, 3]);
        let flat = reshape_view(&[2, 3], &Layout::contiguous(&[2, 3]), &[3, 2]).unwrap();
        assert_eq!(flat.strides, vec![2, 1]);
        // Columns 768.. of a [128, 2304] projection, split into heads and merged back.
        let columns = Layout {
            strides: vec![2304, 1],
            offset: 768,
        };
        let heads = reshape_view(&[128, 768], &columns, &[1, 128, 12, 64]).unwrap();
        assert_eq!((heads.strides, heads.offset), (vec![0, 2304, 64, 1], 768));
        let back = reshape_view(
            &[128, 12, 64],
            &Layout {
                strides: vec![2304, 64, 1],
                offset: 768,
            },
            &[128, 768],
        );
        assert_eq!(back.map(|l| l.strides), Some(vec![2304, 1]));
        assert!(
            reshape_view(&[128, 768], &columns, &[256, 384]).is_none(),
            "rows would run into each other"
        );
        // Reversed on both axes, flattened: one run backwards.
        let reversed = Layout {
            strides: vec![-3, -1],
            offset: 5,
        };
        let flat = reshape_view(&[2, 3], &reversed, &[6]).unwrap();
        assert_eq!((flat.strides, flat.offset), (vec![-1], 5));
        // Empty arrays of other shapes are copied (nothing to copy).
        let empty = Layout {
            strides: vec![1, 0],
            offset: 0,
        };
        assert!(reshape_view(&[0, 3], &empty, &[3, 0]).is_none());
    }

    #[test]
    fn slices_follow_mlx_normalization() {
        assert_eq!(normalize_slice_axis(5, 1, 4, 1), (1, 3));
        assert_eq!(normalize_slice_axis(5, -2, 100, 1), (3, 2));
        assert_eq!(normalize_slice_axis(5, 4, -100, -1), (4, 5));
        assert_eq!(normalize_slice_axis(5, -1, 0, -2), (4, 2));
        assert_eq!(normalize_slice_axis(5, 3, 1, 1), (0, 0));
        assert_eq!(normalize_slice_axis(0, 0, 0, 1), (0, 0));
    }

    #[test]
    fn slice_view_moves_the_offset_and_scales_strides() {
        let l = slice_view(&Layout::contiguous(&[4, 5]), &[1, 4], &[2, -1]);
        assert_eq!(
            l,
            Layout {
                strides: vec![10, -1],
                offset: 9
            }
        );
    }

    #[test]
    fn axes_wrap_and_reject_repeats() {
        assert_eq!(normalize_axes("sum", &[-1, 0], 3).unwrap(), vec![2, 0]);
        assert_eq!(
            normalize_axis("sum", 3, 3).unwrap_err().kind(),
            "ValueError"
        );
        assert!(normalize_axes("sum", &[1, -2], 3).is_err());
    }

    #[test]
    fn scalar_has_one_element() {
        assert_eq!(numel(&[]), 1);
        assert_eq!(numel(&[3, 0, 2]), 0);
    }

    #[test]
    fn broadcast_prepends_ones() {
        assert_eq!(broadcast_shapes("add", &[3], &[2, 3]).unwrap(), vec![2, 3]);
        assert_eq!(broadcast_shapes("add", &[], &[2, 3]).unwrap(), vec![2, 3]);
        assert_eq!(broadcast_shapes("add", &[0], &[1]).unwrap(), vec![0]);
    }

    #[test]
    fn broadcast_error_names_op_and_shapes() {
        let err = broadcast_shapes("add", &[2, 3], &[4]).unwrap_err();
        assert_eq!(err.kind(), "ShapeError");
        assert_eq!(
            err.message(),
            "add: shapes [2, 3] and [4] cannot be broadcast together"
        );
    }

    #[test]
    fn broadcast_strides_zero_the_stretched_dims() {
        assert_eq!(
            broadcast_strides(&[3, 1], &[1, 1], &[2, 3, 4]),
            vec![0, 1, 0]
        );
    }

    #[test]
    fn collapse_merges_contiguous_and_drops_unit_dims() {
        let (shape, [s]) = collapse_dims(&[2, 1, 3], [&[3, 3, 1][..]]);
        assert_eq!((shape, s), (vec![6], vec![1]));
        let (shape, [s]) = collapse_dims(&[], [&[][..]]);
        assert_eq!((shape, s), (vec![1], vec![0]));
    }

    #[test]
    fn collapse_keeps_transposed_dims_apart() {
        let (shape, [s]) = collapse_dims(&[3, 2], [&[1, 3][..]]);
        assert_eq!((shape, s), (vec![3, 2], vec![1, 3]));
    }

    #[test]
    fn rows_visit_every_offset_in_order() {
        let shape = [2, 3, 2];
        let strides = [contiguous_strides(&shape), vec![0, 1, 0]];
        let mut seen = Vec::new();
        for_each_row(&shape, [&strides[0][..], &strides[1][..]], |row, off| {
            seen.push((row, off))
        });
        let expected: Vec<(usize, [isize; 2])> = vec![
            (0, [0, 0]),
            (1, [2, 1]),
            (2, [4, 2]),
            (3, [6, 0]),
            (4, [8, 1]),
            (5, [10, 2]),
        ];
        assert_eq!(seen, expected);
    }
}
