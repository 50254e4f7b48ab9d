//! Shape and construction ops composed of views, joins and the gather: `pad`, `tile`,
//! `repeat`, `roll`, `diag` and `diagonal`.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::primitive::BinaryOp;
use crate::graph::shape::{fmt_shape, normalize_axes, normalize_axis};
use crate::ops::shape::{signed, slice_axis};
use crate::ops::{
    arange, binary, broadcast_to, concatenate, expand_dims, flatten, full, reshape, take,
    transpose, where_, zeros,
};
use crate::stream::Stream;

/// How `pad` fills.
#[derive(Debug, Clone, Copy)]
pub enum PadMode {
    /// This value, converted to the array's dtype.
    Constant(f64),
    /// The nearest edge element.
    Edge,
}

/// `x` padded by `(before, after)` elements on each axis.
pub fn pad(
    x: &Array,
    widths: &[(usize, usize)],
    mode: PadMode,
    stream: impl Into<Stream>,
) -> Result<Array> {
    let stream: Stream = stream.into();
    if widths.len() != x.ndim() {
        return Err(Error::Value(format!(
            "pad: padWidth needs one (before, after) pair per axis of shape {}, got {}",
            fmt_shape(x.shape()),
            widths.len()
        )));
    }
    let mut out = x.clone();
    for (axis, &(before, after)) in widths.iter().enumerate() {
        if before + after == 0 {
            continue;
        }
        let extent = out.shape()[axis];
        let side = |count: usize, at_start: bool| -> Result<Array> {
            let mut shape = out.shape().to_vec();
            shape[axis] = count;
            match mode {
                PadMode::Constant(value) => full(&shape, value, out.dtype(), stream),
                PadMode::Edge if extent == 0 => Err(Error::Value(format!(
                    "pad: edge mode has no edge to repeat on empty axis {axis}"
                ))),
                PadMode::Edge => {
                    let at = if at_start { 0 } else { extent - 1 };
                    broadcast_to(
                        &slice_axis(&out, axis, (at, at + 1, 1), stream)?,
                        &shape,
                        stream,
                    )
                }
            }
        };
        out = concatenate(
            &[side(before, true)?, out.clone(), side(after, false)?],
            axis as isize,
            stream,
        )?;
    }
    Ok(out)
}

/// NumPy's `tile`: `x` repeated `reps[i]` times along each axis (the shorter of the two lists
/// is padded with leading 1s).
pub fn tile(x: &Array, reps: &[usize], stream: impl Into<Stream>) -> Result<Array> {
    let stream: Stream = stream.into();
    let rank = reps.len().max(x.ndim());
    let mut dims = vec![1usize; rank - x.ndim()];
    dims.extend(x.shape());
    let mut counts = vec![1usize; rank - reps.len()];
    counts.extend(reps);
    // [1, d0, 1, d1, ...] broadcast to [r0, d0, r1, d1, ...], then merged pairwise.
    let spread: Vec<usize> = dims.iter().flat_map(|&d| [1, d]).collect();
    let target: Vec<usize> = dims
        .iter()
        .zip(&counts)
        .flat_map(|(&d, &r)| [r, d])
        .collect();
    let merged: Vec<usize> = dims.iter().zip(&counts).map(|(&d, &r)| d * r).collect();
    let laid = reshape(x, &signed(&spread), stream)?;
    reshape(
        &broadcast_to(&laid, &target, stream)?,
        &signed(&merged),
        stream,
    )
}

/// Each element repeated `repeats` times along `axis` (of the flattened array without one).
pub fn repeat(
    x: &Array,
    repeats: usize,
    axis: Option<isize>,
    stream: impl Into<Stream>,
) -> Result<Array> {
    let stream: Stream = stream.into();
    let (x, axis) = match axis {
        None => (reshape(&flatten(x, stream), &[-1], stream)?, 0),
        Some(a) => (x.clone(), normalize_axis("repeat", a, x.ndim())?),
    };
    let widened = expand_dims(&x, &[axis as isize + 1], stream)?;
    let mut target = widened.shape().to_vec();
    target[axis + 1] = repeats;
    let mut merged = signed(x.shape());
    merged[axis] *= repeats as isize;
    reshape(&broadcast_to(&widened, &target, stream)?, &merged, stream)
}

/// Elements shifted along each axis by its shift, wrapping around (the flattened array without
/// axes). One shift may serve several axes.
pub fn roll(
    x: &Array,
    shifts: &[i64],
    axes: Option<&[isize]>,
    stream: impl Into<Stream>,
) -> Result<Array> {
    let stream: Stream = stream.into();
    let Some(axes) = axes else {
        let rolled = roll(
            &reshape(&flatten(x, stream), &[-1], stream)?,
            shifts,
            Some(&[0]),
            stream,
        )?;
        return reshape(&rolled, &signed(x.shape()), stream);
    };
    let axes = normalize_axes("roll", axes, x.ndim())?;
    if shifts.len() != 1 && shifts.len() != axes.len() {
        return Err(Error::Value(format!(
            "roll: {} shifts for {} axes; give one shift, or one per axis",
            shifts.len(),
            axes.len()
        )));
    }
    let mut out = x.clone();
    for (i, &axis) in axes.iter().enumerate() {
        let n = out.shape()[axis] as i64;
        let shift = if n == 0 {
            0
        } else {
            shifts[i.min(shifts.len() - 1)].rem_euclid(n)
        };
        if shift == 0 {
            continue;
        }
        let cut = (n - shift) as usize;
        let (head, tail) = (
            slice_axis(&out, axis, (cut, n as usize, 1), stream)?,
            slice_axis(&out, axis, (0, cut, 1), stream)?,
        );
        out = concatenate(&[head, tail], axis as isize, stream)?;
    }
    Ok(out)
}

/// MLX's `diagonal`: the `offset`th diagonal of the planes of `axis1` and `axis2`, as a last axis.
pub fn diagonal(
    x: &Array,
    offset: i64,
    axis1: isize,
    axis2: isize,
    stream: impl Into<Stream>,
) -> Result<Array> {
    let stream: Stream = stream.into();
    let axes = normalize_axes("diagonal", &[axis1, axis2], x.ndim())?;
    let (a1, a2) = (axes[0], axes[1]);
    let (d1, d2) = (x.shape()[a1] as i64, x.shape()[a2] as i64);
    let (row, col) = (0.max(-offset), 0.max(offset));
    let length = (d1 - row).min(d2 - col).max(0);
    let mut order: Vec<isize> = (0..x.ndim())
        .filter(|&d| d != a1 && d != a2)
        .map(|d| d as isize)
        .collect();
    order.extend([a1 as isize, a2 as isize]);
    let moved = transpose(x, Some(&order), stream)?;
    let mut flat = signed(&moved.shape()[..x.ndim() - 2]);
    flat.push((d1 * d2) as isize);
    let planes = reshape(&moved, &flat, stream)?;
    let at: Vec<i32> = (0..length)
        .map(|i| ((i + row) * d2 + i + col) as i32)
        .collect();
    let indices = Array::from_slice(&at, &[at.len()])?;
    take(&planes, &indices, Some(-1), stream)
}

/// MLX's `diag`: a 1-D array's square matrix with it on the `k`th diagonal, or a 2-D array's
/// `k`th diagonal.
pub fn diag(x: &Array, k: i64, stream: impl Into<Stream>) -> Result<Array> {
    let stream: Stream = stream.into();
    match x.ndim() {
        2 => diagonal(x, k, 0, 1, stream),
        1 => {
            let len = x.shape()[0];
            let n = len + k.unsigned_abs() as usize;
            let values = concatenate(
                &[x.clone(), zeros(&[n - len], x.dtype(), stream)?],
                0,
                stream,
            )?;
            // Row i holds x[i] at column i + k (k >= 0); column j holds x[j] at row j - k.
            let line = if k >= 0 { [-1, 1] } else { [1, -1] };
            let values = reshape(&values, &line, stream)?;
            let rows = reshape(
                &arange(0.0, n as f64, 1.0, DType::Int32, stream)?,
                &[-1, 1],
                stream,
            )?;
            let shifted = arange(-(k as f64), n as f64 - k as f64, 1.0, DType::Int32, stream)?;
            let on = binary(BinaryOp::Equal, &shifted, &rows, stream)?;
            where_(
                &on,
                &broadcast_to(&values, &[n, n], stream)?,
                &zeros(&[], x.dtype(), stream)?,
                stream,
            )
        }
        _ => Err(Error::Value(format!(
            "diag: takes a 1-D or 2-D array, got shape {}",
            fmt_shape(x.shape())
        ))),
    }
}
