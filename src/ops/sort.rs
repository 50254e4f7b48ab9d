//! `sort`, `argsort` and `topk`: a stable sort of one axis (NaN last), moved last with a
//! transpose view for the kernel and back after.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::primitive::Primitive;
use crate::graph::shape::{fmt_shape, normalize_axis};
use crate::ops::shape::along_last;
use crate::ops::{flatten, reshape};
use crate::stream::Stream;

/// The sort node over `axis` (the flattened array without one; a scalar counts as one
/// element, as MLX's flattened sort makes it `[1]`).
fn sorted(
    op: &str,
    x: &Array,
    axis: Option<isize>,
    keep: Option<usize>,
    (indices, descending): (bool, bool),
    stream: Stream,
) -> Result<Array> {
    let (x, axis) = match axis {
        None => (reshape(&flatten(x, stream), &[-1], stream)?, 0),
        Some(_) if x.ndim() == 0 => {
            return Err(Error::Value(format!(
                "{op}: a scalar has no axis to sort; pass no axis to sort it flattened"
            )));
        }
        Some(a) => (x.clone(), normalize_axis(op, a, x.ndim())?),
    };
    let n = x.ndim();
    let extent = x.shape()[axis];
    let keep = keep.unwrap_or(extent);
    if keep > extent {
        return Err(Error::Value(format!(
            "{op}: k = {keep} is more than the {extent} elements of axis {axis} of shape {}",
            fmt_shape(x.shape())
        )));
    }
    let dtype = if indices { DType::Uint32 } else { x.dtype() };
    along_last(&x, axis, stream, |rows| {
        let mut shape = rows.shape().to_vec();
        shape[n - 1] = keep;
        let primitive = Primitive::Sort {
            indices,
            descending,
            keep,
        };
        Ok(Array::from_primitive(
            primitive,
            vec![rows.clone()],
            shape,
            dtype,
            stream,
        ))
    })
}

/// The values of `x` sorted along `axis` (flattened without one), stable, NaN last.
pub fn sort(x: &Array, axis: Option<isize>, stream: impl Into<Stream>) -> Result<Array> {
    sorted("sort", x, axis, None, (false, false), stream.into())
}

/// The positions that sort `x` along `axis`, as uint32 (a stable sort: ties keep their order).
pub fn argsort(x: &Array, axis: Option<isize>, stream: impl Into<Stream>) -> Result<Array> {
    sorted("argsort", x, axis, None, (true, false), stream.into())
}

/// The `k` largest along `axis`, in descending order (NaN counts as the largest, as in MLX).
pub fn topk(x: &Array, k: usize, axis: Option<isize>, stream: impl Into<Stream>) -> Result<Array> {
    sorted("topk", x, axis, Some(k), (false, true), stream.into())
}
