//! Running reductions: `cumsum cumprod cummax cummin logcumsumexp`. The scanned axis is moved
//! last with a transpose view (`along_last`), scanned as rows, and moved back.

use crate::array::Array;
use crate::error::Result;
use crate::graph::primitive::{Primitive, ScanOp};
use crate::graph::shape::normalize_axis;
use crate::ops::flatten;
use crate::ops::shape::along_last;
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
    let dtype = op.out_dtype(x.dtype());
    along_last(&x, axis, stream, |rows| {
        let primitive = Primitive::Scan {
            op,
            reverse,
            inclusive,
        };
        let shape = rows.shape().to_vec();
        Ok(Array::from_primitive(
            primitive,
            vec![rows.clone()],
            shape,
            dtype,
            stream,
        ))
    })
}
