//! Each primitive's vector-Jacobian product: the cotangents of its inputs from the cotangent
//! `g` of its output, as lazy ops on the node's stream. The elementwise rules are in
//! `elementwise.rs`; an input broadcast by the op gets its cotangent summed back to its shape
//! (`cotangent.rs`).
//! A primitive without a rule yet is an error that names it, never a wrong gradient.

use crate::array::Array;
use crate::error::{Error, Result};
use crate::graph::primitive::{
    BinaryOp, NormKind, Primitive, ReduceOp, RowNorm, ScanOp, Scatter, UnaryOp, View,
};
use crate::ops;
use crate::stream::Stream;

use super::cotangent::unbroadcast;
use super::{checkpoint, elementwise, indexing, scan};

/// The cotangents of `node`'s `inputs` (`None`: none flows there) for its cotangent `g`;
/// only those `wanted` need be made.
pub(super) fn input_cotangents(
    node: &Array,
    inputs: &[Array],
    g: &Array,
    wanted: &[bool],
) -> Result<Vec<Option<Array>>> {
    let s = node.stream();
    let primitive = node.primitive().expect("an inner node has a primitive");
    let back =
        |gx: Option<Array>, x: &Array| gx.map(|gx| unbroadcast(&gx, x.shape(), s)).transpose();
    match primitive {
        Primitive::Unary(op) => Ok(vec![elementwise::unary(op, &inputs[0], node, g, s)?]),
        Primitive::Binary(op) => {
            let [ga, gb] = elementwise::binary(op, [&inputs[0], &inputs[1]], node, g, s)?;
            Ok(vec![back(ga, &inputs[0])?, back(gb, &inputs[1])?])
        }
        Primitive::Where => {
            let zero = ops::creation::scalar(0.0, g.dtype())?;
            let c = &inputs[0];
            let gx = ops::where_(c, g, &zero, s)?;
            let gy = ops::where_(c, &zero, g, s)?;
            let float = |x: &Array, gx: Array| x.dtype().is_float().then_some(gx);
            let gx = back(float(&inputs[1], gx), &inputs[1])?;
            Ok(vec![None, gx, back(float(&inputs[2], gy), &inputs[2])?])
        }
        Primitive::View(View::StopGradient) => Ok(vec![None]),
        Primitive::View(View::Depends) => {
            let after = std::iter::repeat_n(None, inputs.len() - 1);
            Ok(std::iter::once(Some(g.clone())).chain(after).collect())
        }
        Primitive::View(View::Checkpoint { output, function }) => {
            checkpoint::input_cotangents(output, &function, inputs, g, s)
        }
        Primitive::View(view) => Ok(vec![Some(view_rule(&view, &inputs[0], g, s)?)]),
        Primitive::Reduce(op, n) => Ok(vec![reduce_rule(op, n, &inputs[0], node, g, s)?]),
        Primitive::RowNorm(op, n) => Ok(vec![Some(row_norm_rule(op, n, &inputs[0], node, g, s)?)]),
        Primitive::Matmul => matmul_rule([&inputs[0], &inputs[1]], g, wanted, s),
        Primitive::Scan {
            op,
            reverse,
            inclusive,
        } => {
            let flags = (reverse, inclusive);
            Ok(vec![scan::input_cotangent(
                op, flags, &inputs[0], node, g, s,
            )?])
        }
        other => moving_cotangents(other, inputs, g, wanted, s),
    }
}

/// [`input_cotangents`] of the primitives that move elements, and the norms.
fn moving_cotangents(
    primitive: Primitive,
    inputs: &[Array],
    g: &Array,
    wanted: &[bool],
    s: Stream,
) -> Result<Vec<Option<Array>>> {
    match primitive {
        Primitive::Concatenate(axis) => indexing::concatenate(axis, inputs, g, s),
        norm @ Primitive::Norm { .. } => {
            let kind = NormKind::of(&norm).expect("a norm primitive");
            norm_rule(kind, inputs, g, wanted, s)
        }
        Primitive::Gather(axis) => {
            let gx = indexing::scattered(axis, &inputs[0], &inputs[1], g, s)?;
            Ok(vec![Some(gx), None])
        }
        Primitive::Sort {
            indices: false,
            descending,
            keep,
        } => Ok(vec![Some(indexing::sorted(
            &inputs[0],
            (descending, keep),
            g,
            s,
        )?)]),
        Primitive::Scatter(Scatter::Slice { start, step }) => {
            indexing::slice_update(&inputs[1], (&start, &step), g, s)
        }
        Primitive::Scatter(Scatter::Axis(axis)) => indexing::put_along_axis(axis, inputs, g, s),
        Primitive::Scatter(Scatter::AxisAdd(axis)) => indexing::scatter_add(axis, inputs, g, s),
        Primitive::Patches(patches) => {
            Ok(vec![Some(indexing::patches(&patches, &inputs[0], g, s)?)])
        }
        other => Err(Error::Value(format!(
            "grad: {} has no derivative yet",
            other.name()
        ))),
    }
}

fn view_rule(view: &View, x: &Array, g: &Array, s: Stream) -> Result<Array> {
    let dims: Vec<isize> = x.shape().iter().map(|&d| d as isize).collect();
    match view {
        View::Reshape => ops::reshape(g, &dims, s),
        View::Transpose(perm) => {
            let mut inverse = vec![0isize; perm.len()];
            for (i, &p) in perm.iter().enumerate() {
                inverse[p] = i as isize;
            }
            ops::transpose(g, Some(&inverse), s)
        }
        View::Broadcast => unbroadcast(g, x.shape(), s),
        // The slice's cotangent lands where the slice was read; the rest is zero.
        View::Slice { start, step } => indexing::placed(x.shape(), (start, step), g, s),
        View::StopGradient | View::Depends | View::Checkpoint { .. } => {
            unreachable!("input_cotangents has the rules of views with more than one input")
        }
    }
}

/// `v` (of the kept axes' shape) with `n` axes of extent 1 after them, broadcast to `x`.
fn spread(v: &Array, n: usize, x: &Array, s: Stream) -> Result<Array> {
    let kept: Vec<isize> = v
        .shape()
        .iter()
        .map(|&d| d as isize)
        .chain(std::iter::repeat_n(1, n))
        .collect();
    ops::broadcast_to(&ops::reshape(v, &kept, s)?, x.shape(), s)
}

/// The trailing `n` axes of `x`, for reductions over them.
fn trailing(n: usize, x: &Array) -> Vec<isize> {
    (x.ndim() - n..x.ndim()).map(|a| a as isize).collect()
}

/// A reduction over `x`'s trailing `n` axes: a sum spreads `g` back; `max` and `min` share
/// it equally among the elements that tie for the result (MLX's convention).
fn reduce_rule(
    op: ReduceOp,
    n: usize,
    x: &Array,
    y: &Array,
    g: &Array,
    s: Stream,
) -> Result<Option<Array>> {
    if !x.dtype().is_float() {
        return Ok(None);
    }
    match op {
        ReduceOp::Sum => spread(g, n, x, s).map(Some),
        ReduceOp::Max | ReduceOp::Min => {
            let hit = ops::binary(BinaryOp::Equal, x, &spread(y, n, x, s)?, s)?;
            let hit = ops::astype(&hit, g.dtype(), s);
            let count = ops::reduce(ReduceOp::Sum, &hit, Some(&trailing(n, x)), true, s)?;
            let share = ops::binary(BinaryOp::Divide, &spread(g, n, x, s)?, &count, s)?;
            ops::binary(BinaryOp::Multiply, &hit, &share, s).map(Some)
        }
        ReduceOp::ArgMax | ReduceOp::ArgMin => Ok(None),
        ReduceOp::Prod => prod_rule(n, x, g, s).map(Some),
    }
}

/// Softmax: `y * (g - sum(g * y))`; logsumexp: `g * softmax(x)`, over the trailing `n` axes.
fn row_norm_rule(
    op: RowNorm,
    n: usize,
    x: &Array,
    y: &Array,
    g: &Array,
    s: Stream,
) -> Result<Array> {
    let mul = |a: &Array, b: &Array| ops::binary(BinaryOp::Multiply, a, b, s);
    match op {
        RowNorm::Softmax => {
            let dot = ops::reduce(ReduceOp::Sum, &mul(g, y)?, Some(&trailing(n, x)), true, s)?;
            mul(y, &ops::binary(BinaryOp::Subtract, g, &dot, s)?)
        }
        // Its slope is the softmax, made stably (exp(x - y) loses the sum when y rounds).
        RowNorm::LogSumExp => mul(
            &spread(g, n, x, s)?,
            &ops::softmax(x, Some(&trailing(n, x)), s)?,
        ),
    }
}

/// `g @ b^T` and `a^T @ g`, summed back over broadcast batch axes.
fn matmul_rule(
    [a, b]: [&Array; 2],
    g: &Array,
    wanted: &[bool],
    s: Stream,
) -> Result<Vec<Option<Array>>> {
    let swapped = |m: &Array| {
        let r = m.ndim() as isize;
        let mut perm: Vec<isize> = (0..r).collect();
        perm.swap((r - 1) as usize, (r - 2) as usize);
        ops::transpose(m, Some(&perm), s)
    };
    // Both products read their transposed operand in place (the GPU's vec4 kernel walks its
    // columns), so no weight is copied.
    let ga = match wanted[0] && a.dtype().is_float() {
        true => Some(unbroadcast(
            &ops::matmul(g, &swapped(b)?, s)?,
            a.shape(),
            s,
        )?),
        false => None,
    };
    let gb = match wanted[1] && b.dtype().is_float() {
        true => Some(unbroadcast(
            &ops::matmul(&swapped(a)?, g, s)?,
            b.shape(),
            s,
        )?),
        false => None,
    };
    Ok(vec![ga, gb])
}

/// The norm over the last axis, `y = x̂ w + b` with `x̂ = (x - mean) r` (no mean for RMS) and
/// `r = 1 / sqrt(var + eps)`: `x̂` and `r` are recomputed from `x`, then
/// `gx = r (ĝ - mean(ĝ) - x̂ mean(ĝ x̂))` (RMS: without `mean(ĝ)`) for `ĝ = g w`,
/// `gw = sum(g x̂)` and `gb = sum(g)` over the rows.
fn norm_rule(
    kind: NormKind,
    inputs: &[Array],
    g: &Array,
    wanted: &[bool],
    s: Stream,
) -> Result<Vec<Option<Array>>> {
    let x = &inputs[0];
    let bin = |op, a: &Array, b: &Array| ops::binary(op, a, b, s);
    let last = [-1isize];
    let mean = |v: &Array| ops::mean(v, Some(&last), true, s);
    let centered = match kind.rms {
        true => x.clone(),
        false => bin(BinaryOp::Subtract, x, &mean(x)?)?,
    };
    let eps = ops::creation::scalar(f64::from(kind.eps), x.dtype())?;
    let var = mean(&bin(BinaryOp::Multiply, &centered, &centered)?)?;
    let r = ops::unary(UnaryOp::Rsqrt, &bin(BinaryOp::Add, &var, &eps)?, s)?;
    let normed = bin(BinaryOp::Multiply, &centered, &r)?;
    let weight = kind.weight.then(|| &inputs[1]);
    let gn = match weight {
        Some(w) => bin(BinaryOp::Multiply, g, w)?,
        None => g.clone(),
    };
    let mut inner = bin(
        BinaryOp::Multiply,
        &normed,
        &mean(&bin(BinaryOp::Multiply, &gn, &normed)?)?,
    )?;
    if !kind.rms {
        inner = bin(BinaryOp::Add, &inner, &mean(&gn)?)?;
    }
    let gx = bin(
        BinaryOp::Multiply,
        &r,
        &bin(BinaryOp::Subtract, &gn, &inner)?,
    )?;
    let mut grads = vec![Some(gx)];
    let row = |v: Array, k: usize| match wanted[k] {
        true => unbroadcast(&v, inputs[k].shape(), s).map(Some),
        false => Ok(None),
    };
    if kind.weight {
        grads.push(row(bin(BinaryOp::Multiply, g, &normed)?, 1)?);
    }
    if kind.bias {
        grads.push(row(g.clone(), grads.len())?);
    }
    Ok(grads)
}

/// A product's derivative for each element is the product of the others: the running
/// products before it and after it (exclusive scans over the flattened reduced axes), so a
/// zero among the others gives zero and a lone zero still gets the rest's product.
fn prod_rule(n: usize, x: &Array, g: &Array, s: Stream) -> Result<Array> {
    let kept = x.ndim() - n;
    let flat: Vec<isize> = x.shape()[..kept]
        .iter()
        .map(|&d| d as isize)
        .chain([-1])
        .collect();
    let rows = ops::reshape(x, &flat, s)?;
    let before = ops::scan(ScanOp::Prod, &rows, Some(-1), false, false, s)?;
    let after = ops::scan(ScanOp::Prod, &rows, Some(-1), true, false, s)?;
    let others = ops::binary(BinaryOp::Multiply, &before, &after, s)?;
    let dims: Vec<isize> = x.shape().iter().map(|&d| d as isize).collect();
    let others = ops::reshape(&others, &dims, s)?;
    ops::binary(BinaryOp::Multiply, &spread(g, n, x, s)?, &others, s)
}
