//! `tn.fast.scaledDotProductAttention` and `tn.fast.rope`, composed of plain ops: the scores'
//! matmul, the mask and softmax (one fused row kernel), and the values' matmul; rope's
//! rotation with its cosines and sines made on the host in float64.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::primitive::BinaryOp;
use crate::graph::shape::fmt_shape;
use crate::ops::shape::slice_axis;
use crate::ops::{
    binary, concatenate, expand_dims, full, matmul, reshape, softmax, stack, transpose, tril,
    where_,
};
use crate::stream::Stream;

use crate::ops::reduce::as_float;

/// What attention may not look at.
pub enum AttentionMask<'a> {
    None,
    /// Query i sees key j when j <= i + S - L (MLX aligns the mask to the bottom right).
    Causal,
    /// Added to the scaled scores, broadcast to [B, Hq, L, S].
    Additive(&'a Array),
    /// True where a query may attend, broadcast to [B, Hq, L, S].
    Keep(&'a Array),
}

const OP: &str = "fast.scaledDotProductAttention";

/// Checks q [B, Hq, L, D], k [B, Hkv, S, D] and v [B, Hkv, S, Dv], with Hq a multiple of Hkv.
fn check_shapes(q: &Array, k: &Array, v: &Array) -> Result<()> {
    let ranks = [q, k, v].iter().all(|a| a.ndim() == 4);
    let (qs, ks, vs) = (q.shape(), k.shape(), v.shape());
    let fits = ranks
        && qs[0] == ks[0]
        && ks[..3] == vs[..3]
        && qs[3] == ks[3]
        && ks[1] > 0
        && qs[1] % ks[1] == 0;
    if fits {
        return Ok(());
    }
    Err(Error::Shape(format!(
        "{OP}: q, k and v must be [B, Hq, L, D], [B, Hkv, S, D] and [B, Hkv, S, Dv] with Hq a \
         multiple of Hkv; got {}, {} and {}",
        fmt_shape(qs),
        fmt_shape(ks),
        fmt_shape(vs)
    )))
}

/// `softmax(q kᵀ * scale + mask) v`, with k and v's heads shared by groups of q's heads.
pub fn scaled_dot_product_attention(
    q: &Array,
    k: &Array,
    v: &Array,
    scale: f32,
    mask: AttentionMask,
    stream: impl Into<Stream>,
) -> Result<Array> {
    let stream: Stream = stream.into();
    check_shapes(q, k, v)?;
    let (b, hq, l, d) = (q.shape()[0], q.shape()[1], q.shape()[2], q.shape()[3]);
    let (hkv, s, dv) = (k.shape()[1], k.shape()[2], v.shape()[3]);
    let group = hq / hkv;
    let dims = |v: &[usize]| v.iter().map(|&x| x as isize).collect::<Vec<_>>();
    // [B, Hkv, G, L, D] against [B, Hkv, 1, S, D]: the batch axes broadcast in matmul.
    let q5 = reshape(&as_float(q, stream), &dims(&[b, hkv, group, l, d]), stream)?;
    let k5 = expand_dims(&as_float(k, stream), &[2], stream)?;
    let v5 = expand_dims(&as_float(v, stream), &[2], stream)?;
    // The scale multiplies the scores, not q: it then joins the mask and the scores' matmul
    // in one epilogue, and q (often a strided view of a fused projection) is read in place.
    let keys = transpose(&k5, Some(&[0, 1, 2, 4, 3]), stream)?;
    let scores = binary(
        BinaryOp::Multiply,
        &reshape(&matmul(&q5, &keys, stream)?, &dims(&[b, hq, l, s]), stream)?,
        &crate::ops::creation::scalar(scale as f64, q5.dtype())?,
        stream,
    )?;
    let masked = apply_mask(&scores, mask, (l, s), stream)?;
    let weights = reshape(
        &softmax(&masked, Some(&[-1]), stream)?,
        &dims(&[b, hkv, group, l, s]),
        stream,
    )?;
    reshape(
        &matmul(&weights, &v5, stream)?,
        &dims(&[b, hq, l, dv]),
        stream,
    )
}

fn apply_mask(
    scores: &Array,
    mask: AttentionMask,
    (l, s): (usize, usize),
    stream: Stream,
) -> Result<Array> {
    let minus_inf = || crate::ops::creation::scalar(f64::NEG_INFINITY, scores.dtype());
    match mask {
        AttentionMask::None => Ok(scores.clone()),
        AttentionMask::Additive(m) => {
            // In the scores' dtype, as MLX casts the mask to the output's.
            let m = crate::ops::astype(m, scores.dtype(), stream);
            binary(BinaryOp::Add, scores, &m, stream)
        }
        AttentionMask::Keep(m) if m.dtype() == DType::Bool => {
            where_(m, scores, &minus_inf()?, stream)
        }
        AttentionMask::Keep(m) => Err(Error::DType(format!(
            "{OP}: a boolean mask must be bool, got {}",
            m.dtype().name()
        ))),
        AttentionMask::Causal => {
            let ones = full(&[l, s], 1.0, DType::Bool, stream)?;
            let keep = tril(&ones, s as i64 - l as i64, stream)?;
            where_(&keep, scores, &minus_inf()?, stream)
        }
    }
}

/// The rotation of rope: how many features, which pairing, and the angle's terms.
pub struct Rope {
    pub dims: usize,
    pub traditional: bool,
    pub base: f32,
    pub scale: f32,
    pub offset: i64,
}

/// MLX's `fast.rope`: the first `dims` features of `x`'s last axis rotated by position
/// (`x`'s second-to-last axis, from `offset`), the rest passed through.
pub fn rope(x: &Array, rope: &Rope, stream: impl Into<Stream>) -> Result<Array> {
    let stream: Stream = stream.into();
    let n = x.ndim();
    let features = x.shape().last().copied().unwrap_or(0);
    if n < 3 || rope.dims % 2 == 1 || rope.dims == 0 || rope.dims > features {
        return Err(Error::Value(format!(
            "fast.rope: x needs at least 3 axes and dims an even number from 2 to its last \
             axis; got shape {} and dims {}",
            fmt_shape(x.shape()),
            rope.dims
        )));
    }
    let x = as_float(x, stream);
    let (cos, sin) = angles(rope, x.shape()[n - 2])?;
    let half = rope.dims / 2;
    let part =
        |start: usize, stop: usize, step: isize| slice_axis(&x, n - 1, (start, stop, step), stream);
    let (x1, x2) = if rope.traditional {
        (part(0, rope.dims, 2)?, part(1, rope.dims, 2)?)
    } else {
        (part(0, half, 1)?, part(half, rope.dims, 1)?)
    };
    let (mul, sub, add) = (BinaryOp::Multiply, BinaryOp::Subtract, BinaryOp::Add);
    let term = |a: &Array, t: &Array| binary(mul, a, t, stream);
    let out1 = binary(sub, &term(&x1, &cos)?, &term(&x2, &sin)?, stream)?;
    let out2 = binary(add, &term(&x1, &sin)?, &term(&x2, &cos)?, stream)?;
    let rotated = if rope.traditional {
        let mut shape: Vec<isize> = out1.shape().iter().map(|&v| v as isize).collect();
        shape[n - 1] = rope.dims as isize;
        reshape(&stack(&[out1, out2], -1, stream)?, &shape, stream)?
    } else {
        concatenate(&[out1, out2], -1, stream)?
    };
    if rope.dims == features {
        return Ok(rotated);
    }
    concatenate(&[rotated, part(rope.dims, features, 1)?], -1, stream)
}

/// The cosines and sines of rope's angles, [L, dims / 2], computed in float64.
fn angles(rope: &Rope, length: usize) -> Result<(Array, Array)> {
    let half = rope.dims / 2;
    let (mut cos, mut sin) = (
        Vec::with_capacity(length * half),
        Vec::with_capacity(length * half),
    );
    for p in 0..length {
        let position = (rope.offset as f64 + p as f64) * f64::from(rope.scale);
        for i in 0..half {
            let frequency = f64::from(rope.base).powf(-2.0 * i as f64 / rope.dims as f64);
            let theta = position * frequency;
            cos.push(theta.cos() as f32);
            sin.push(theta.sin() as f32);
        }
    }
    Ok((
        Array::from_f32(&cos, &[length, half])?,
        Array::from_f32(&sin, &[length, half])?,
    ))
}
