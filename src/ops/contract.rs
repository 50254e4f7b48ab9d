//! Contractions composed of transposes, reshapes, sums and batched matmuls: `tensordot` and
//! `einsum` (explicit `->` form; each operand's labels distinct). float32, as MLX's matmul.

use crate::array::Array;
use crate::error::{Error, Result};
use crate::graph::primitive::ReduceOp;
use crate::graph::shape::{fmt_shape, normalize_axes};
use crate::ops::shape::signed;
use crate::ops::{matmul, reduce, reshape, transpose};
use crate::stream::Stream;

/// `x` with its axes in `order`, skipping the transpose when it is the identity.
fn permuted(x: &Array, order: &[usize], stream: Stream) -> Result<Array> {
    if order.iter().enumerate().all(|(i, &a)| i == a) {
        return Ok(x.clone());
    }
    transpose(x, Some(&signed(order)), stream)
}

/// `a`'s axes `ka` contracted with `b`'s `kb`, pairwise: `a`'s other axes then `b`'s.
pub fn tensordot(
    a: &Array,
    b: &Array,
    ka: &[isize],
    kb: &[isize],
    stream: impl Into<Stream>,
) -> Result<Array> {
    let stream: Stream = stream.into();
    let (ka, kb) = (
        normalize_axes("tensordot", ka, a.ndim())?,
        normalize_axes("tensordot", kb, b.ndim())?,
    );
    let mismatch = ka.len() != kb.len()
        || ka
            .iter()
            .zip(&kb)
            .any(|(&i, &j)| a.shape()[i] != b.shape()[j]);
    if mismatch {
        return Err(Error::Shape(format!(
            "tensordot: axes {ka:?} of shape {} and {kb:?} of shape {} differ in count or length",
            fmt_shape(a.shape()),
            fmt_shape(b.shape())
        )));
    }
    let free_a: Vec<usize> = (0..a.ndim()).filter(|d| !ka.contains(d)).collect();
    let free_b: Vec<usize> = (0..b.ndim()).filter(|d| !kb.contains(d)).collect();
    let size = |x: &Array, axes: &[usize]| axes.iter().map(|&d| x.shape()[d]).product::<usize>();
    let (m, k, n) = (size(a, &free_a), size(a, &ka), size(b, &free_b));
    let left = permuted(a, &[free_a.clone(), ka.clone()].concat(), stream)?;
    let right = permuted(b, &[kb.clone(), free_b.clone()].concat(), stream)?;
    let product = matmul(
        &reshape(&left, &[m as isize, k as isize], stream)?,
        &reshape(&right, &[k as isize, n as isize], stream)?,
        stream,
    )?;
    let mut shape: Vec<usize> = free_a.iter().map(|&d| a.shape()[d]).collect();
    shape.extend(free_b.iter().map(|&d| b.shape()[d]));
    reshape(&product, &signed(&shape), stream)
}

/// An operand with one label per axis.
struct Labelled {
    array: Array,
    labels: Vec<char>,
}

/// Parses `"ij,jk->ik"`: the labels of each operand, and the output's.
fn parse(subscripts: &str, count: usize) -> Result<(Vec<Vec<char>>, Vec<char>)> {
    let bad = |why: &str| Error::Value(format!("einsum: {why} in \"{subscripts}\""));
    let (inputs, output) = subscripts
        .split_once("->")
        .ok_or_else(|| bad("the explicit form with \"->\" is needed"))?;
    let labels = |s: &str| -> Result<Vec<char>> {
        let l: Vec<char> = s.trim().chars().collect();
        if l.iter().any(|c| !c.is_ascii_alphabetic()) {
            return Err(bad("labels are letters"));
        }
        if (1..l.len()).any(|i| l[..i].contains(&l[i])) {
            return Err(bad("a label repeats within one operand"));
        }
        Ok(l)
    };
    let inputs: Vec<Vec<char>> = inputs.split(',').map(labels).collect::<Result<_>>()?;
    if inputs.len() != count {
        return Err(bad(&format!(
            "{} operands named for {count} given",
            inputs.len()
        )));
    }
    Ok((inputs, labels(output)?))
}

/// Sums away the labels of `x` that `keep` does not name.
fn sum_unused(x: Labelled, keep: &[char], stream: Stream) -> Result<Labelled> {
    let gone: Vec<isize> = (0..x.labels.len())
        .filter(|&i| !keep.contains(&x.labels[i]))
        .map(|i| i as isize)
        .collect();
    if gone.is_empty() {
        return Ok(x);
    }
    let labels = x
        .labels
        .iter()
        .copied()
        .filter(|c| keep.contains(c))
        .collect();
    let array = reduce(ReduceOp::Sum, &x.array, Some(&gone), false, stream)?;
    Ok(Labelled { array, labels })
}

/// `a` and `b` contracted over their shared labels that `keep` does not name; shared labels
/// that it names are batch axes.
fn contract(a: Labelled, b: Labelled, keep: &[char], stream: Stream) -> Result<Labelled> {
    let in_b = |c: &char| b.labels.contains(c);
    let batch: Vec<char> = a
        .labels
        .iter()
        .copied()
        .filter(|c| in_b(c) && keep.contains(c))
        .collect();
    let summed: Vec<char> = a
        .labels
        .iter()
        .copied()
        .filter(|c| in_b(c) && !keep.contains(c))
        .collect();
    let only_a: Vec<char> = a.labels.iter().copied().filter(|c| !in_b(c)).collect();
    let only_b: Vec<char> = b
        .labels
        .iter()
        .copied()
        .filter(|c| !a.labels.contains(c))
        .collect();
    let at = |x: &Labelled, c: char| x.labels.iter().position(|&l| l == c).expect("a label of x");
    let extent = |x: &Labelled, cs: &[char]| {
        cs.iter()
            .map(|&c| x.array.shape()[at(x, c)])
            .product::<usize>()
    };
    for &c in batch.iter().chain(&summed) {
        if a.array.shape()[at(&a, c)] != b.array.shape()[at(&b, c)] {
            return Err(Error::Shape(format!(
                "einsum: label {c} has length {} in one operand and {} in another",
                a.array.shape()[at(&a, c)],
                b.array.shape()[at(&b, c)]
            )));
        }
    }
    let order = |x: &Labelled, groups: [&[char]; 3]| -> Vec<usize> {
        groups
            .iter()
            .flat_map(|g| g.iter().map(|&c| at(x, c)))
            .collect()
    };
    let (nb, m, k, n) = (
        extent(&a, &batch),
        extent(&a, &only_a),
        extent(&a, &summed),
        extent(&b, &only_b),
    );
    let left = permuted(&a.array, &order(&a, [&batch, &only_a, &summed]), stream)?;
    let right = permuted(&b.array, &order(&b, [&batch, &summed, &only_b]), stream)?;
    let product = matmul(
        &reshape(&left, &signed(&[nb, m, k]), stream)?,
        &reshape(&right, &signed(&[nb, k, n]), stream)?,
        stream,
    )?;
    let labels: Vec<char> = [batch, only_a, only_b].concat();
    let shape: Vec<usize> = labels
        .iter()
        .map(|&c| {
            if a.labels.contains(&c) {
                a.array.shape()[at(&a, c)]
            } else {
                b.array.shape()[at(&b, c)]
            }
        })
        .collect();
    Ok(Labelled {
        array: reshape(&product, &signed(&shape), stream)?,
        labels,
    })
}

/// MLX's `einsum` in its explicit form, contracting the operands left to right.
pub fn einsum(subscripts: &str, operands: &[Array], stream: impl Into<Stream>) -> Result<Array> {
    let stream: Stream = stream.into();
    let (inputs, output) = parse(subscripts, operands.len())?;
    for (labels, x) in inputs.iter().zip(operands) {
        if labels.len() != x.ndim() {
            return Err(Error::Shape(format!(
                "einsum: \"{}\" names {} axes of an operand of shape {}",
                labels.iter().collect::<String>(),
                labels.len(),
                fmt_shape(x.shape())
            )));
        }
    }
    if let Some(c) = output
        .iter()
        .find(|c| !inputs.iter().any(|l| l.contains(c)))
    {
        return Err(Error::Value(format!(
            "einsum: output label {c} names no input axis"
        )));
    }
    // What must survive a step: the output's labels and every later operand's.
    let needed = |from: usize| -> Vec<char> {
        let mut keep = output.clone();
        for l in &inputs[from..] {
            keep.extend(l);
        }
        keep
    };
    let first = Labelled {
        array: operands[0].clone(),
        labels: inputs[0].clone(),
    };
    let mut acc = sum_unused(first, &needed(1), stream)?;
    for i in 1..operands.len() {
        let keep = needed(i + 1);
        let next = Labelled {
            array: operands[i].clone(),
            labels: inputs[i].clone(),
        };
        let mut keep_b = keep.clone();
        keep_b.extend(&acc.labels);
        let next = sum_unused(next, &keep_b, stream)?;
        acc = contract(acc, next, &keep, stream)?;
    }
    let order: Vec<usize> = output
        .iter()
        .map(|c| acc.labels.iter().position(|l| l == c).expect("kept"))
        .collect();
    permuted(&acc.array, &order, stream)
}
