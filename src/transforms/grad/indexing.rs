//! The rules of the primitives that move elements: concatenation, the gather and sorts (whose
//! cotangents go back by a scatter-add), the scatters, slice updates and a convolution's
//! patches (one slice update of zeros per kernel tap: a documented fallback whose memory is
//! stated with it).

use crate::array::Array;
use crate::dtype::DType;
use crate::error::Result;
use crate::graph::primitive::{BinaryOp, Patches, Primitive, Scatter};
use crate::ops;
use crate::stream::Stream;

use super::cotangent::{in_dtype, unbroadcast};

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

/// `take_along_axis`'s transpose: `g` added into zeros of the gathered array's shape at the
/// indices it was read from (a scatter-add, in float32), then summed over the axes where `x`
/// was broadcast. Its memory is one array of that shape.
pub(super) fn scattered(
    axis: usize,
    x: &Array,
    indices: &Array,
    g: &Array,
    s: Stream,
) -> Result<Array> {
    let mut shape = g.shape().to_vec();
    shape[axis] = x.shape()[axis];
    // Half-precision cotangents are summed in float32, and rounded once.
    let zeros = ops::zeros(&shape, DType::Float32, s)?;
    let g32 = in_dtype(g, DType::Float32, s);
    let summed = ops::scatter_add_along_axis(&zeros, indices, &g32, axis, s)?;
    unbroadcast(&in_dtype(&summed, g.dtype(), s), x.shape(), s)
}

/// `scatterAdd(x, indices, values)`: `x` gets `g` unchanged (every update was added to it),
/// the values get `g` gathered where they landed.
pub(super) fn scatter_add(
    axis: usize,
    inputs: &[Array],
    g: &Array,
    s: Stream,
) -> Result<Vec<Option<Array>>> {
    Ok(vec![
        Some(g.clone()),
        None,
        Some(landed(axis, inputs, g, s)),
    ])
}

/// `g` read where a scatter along `axis` landed its updates (`inputs` are the scatter's: x,
/// the indices and the values, both in the updates' shape): the values' cotangent.
fn landed(axis: usize, inputs: &[Array], g: &Array, s: Stream) -> Array {
    let (indices, values) = (&inputs[1], &inputs[2]);
    Array::from_primitive(
        Primitive::Gather(axis),
        vec![g.clone(), indices.clone()],
        values.shape().to_vec(),
        g.dtype(),
        s,
    )
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
    let gx = Array::from_primitive(
        Primitive::Scatter(Scatter::Axis(axis)),
        vec![g.clone(), indices.clone(), zeros],
        g.shape().to_vec(),
        g.dtype(),
        s,
    );
    let gv = values
        .dtype()
        .is_float()
        .then(|| landed(axis, inputs, g, s));
    Ok(vec![Some(gx), None, gv])
}
