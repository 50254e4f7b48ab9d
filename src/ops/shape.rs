//! Shape ops. Each is a view of its input's storage where the layout allows (see
//! `primitive::View`); only a reshape of a non-contiguous array copies.

use crate::array::Array;
use crate::dtype::promote;
use crate::error::{Error, Result};
use crate::graph::primitive::{Primitive, View};
use crate::graph::shape::{
    broadcast_shapes, checked_size, fmt_shape, normalize_axes, normalize_axis, normalize_slice_axis,
};
use crate::stream::Stream;

fn view(x: &Array, view: View, shape: Vec<usize>, stream: impl Into<Stream>) -> Array {
    let stream: Stream = stream.into();
    Array::from_primitive(
        Primitive::View(view),
        vec![x.clone()],
        shape,
        x.dtype(),
        stream,
    )
}

/// `x` itself (a view of its data), with no gradient flowing back through it: MLX's
/// `stop_gradient`.
pub fn stop_gradient(x: &Array, stream: impl Into<Stream>) -> Array {
    view(x, View::StopGradient, x.shape().to_vec(), stream)
}

/// `x` with `shape`; one entry may be -1 and is inferred.
pub fn reshape(x: &Array, shape: &[isize], stream: impl Into<Stream>) -> Result<Array> {
    let stream: Stream = stream.into();
    // Saturating: a product past usize matches no element count, and fails below.
    let known: usize = shape
        .iter()
        .filter(|&&d| d >= 0)
        .fold(1usize, |n, &d| n.saturating_mul(d as usize));
    let inferred = shape.iter().filter(|&&d| d == -1).count();
    let bad = |why: &str| {
        Error::Shape(format!(
            "reshape: cannot reshape an array of shape {} ({} elements) to {shape:?}: {why}",
            fmt_shape(x.shape()),
            x.size()
        ))
    };
    if shape.iter().any(|&d| d < -1) || inferred > 1 {
        return Err(bad("only one -1 is allowed and no other negative size"));
    }
    let new_shape: Vec<usize> = if inferred == 1 {
        if known == 0 || !x.size().is_multiple_of(known) {
            return Err(bad("the sizes do not divide the element count"));
        }
        shape
            .iter()
            .map(|&d| {
                if d == -1 {
                    x.size() / known
                } else {
                    d as usize
                }
            })
            .collect()
    } else {
        shape.iter().map(|&d| d as usize).collect()
    };
    if checked_size("reshape", &new_shape).ok() != Some(x.size()) {
        return Err(bad("the element counts differ"));
    }
    Ok(view(x, View::Reshape, new_shape, stream))
}

/// `x` as one dimension.
pub fn flatten(x: &Array, stream: impl Into<Stream>) -> Array {
    let stream: Stream = stream.into();
    view(x, View::Reshape, vec![x.size()], stream)
}

/// `x` with its axes permuted; `None` reverses them.
pub fn transpose(x: &Array, axes: Option<&[isize]>, stream: impl Into<Stream>) -> Result<Array> {
    let stream: Stream = stream.into();
    let n = x.ndim();
    let axes = match axes {
        Some(axes) => {
            let a = normalize_axes("transpose", axes, n)?;
            if a.len() != n {
                return Err(Error::Value(format!(
                    "transpose: {} axes given for an array of {n} dimensions",
                    a.len()
                )));
            }
            a
        }
        None => (0..n).rev().collect(),
    };
    let shape = axes.iter().map(|&a| x.shape()[a]).collect();
    Ok(view(x, View::Transpose(axes), shape, stream))
}

/// `x` with new axes of extent 1 at `axes` (positions in the result).
pub fn expand_dims(x: &Array, axes: &[isize], stream: impl Into<Stream>) -> Result<Array> {
    let stream: Stream = stream.into();
    let out_ndim = x.ndim() + axes.len();
    let axes = normalize_axes("expandDims", axes, out_ndim)?;
    let mut rest = x.shape().iter();
    let shape = (0..out_ndim)
        .map(|i| {
            if axes.contains(&i) {
                1
            } else {
                *rest.next().unwrap_or(&1)
            }
        })
        .collect();
    Ok(view(x, View::Reshape, shape, stream))
}

/// `x` without the axes of extent 1 in `axes` (all of them when `None`).
pub fn squeeze(x: &Array, axes: Option<&[isize]>, stream: impl Into<Stream>) -> Result<Array> {
    let stream: Stream = stream.into();
    let axes = match axes {
        Some(axes) => normalize_axes("squeeze", axes, x.ndim())?,
        None => (0..x.ndim()).filter(|&a| x.shape()[a] == 1).collect(),
    };
    if let Some(&a) = axes.iter().find(|&&a| x.shape()[a] != 1) {
        return Err(Error::Shape(format!(
            "squeeze: axis {a} of shape {} has extent {}, not 1",
            fmt_shape(x.shape()),
            x.shape()[a]
        )));
    }
    let shape = (0..x.ndim())
        .filter(|a| !axes.contains(a))
        .map(|a| x.shape()[a])
        .collect();
    Ok(view(x, View::Reshape, shape, stream))
}

/// `x` repeated along axes to `shape`, by NumPy's broadcasting rules.
pub fn broadcast_to(x: &Array, shape: &[usize], stream: impl Into<Stream>) -> Result<Array> {
    let stream: Stream = stream.into();
    let fits = match broadcast_shapes("broadcastTo", x.shape(), shape) {
        Ok(broadcast) => broadcast == shape,
        Err(too_large @ Error::MemoryLimit(_)) => return Err(too_large),
        Err(_) => false,
    };
    if !fits {
        return Err(Error::Shape(format!(
            "broadcastTo: shape {} cannot be broadcast to {}",
            fmt_shape(x.shape()),
            fmt_shape(shape)
        )));
    }
    Ok(view(x, View::Broadcast, shape.to_vec(), stream))
}

/// MLX's `slice(x, start, stop, strides)`: per axis, negative indices count from the end,
/// stops clamp to the extent, and negative strides walk backwards.
pub fn slice(
    x: &Array,
    start: &[isize],
    stop: &[isize],
    strides: Option<&[isize]>,
    stream: impl Into<Stream>,
) -> Result<Array> {
    let region = slice_region("slice", x.shape(), start, stop, strides)?;
    Ok(view(
        x,
        View::Slice {
            start: region.start,
            step: region.step,
        },
        region.shape,
        stream,
    ))
}

/// The part of an array that a slice selects: the first index and step on each axis (the
/// slice view's parameters) and the shape.
pub(crate) struct SliceRegion {
    pub start: Vec<usize>,
    pub step: Vec<isize>,
    pub shape: Vec<usize>,
}

/// The region of an array of `shape` that `start`, `stop` and `strides` (one each per axis,
/// clamped as MLX clamps them) select, for `op`.
pub(crate) fn slice_region(
    op: &str,
    shape: &[usize],
    start: &[isize],
    stop: &[isize],
    strides: Option<&[isize]>,
) -> Result<SliceRegion> {
    let n = shape.len();
    let ones = vec![1isize; n];
    let strides = strides.unwrap_or(&ones);
    if start.len() != n || stop.len() != n || strides.len() != n {
        return Err(Error::Value(format!(
            "{op}: start, stop and strides need {n} entries each for shape {}, got {}, {} and {}",
            fmt_shape(shape),
            start.len(),
            stop.len(),
            strides.len()
        )));
    }
    if strides.contains(&0) {
        return Err(Error::Value(format!("{op}: a stride of 0 is not allowed")));
    }
    let mut region = SliceRegion {
        start: Vec::with_capacity(n),
        step: Vec::with_capacity(n),
        shape: Vec::with_capacity(n),
    };
    for axis in 0..n {
        let (a, len) = normalize_slice_axis(shape[axis], start[axis], stop[axis], strides[axis]);
        region.start.push(a);
        region.shape.push(len);
        // With one element or none the step is never taken; a huge one would overflow the
        // view's stride.
        region.step.push(if len > 1 { strides[axis] } else { 1 });
    }
    Ok(region)
}

/// The arrays joined along `axis`; their dtypes promote together.
pub fn concatenate(arrays: &[Array], axis: isize, stream: impl Into<Stream>) -> Result<Array> {
    let stream: Stream = stream.into();
    let first = arrays
        .first()
        .ok_or_else(|| Error::Value("concatenate: needs at least one array".into()))?;
    let axis = normalize_axis("concatenate", axis, first.ndim())?;
    let mut shape = first.shape().to_vec();
    let mut dtype = first.dtype();
    for x in &arrays[1..] {
        let fits = x.ndim() == first.ndim()
            && (0..x.ndim()).all(|a| a == axis || x.shape()[a] == first.shape()[a]);
        if !fits {
            return Err(Error::Shape(format!(
                "concatenate: shape {} does not match {} outside axis {axis}",
                fmt_shape(x.shape()),
                fmt_shape(first.shape())
            )));
        }
        shape[axis] = shape[axis].saturating_add(x.shape()[axis]);
        dtype = promote(dtype, x.dtype());
    }
    // Broadcast views hold no memory, so their sum may be past what any array can hold.
    checked_size("concatenate", &shape)?;
    let primitive = Primitive::Concatenate(axis);
    Ok(Array::from_primitive(
        primitive,
        arrays.to_vec(),
        shape,
        dtype,
        stream,
    ))
}

/// The arrays, all of one shape, stacked along a new axis.
pub fn stack(arrays: &[Array], axis: isize, stream: impl Into<Stream>) -> Result<Array> {
    let stream: Stream = stream.into();
    let first = arrays
        .first()
        .ok_or_else(|| Error::Value("stack: needs at least one array".into()))?;
    if let Some(x) = arrays.iter().find(|x| x.shape() != first.shape()) {
        return Err(Error::Shape(format!(
            "stack: all arrays need one shape, but {} differs from {}",
            fmt_shape(x.shape()),
            fmt_shape(first.shape())
        )));
    }
    let expanded = arrays
        .iter()
        .map(|x| expand_dims(x, &[axis], stream))
        .collect::<Result<Vec<_>>>()?;
    let axis = normalize_axis("stack", axis, first.ndim() + 1)?;
    concatenate(&expanded, axis as isize, stream)
}

/// How `split` divides an axis: into equal sections, or at indices.
pub enum SplitAt<'a> {
    Sections(usize),
    Indices(&'a [isize]),
}

/// `x` cut along `axis` into views.
pub fn split(x: &Array, at: SplitAt, axis: isize, stream: impl Into<Stream>) -> Result<Vec<Array>> {
    let stream: Stream = stream.into();
    let axis = normalize_axis("split", axis, x.ndim())?;
    let extent = x.shape()[axis] as isize;
    let bounds: Vec<isize> = match at {
        SplitAt::Sections(0) => return Err(Error::Value("split: 0 sections".into())),
        SplitAt::Sections(n) if extent % n as isize != 0 => {
            return Err(Error::Value(format!(
                "split: axis {axis} of extent {extent} does not divide into {n} equal sections"
            )));
        }
        SplitAt::Sections(n) => (1..n as isize).map(|i| i * extent / n as isize).collect(),
        SplitAt::Indices(indices) => indices.to_vec(),
    };
    let mut edges = vec![0isize];
    edges.extend(bounds.iter().map(|&b| {
        if b < 0 {
            (b + extent).max(0)
        } else {
            b.min(extent)
        }
    }));
    edges.push(extent);
    edges
        .windows(2)
        .map(|w| {
            let mut start = vec![0isize; x.ndim()];
            let mut stop: Vec<isize> = x.shape().iter().map(|&d| d as isize).collect();
            start[axis] = w[0];
            stop[axis] = w[1].max(w[0]);
            slice(x, &start, &stop, None, stream)
        })
        .collect()
}

/// A shape's extents as the signed lengths `reshape` and `slice` take.
pub(crate) fn signed(shape: &[usize]) -> Vec<isize> {
    shape.iter().map(|&d| d as isize).collect()
}

/// `x[..., start:stop:step, ...]` on `axis` alone.
pub(crate) fn slice_axis(
    x: &Array,
    axis: usize,
    (start, stop, step): (usize, usize, isize),
    stream: Stream,
) -> Result<Array> {
    let n = x.ndim();
    let mut from = vec![0isize; n];
    let mut to = signed(x.shape());
    let mut steps = vec![1isize; n];
    (from[axis], to[axis], steps[axis]) = (start as isize, stop as isize, step);
    slice(x, &from, &to, Some(&steps), stream)
}

/// `op` applied with `axis` swapped to the last place (a transpose view), and the result's
/// axes swapped back: how the ops that work on rows (scans, sorts) reach any axis. The result
/// may differ from `x` in its last axis's length.
pub(crate) fn along_last(
    x: &Array,
    axis: usize,
    stream: Stream,
    op: impl FnOnce(&Array) -> Result<Array>,
) -> Result<Array> {
    let last = x.ndim().saturating_sub(1);
    if axis == last {
        return op(x);
    }
    // Swapping two axes is its own inverse.
    let order: Vec<isize> = (0..x.ndim())
        .map(|d| match d {
            d if d == axis => last,
            d if d == last => axis,
            d => d,
        } as isize)
        .collect();
    let moved = transpose(x, Some(&order), stream)?;
    transpose(&op(&moved)?, Some(&order), stream)
}
