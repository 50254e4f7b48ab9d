//! `vmap(fun)` (MLX's `mx.vmap`) by its general fallback: the function runs once per index
//! of the mapped axis, on views of each mapped input at that index, and each output's results
//! are stacked along a new axis. Every op is covered, with the op's own semantics, since each
//! call is the function itself; the cost is one call (and its kernels) per index, where MLX
//! writes a batching rule per primitive and runs each op once. An axis of extent 0 calls the
//! function once, on zeros of one element's shape, to learn the outputs' shapes.

use crate::array::Array;
use crate::error::{Error, Result};
use crate::graph::shape::normalize_axis;
use crate::ops;

/// The outputs of `fun` mapped over axis `in_axes[i]` of each input (`None`: the input is
/// passed whole to every call), each stacked along its axis 0.
pub fn vmap(
    fun: impl Fn(&[Array]) -> Result<Vec<Array>>,
    inputs: &[Array],
    in_axes: &[Option<isize>],
) -> Result<Vec<Array>> {
    if in_axes.len() != inputs.len() {
        return Err(Error::Value(format!(
            "vmap: {} inputs but {} in_axes",
            inputs.len(),
            in_axes.len()
        )));
    }
    let axes = in_axes
        .iter()
        .zip(inputs)
        .map(|(axis, x)| {
            axis.map(|a| normalize_axis("vmap", a, x.ndim()))
                .transpose()
        })
        .collect::<Result<Vec<_>>>()?;
    let n = mapped_size(&axes, inputs)?;
    if n == 0 {
        return empty_outputs(&fun, inputs, &axes);
    }
    let mut per_output: Vec<Vec<Array>> = Vec::new();
    for i in 0..n {
        let args = inputs
            .iter()
            .zip(&axes)
            .map(|(x, axis)| match axis {
                Some(axis) => at_index(x, *axis, i),
                None => Ok(x.clone()),
            })
            .collect::<Result<Vec<_>>>()?;
        let outputs = fun(&args)?;
        if i == 0 {
            per_output = vec![Vec::with_capacity(n); outputs.len()];
        } else if outputs.len() != per_output.len() {
            return Err(Error::Value(format!(
                "vmap: the function returned {} outputs at index {i} but {} at index 0",
                outputs.len(),
                per_output.len()
            )));
        }
        for (list, y) in per_output.iter_mut().zip(outputs) {
            list.push(y);
        }
    }
    per_output
        .iter()
        .map(|ys| ops::stack(ys, 0, ys[0].stream()))
        .collect()
}

/// `x` with its axis 0 (the mapped one) moved to `to` (MLX's `out_axes`; negative counts from
/// the end of the result).
pub fn move_mapped_axis(x: &Array, to: isize) -> Result<Array> {
    let to = normalize_axis("vmap: out_axes", to, x.ndim())?;
    if to == 0 {
        return Ok(x.clone());
    }
    let mut axes: Vec<isize> = (1..x.ndim() as isize).collect();
    axes.insert(to, 0);
    ops::transpose(x, Some(&axes), x.stream())
}

/// The extent of the mapped axes, which must agree.
fn mapped_size(axes: &[Option<usize>], inputs: &[Array]) -> Result<usize> {
    let mut sizes = axes
        .iter()
        .zip(inputs)
        .filter_map(|(axis, x)| axis.map(|a| x.shape()[a]));
    let n = sizes.next().ok_or_else(|| {
        Error::Value("vmap: no input is mapped; give at least one an axis in in_axes".into())
    })?;
    match sizes.find(|&m| m != n) {
        Some(m) => Err(Error::Value(format!(
            "vmap: the mapped axes have different sizes, {n} and {m}"
        ))),
        None => Ok(n),
    }
}

/// Index `i` of `x`'s axis `axis`, as a view without that axis.
fn at_index(x: &Array, axis: usize, i: usize) -> Result<Array> {
    let start: Vec<isize> = (0..x.ndim())
        .map(|a| if a == axis { i as isize } else { 0 })
        .collect();
    let stop: Vec<isize> = x
        .shape()
        .iter()
        .enumerate()
        .map(|(a, &d)| {
            if a == axis {
                i as isize + 1
            } else {
                d as isize
            }
        })
        .collect();
    let one = ops::slice(x, &start, &stop, None, x.stream())?;
    ops::squeeze(&one, Some(&[axis as isize]), x.stream())
}

/// The outputs of a map over zero indices: empty arrays of the shapes one call would give.
fn empty_outputs(
    fun: &impl Fn(&[Array]) -> Result<Vec<Array>>,
    inputs: &[Array],
    axes: &[Option<usize>],
) -> Result<Vec<Array>> {
    let args = inputs
        .iter()
        .zip(axes)
        .map(|(x, axis)| match axis {
            Some(axis) => {
                let mut shape = x.shape().to_vec();
                shape.remove(*axis);
                ops::zeros(&shape, x.dtype(), x.stream())
            }
            None => Ok(x.clone()),
        })
        .collect::<Result<Vec<_>>>()?;
    fun(&args)?
        .iter()
        .map(|y| {
            let shape: Vec<usize> = std::iter::once(0)
                .chain(y.shape().iter().copied())
                .collect();
            ops::zeros(&shape, y.dtype(), y.stream())
        })
        .collect()
}
