//! Indexing: `take` and `takeAlongAxis` (one gather primitive), `putAlongAxis` and
//! `sliceUpdate` (one scatter primitive). Indices are int32 or uint32; negative ones count
//! from the end, and out-of-range ones clamp on the device, as MLX's do.
//! The indices' own values are not read on the host: an op builder never waits for data.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::primitive::{Primitive, Scatter};
use crate::graph::shape::{broadcast_shapes, checked_size, fmt_shape, normalize_axis};
use crate::ops::shape::slice_region;
use crate::ops::unary::astype;
use crate::ops::{broadcast_to, flatten, reshape};
use crate::stream::Stream;

/// Checks that `indices` hold integers.
fn check_indices(op: &str, indices: &Array) -> Result<()> {
    if indices.dtype().is_signed_int() || indices.dtype().is_unsigned_int() {
        return Ok(());
    }
    Err(Error::DType(format!(
        "{op}: indices must be integers (int32, uint32, int8 or uint8), got {}",
        indices.dtype().name()
    )))
}

/// `x`'s extent on `axis` must hold something to take when anything is taken.
fn check_extent(op: &str, x: &Array, axis: usize, taken: usize) -> Result<()> {
    if x.shape()[axis] == 0 && taken > 0 {
        return Err(Error::Value(format!(
            "{op}: cannot take from axis {axis} of an array of shape {}, which is empty",
            fmt_shape(x.shape())
        )));
    }
    Ok(())
}

/// MLX's `take_along_axis`: `x` and `indices` have one rank and broadcast together except on
/// `axis`, where the result has the indices' extent. Without an axis, both are flattened.
pub fn take_along_axis(
    x: &Array,
    indices: &Array,
    axis: Option<isize>,
    stream: impl Into<Stream>,
) -> Result<Array> {
    let stream: Stream = stream.into();
    check_indices("takeAlongAxis", indices)?;
    let Some(axis) = axis else {
        return gather(
            "takeAlongAxis",
            &flatten(x, stream),
            &flatten(indices, stream),
            0,
            stream,
        );
    };
    if indices.ndim() != x.ndim() {
        return Err(Error::Shape(format!(
            "takeAlongAxis: indices of shape {} must have the rank of the array's shape {}",
            fmt_shape(indices.shape()),
            fmt_shape(x.shape())
        )));
    }
    let axis = normalize_axis("takeAlongAxis", axis, x.ndim())?;
    gather("takeAlongAxis", x, indices, axis, stream)
}

/// MLX's `take`: the elements at `indices` along `axis` (of the flattened array without one);
/// the result's shape is `x`'s with the axis replaced by the indices' shape.
pub fn take(
    x: &Array,
    indices: &Array,
    axis: Option<isize>,
    stream: impl Into<Stream>,
) -> Result<Array> {
    let stream: Stream = stream.into();
    check_indices("take", indices)?;
    let (x, axis) = match axis {
        None => (flatten(x, stream), 0),
        Some(a) => (x.clone(), normalize_axis("take", a, x.ndim())?),
    };
    let shape = x.shape();
    let (outer, inner) = (
        crate::graph::shape::numel(&shape[..axis]),
        crate::graph::shape::numel(&shape[axis + 1..]),
    );
    // [outer, K, inner] gathered with the flat indices as [1, I, 1], broadcast.
    let x3 = reshape(
        &x,
        &[outer as isize, shape[axis] as isize, inner as isize],
        stream,
    )?;
    let flat = reshape(indices, &[1, -1, 1], stream)?;
    let taken = gather("take", &x3, &flat, 1, stream)?;
    let mut out: Vec<isize> = shape[..axis].iter().map(|&d| d as isize).collect();
    out.extend(indices.shape().iter().map(|&d| d as isize));
    out.extend(shape[axis + 1..].iter().map(|&d| d as isize));
    reshape(&taken, &out, stream)
}

/// The gather node: `x` and `indices` of one rank, broadcast except on `axis`.
fn gather(op: &str, x: &Array, indices: &Array, axis: usize, stream: Stream) -> Result<Array> {
    let mut shape = Vec::with_capacity(x.ndim());
    for (d, (&a, &b)) in x.shape().iter().zip(indices.shape()).enumerate() {
        shape.push(match (a, b) {
            _ if d == axis => b,
            (a, b) if a == b => a,
            (1, b) => b,
            (a, 1) => a,
            _ => {
                return Err(Error::Shape(format!(
                    "{op}: the array of shape {} and indices of shape {} do not broadcast \
                     outside axis {axis}",
                    fmt_shape(x.shape()),
                    fmt_shape(indices.shape())
                )));
            }
        });
    }
    checked_size(op, &shape)?;
    check_extent(op, x, axis, crate::graph::shape::numel(&shape))?;
    Ok(Array::from_primitive(
        Primitive::Gather(axis),
        vec![x.clone(), indices.clone()],
        shape,
        x.dtype(),
        stream,
    ))
}

/// MLX's `put_along_axis`: a copy of `x` with `values` written at `indices` along `axis`
/// (without one, into the flattened array, reshaped back). `indices` has `x`'s rank; it and
/// `values` broadcast together to the updates' shape, which off the axis must broadcast to
/// `x`'s. The values take `x`'s dtype.
pub fn put_along_axis(
    x: &Array,
    indices: &Array,
    values: &Array,
    axis: Option<isize>,
    stream: impl Into<Stream>,
) -> Result<Array> {
    let stream: Stream = stream.into();
    const OP: &str = "putAlongAxis";
    check_indices(OP, indices)?;
    let Some(axis) = axis else {
        let flat = [flatten(x, stream), flatten(indices, stream)];
        let values = match values.ndim() {
            0 => values.clone(),
            _ => flatten(values, stream),
        };
        let put = put_along_axis(&flat[0], &flat[1], &values, Some(0), stream)?;
        let shape: Vec<isize> = x.shape().iter().map(|&d| d as isize).collect();
        return reshape(&put, &shape, stream);
    };
    if indices.ndim() != x.ndim() {
        return Err(Error::Shape(format!(
            "{OP}: indices of shape {} must have the rank of the array's shape {}",
            fmt_shape(indices.shape()),
            fmt_shape(x.shape())
        )));
    }
    let axis = normalize_axis(OP, axis, x.ndim())?;
    scatter_node(OP, Scatter::Axis(axis), x, indices, values, stream)
}

/// MLX's `scatter_add` with `put_along_axis`'s placement: a copy of the float32 `x` with each
/// of `values` added at its index along `axis`, so repeated indices sum (the gradient of a
/// gather). Shapes as [`put_along_axis`]; the values take `x`'s dtype.
pub fn scatter_add_along_axis(
    x: &Array,
    indices: &Array,
    values: &Array,
    axis: usize,
    stream: impl Into<Stream>,
) -> Result<Array> {
    let stream: Stream = stream.into();
    const OP: &str = "scatterAdd";
    check_indices(OP, indices)?;
    if x.dtype() != DType::Float32 || indices.ndim() != x.ndim() || axis >= x.ndim() {
        return Err(Error::Value(format!(
            "{OP}: needs a float32 array and indices of its rank {} with an axis below it, got {} {} and indices {} on axis {axis}",
            x.ndim(),
            x.dtype().name(),
            fmt_shape(x.shape()),
            fmt_shape(indices.shape()),
        )));
    }
    scatter_node(OP, Scatter::AxisAdd(axis), x, indices, values, stream)
}

/// The node of `scatter` (along an axis) of `values` into `x` at `indices`, both broadcast to
/// the updates' shape, the values in `x`'s dtype.
fn scatter_node(
    op: &str,
    scatter: Scatter,
    x: &Array,
    indices: &Array,
    values: &Array,
    stream: Stream,
) -> Result<Array> {
    let (Scatter::Axis(axis) | Scatter::AxisAdd(axis)) = scatter else {
        unreachable!("only the scatters along an axis have indices")
    };
    let shape = update_shape(op, x, indices, values, axis)?;
    check_extent(op, x, axis, crate::graph::shape::numel(&shape))?;
    let values = astype(values, x.dtype(), stream);
    Ok(Array::from_primitive(
        Primitive::Scatter(scatter),
        vec![
            x.clone(),
            broadcast_to(indices, &shape, stream)?,
            broadcast_to(&values, &shape, stream)?,
        ],
        x.shape().to_vec(),
        x.dtype(),
        stream,
    ))
}

/// The shape of a scatter's updates along `axis`: the broadcast of the indices and the values,
/// which off `axis` must also broadcast to `x`'s shape (each row of `x` gets its updates).
fn update_shape(
    op: &str,
    x: &Array,
    indices: &Array,
    values: &Array,
    axis: usize,
) -> Result<Vec<usize>> {
    let mismatch = || {
        Error::Shape(format!(
            "{op}: indices of shape {} and values of shape {} do not broadcast to the \
             array's shape {} outside axis {axis}",
            fmt_shape(indices.shape()),
            fmt_shape(values.shape()),
            fmt_shape(x.shape())
        ))
    };
    let shape = broadcast_shapes("putAlongAxis", indices.shape(), values.shape())
        .map_err(|_| mismatch())?;
    if shape.len() != x.ndim() || shape[axis] != indices.shape()[axis] {
        return Err(mismatch());
    }
    let mut out = shape;
    for (d, extent) in out.iter_mut().enumerate() {
        match (*extent, x.shape()[d]) {
            _ if d == axis => {}
            (e, n) if e == n => {}
            (1, n) => *extent = n,
            _ => return Err(mismatch()),
        }
    }
    Ok(out)
}

/// MLX's `slice_update`: a copy of `x` whose slice (`start`, `stop` and `strides` as `slice`
/// takes them) holds `update`, broadcast to the slice's shape and cast to `x`'s dtype.
pub fn slice_update(
    x: &Array,
    update: &Array,
    start: &[isize],
    stop: &[isize],
    strides: Option<&[isize]>,
    stream: impl Into<Stream>,
) -> Result<Array> {
    let stream: Stream = stream.into();
    const OP: &str = "sliceUpdate";
    let region = slice_region(OP, x.shape(), start, stop, strides)?;
    let fits = update.ndim() <= region.shape.len()
        && broadcast_shapes(OP, update.shape(), &region.shape).is_ok_and(|s| s == region.shape);
    if !fits {
        return Err(Error::Shape(format!(
            "{OP}: an update of shape {} does not broadcast to the slice's shape {}",
            fmt_shape(update.shape()),
            fmt_shape(&region.shape)
        )));
    }
    let update = broadcast_to(&astype(update, x.dtype(), stream), &region.shape, stream)?;
    Ok(Array::from_primitive(
        Primitive::Scatter(Scatter::Slice {
            start: region.start,
            step: region.step,
        }),
        vec![x.clone(), update],
        x.shape().to_vec(),
        x.dtype(),
        stream,
    ))
}
