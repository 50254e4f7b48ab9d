//! Running reductions: `cumsum cumprod cummax cummin logcumsumexp`. The scanned axis is moved
//! last with a transpose view, scanned as rows, and moved back with another view.

use crate::array::Array;
use crate::error::Result;
use crate::graph::primitive::{Primitive, ScanOp};
use crate::graph::shape::normalize_axis;
use crate::ops::{flatten, transpose};
use crate::stream::Stream;

/// `op` running along `axis` (the flattened array without one), from the end when `reverse`,
/// each element's own value left out unless `inclusive` (MLX's defaults: false, true).
pub fn scan(
    op: ScanOp,
    x: &Array,
    axis: Option<isize>,
    reverse: bool,
    inclusive: bool,
    stream: impl Into<Stream>,
) -> Result<Array> {
    let stream: Stream = stream.into();
    let (x, axis) = match axis {
        None => (flatten(x, stream), 0),
        Some(a) if x.ndim() == 0 => {
            normalize_axis(op.name(), a, 1)?;
            (x.clone(), 0)
        }
        Some(a) => (x.clone(), normalize_axis(op.name(), a, x.ndim())?),
    };
    let n = x.ndim();
    let last = n.saturating_sub(1);
    // The permutation that swaps `axis` and the last axis is its own inverse.
    let order: Vec<isize> = (0..n)
        .map(|d| match d {
            d if d == axis => last,
            d if d == last => axis,
            d => d,
        } as isize)
        .collect();
    let moved = if axis == last {
        x.clone()
    } else {
        transpose(&x, Some(&order), stream)?
    };
    let node = Array::from_primitive(
        Primitive::Scan {
            op,
            reverse,
            inclusive,
        },
        vec![moved.clone()],
        moved.shape().to_vec(),
        op.out_dtype(x.dtype()),
        stream,
    );
    if axis == last {
        Ok(node)
    } else {
        transpose(&node, Some(&order), stream)
    }
}
