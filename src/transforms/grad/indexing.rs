//! The rules of the primitives that move elements: concatenation, the gather, sorts, slice
//! updates and a convolution's patches. Without a scatter-add primitive yet, the gather and
//! the sorts scatter their cotangent by one-hot rows, and the patches by one slice update of
//! zeros per kernel tap: right, documented fallbacks whose memory is stated with each.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::Result;
use crate::graph::primitive::{BinaryOp, Patches, Primitive, ReduceOp, Scatter};
use crate::ops;
use crate::stream::Stream;

use super::rules::unbroadcast;

/// Each input's part of `g` along the axis.
pub(super) fn concatenate(
    axis: usize,
    inputs: &[Array],
    g: &Array,
    s: Stream,
) -> Result<Vec<Option<Array>>> {
    let mut offset = 0;
    inputs
        .iter()
        .map(|x| {
            let len = x.shape()[axis];
            let mut start = vec![0isize; g.ndim()];
            let mut stop: Vec<isize> = g.shape().iter().map(|&d| d as isize).collect();
            start[axis] = offset as isize;
            stop[axis] = (offset + len) as isize;
            offset += len;
            ops::slice(g, &start, &stop, None, s).map(Some)
        })
        .collect()
}

/// `take_along_axis`'s transpose, by one-hot rows (a documented fallback until a scatter-add
/// primitive exists): each index, normalized as the gather reads it (negative from the end,
/// the rest clamped), marks one of the axis's `n` positions, and `g` is summed into them.
/// Its memory is the gathered shape times `n`.
pub(super) fn scattered(
    axis: usize,
    x: &Array,
    indices: &Array,
    g: &Array,
    s: Stream,
) -> Result<Array> {
    let n = x.shape()[axis];
    let int = |v: f64| ops::creation::scalar(v, DType::Int32);
    let idx = ops::astype(indices, DType::Int32, s);
    let below = ops::binary(BinaryOp::Less, &idx, &int(0.0)?, s)?;
    let wrapped = ops::where_(
        &below,
        &ops::binary(BinaryOp::Add, &idx, &int(n as f64)?, s)?,
        &idx,
        s,
    )?;
    let top = ops::binary(
        BinaryOp::Minimum,
        &wrapped,
        &int(n.saturating_sub(1) as f64)?,
        s,
    )?;
    let idx = ops::binary(BinaryOp::Maximum, &top, &int(0.0)?, s)?;
    let positions = ops::arange(0.0, n as f64, 1.0, DType::Int32, s)?;
    let hot = ops::binary(
        BinaryOp::Equal,
        &ops::expand_dims(&idx, &[-1], s)?,
        &positions,
        s,
    )?;
    let hot = ops::astype(&hot, g.dtype(), s);
    let spread = ops::binary(BinaryOp::Multiply, &ops::expand_dims(g, &[-1], s)?, &hot, s)?;
    let summed = ops::reduce(ReduceOp::Sum, &spread, Some(&[axis as isize]), true, s)?;
    // [..., 1 (the axis), ..., n] to [..., n, ..., 1], then drop the last axis.
    let rank = summed.ndim();
    let mut perm: Vec<isize> = (0..rank as isize).collect();
    perm.swap(axis, rank - 1);
    let moved = ops::transpose(&summed, Some(&perm), s)?;
    let dims: Vec<isize> = moved.shape()[..rank - 1]
        .iter()
        .map(|&d| d as isize)
        .collect();
    unbroadcast(&ops::reshape(&moved, &dims, s)?, x.shape(), s)
}

/// A sort's (or `topk`'s) values: `g` goes back to the positions the sort took them from,
/// which the same sort's indices give.
pub(super) fn sorted(
    x: &Array,
    (descending, keep): (bool, usize),
    g: &Array,
    s: Stream,
) -> Result<Array> {
    let sort = Primitive::Sort {
        indices: true,
        descending,
        keep,
    };
    let shape = g.shape().to_vec();
    let positions = Array::from_primitive(sort, vec![x.clone()], shape, DType::Uint32, s);
    scattered(x.ndim() - 1, x, &positions, g, s)
}

/// `g` in the shape of `x`, zero everywhere but the slice (`start`, `step`) that holds `part`:
/// a slice update of zeros.
pub(super) fn placed(
    x_shape: &[usize],
    (start, step): (&[usize], &[isize]),
    part: &Array,
    s: Stream,
) -> Result<Array> {
    let zeros = ops::zeros(x_shape, part.dtype(), s)?;
    let scatter = Scatter::Slice {
        start: start.to_vec(),
        step: step.to_vec(),
    };
    let inputs = vec![zeros, part.clone()];
    Ok(Array::from_primitive(
        Primitive::Scatter(scatter),
        inputs,
        x_shape.to_vec(),
        part.dtype(),
        s,
    ))
}

/// The sum of cotangents that each [`placed`] a slice of `x`, when the slices step by 1, take
/// disjoint runs of one axis and the whole of every other (a `split`'s parts, or some of
/// them): one concatenation along that axis, with zeros in the gaps, rather than a zero-filled
/// copy of `x` per part and their sum. `None` for any other cotangents.
pub(super) fn joined(x_shape: &[usize], parts: &[Array], s: Stream) -> Result<Option<Array>> {
    let mut runs = Vec::new();
    let mut along = None;
    for part in parts {
        let Some((axis, start, update)) = placed_run(x_shape, part) else {
            return Ok(None);
        };
        if along.is_some_and(|a| a != axis) {
            return Ok(None);
        }
        along = Some(axis);
        runs.push((start, update));
    }
    let Some(axis) = along.filter(|_| runs.len() > 1) else {
        return Ok(None);
    };
    runs.sort_by_key(|(start, _)| *start);
    let dtype = runs[0].1.dtype();
    let mut pieces = Vec::new();
    let mut at = 0;
    let gap = |from: usize, to: usize| {
        let mut shape = x_shape.to_vec();
        shape[axis] = to - from;
        ops::zeros(&shape, dtype, s)
    };
    for (start, update) in runs {
        if start < at || update.dtype() != dtype {
            return Ok(None); // overlapping runs add, they do not join
        }
        if start > at {
            pieces.push(gap(at, start)?);
        }
        at = start + update.shape()[axis];
        pieces.push(update);
    }
    if at < x_shape[axis] {
        pieces.push(gap(at, x_shape[axis])?);
    }
    ops::concatenate(&pieces, axis as isize, s).map(Some)
}

/// `(axis, start, update)` when `part` is a slice update of zeros in the shape of `x` whose
/// slice steps by 1 and differs from the whole of `x` on one axis (or none: then axis 0).
fn placed_run(x_shape: &[usize], part: &Array) -> Option<(usize, usize, Array)> {
    let Some(Primitive::Scatter(Scatter::Slice { start, step })) = part.primitive() else {
        return None;
    };
    let inputs = part.inputs();
    let zeros = matches!(
        inputs[0].primitive(),
        Some(Primitive::Fill(crate::graph::primitive::Fill::Constant(0)))
    );
    let update = inputs.get(1)?;
    let fits = zeros
        && !x_shape.is_empty()
        && part.shape() == x_shape
        && update.ndim() == x_shape.len()
        && step.iter().all(|&st| st == 1);
    if !fits {
        return None;
    }
    let partial: Vec<usize> = (0..x_shape.len())
        .filter(|&a| start[a] != 0 || update.shape()[a] != x_shape[a])
        .collect();
    match partial[..] {
        [] => Some((0, 0, update.clone())),
        [axis] => Some((axis, start[axis], update.clone())),
        _ => None,
    }
}

/// `sliceUpdate(x, update)`: `x` gets `g` with the slice zeroed (the update replaced it), the
/// update gets the slice of `g`.
pub(super) fn slice_update(
    update: &Array,
    (start, step): (&[usize], &[isize]),
    g: &Array,
    s: Stream,
) -> Result<Vec<Option<Array>>> {
    let view = crate::graph::primitive::View::Slice {
        start: start.to_vec(),
        step: step.to_vec(),
    };
    let shape = update.shape().to_vec();
    let part = Array::from_primitive(Primitive::View(view), vec![g.clone()], shape, g.dtype(), s);
    let zeros = ops::zeros(update.shape(), g.dtype(), s)?;
    let scatter = Scatter::Slice {
        start: start.to_vec(),
        step: step.to_vec(),
    };
    let gx = Array::from_primitive(
        Primitive::Scatter(scatter),
        vec![g.clone(), zeros],
        g.shape().to_vec(),
        g.dtype(),
        s,
    );
    Ok(vec![Some(gx), update.dtype().is_float().then_some(part)])
}

/// A convolution's patches `[N, OH, OW, KH * KW, C]` of `x` `[N, H, W, C]`: each tap's
/// cotangent lands on the strided positions it read in the padded input (a slice update of
/// zeros), the taps are summed, and the padding is cut off. Its memory is a padded input's
/// worth per tap until the sum consumes it.
pub(super) fn patches(p: &Patches, x: &Array, g: &Array, s: Stream) -> Result<Array> {
    let [n, h, w, c] = [x.shape()[0], x.shape()[1], x.shape()[2], x.shape()[3]];
    let [oh, ow] = [g.shape()[1], g.shape()[2]];
    let padded = [n, h + 2 * p.padding[0], w + 2 * p.padding[1], c];
    let mut sum: Option<Array> = None;
    for i in 0..p.kernel[0] {
        for j in 0..p.kernel[1] {
            let t = (i * p.kernel[1] + j) as isize;
            let stop = [n, oh, ow, t as usize + 1, c].map(|d| d as isize);
            let tap = ops::slice(g, &[0, 0, 0, t, 0], &stop, None, s)?;
            let tap = ops::reshape(&tap, &[n, oh, ow, c].map(|d| d as isize), s)?;
            let start = [0, i * p.dilation[0], j * p.dilation[1], 0];
            let step = [1, p.stride[0] as isize, p.stride[1] as isize, 1];
            let part = placed(&padded, (&start, &step), &tap, s)?;
            sum = Some(match sum {
                Some(before) => ops::binary(BinaryOp::Add, &before, &part, s)?,
                None => part,
            });
        }
    }
    let sum = sum.expect("a kernel has at least one tap");
    let start = [0, p.padding[0], p.padding[1], 0].map(|d| d as isize);
    let stop = [n, p.padding[0] + h, p.padding[1] + w, c].map(|d| d as isize);
    ops::slice(&sum, &start, &stop, None, s)
}

/// `putAlongAxis(x, indices, values)`: `x` gets `g` with the written positions zeroed, the
/// values get `g` gathered from them (of two values written to one element, each gets its
/// slope, though one landed).
pub(super) fn put_along_axis(
    axis: usize,
    inputs: &[Array],
    g: &Array,
    s: Stream,
) -> Result<Vec<Option<Array>>> {
    let (indices, values) = (&inputs[1], &inputs[2]);
    let zeros = ops::zeros(values.shape(), g.dtype(), s)?;
    let inputs = vec![g.clone(), indices.clone(), zeros];
    let gx = Array::from_primitive(
        Primitive::Scatter(Scatter::Axis(axis)),
        inputs,
        g.shape().to_vec(),
        g.dtype(),
        s,
    );
    let gathered = Array::from_primitive(
        Primitive::Gather(axis),
        vec![g.clone(), indices.clone()],
        values.shape().to_vec(),
        g.dtype(),
        s,
    );
    Ok(vec![
        Some(gx),
        None,
        values.dtype().is_float().then_some(gathered),
    ])
}
