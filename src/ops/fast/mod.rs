//! MLX's `mx.fast` layers, as `tn.fast.*`: each is what the same composition of plain ops
//! gives, computed in fewer kernels. `layerNorm` and `rmsNorm` are one kernel a row;
//! attention and rope are compositions for now (see `attention.rs`).

mod attention;

pub use attention::{AttentionMask, Rope, rope, scaled_dot_product_attention};

use crate::array::Array;
use crate::error::{Error, Result};
use crate::graph::primitive::Primitive;
use crate::graph::shape::fmt_shape;
use crate::ops::reduce::as_float;
use crate::stream::Stream;

/// Checks an affine row (`weight` or `bias`): one axis, the row's length.
fn check_affine(op: &str, what: &str, row: &Array, x: &Array) -> Result<()> {
    let length = x.shape().last().copied().unwrap_or(0);
    if row.ndim() != 1 || row.shape()[0] != length {
        return Err(Error::Shape(format!(
            "{op}: the {what} must have shape [{length}] (x's last axis, of x's shape {}), got {}",
            fmt_shape(x.shape()),
            fmt_shape(row.shape())
        )));
    }
    Ok(())
}

fn norm(
    op: &str,
    rms: bool,
    x: &Array,
    weight: Option<&Array>,
    bias: Option<&Array>,
    eps: f32,
    stream: Stream,
) -> Result<Array> {
    if x.ndim() == 0 {
        return Err(Error::Shape(format!(
            "{op}: x must have at least one axis, got a scalar"
        )));
    }
    let mut inputs = vec![as_float(x, stream)];
    for (what, row) in [("weight", weight), ("bias", bias)] {
        if let Some(row) = row {
            check_affine(op, what, row, x)?;
            inputs.push(as_float(row, stream));
        }
    }
    let primitive = Primitive::Norm {
        rms,
        weight: weight.is_some(),
        bias: bias.is_some(),
        eps: eps.to_bits(),
    };
    // MLX's output type: x's, promoted with the weight's and the bias's.
    let dtype = inputs
        .iter()
        .map(Array::dtype)
        .reduce(crate::dtype::promote)
        .expect("x is an input");
    Ok(Array::from_primitive(
        primitive,
        inputs,
        x.shape().to_vec(),
        dtype,
        stream,
    ))
}

/// `(x - mean) / sqrt(var + eps) * weight + bias` over the last axis; float32.
pub fn layer_norm(
    x: &Array,
    weight: Option<&Array>,
    bias: Option<&Array>,
    eps: f32,
    stream: impl Into<Stream>,
) -> Result<Array> {
    norm("fast.layerNorm", false, x, weight, bias, eps, stream.into())
}

/// `x / sqrt(mean(x^2) + eps) * weight` over the last axis; float32.
pub fn rms_norm(
    x: &Array,
    weight: Option<&Array>,
    eps: f32,
    stream: impl Into<Stream>,
) -> Result<Array> {
    norm("fast.rmsNorm", true, x, weight, None, eps, stream.into())
}
