//! Convolution, channels last as in MLX: input `[N, *spatial, C]` (one or two spatial axes),
//! weight `[O, *kernel, C / groups]`. An im2col composition: the input's patches (one kernel
//! that reads each tap or writes the padding's zero) as `[groups, N * out, taps * C / groups]`
//! and one batched matmul with the weight; the patches are an array like any other, so their
//! memory counts.
//! A transposed convolution is the convolution of the input spread out by the stride.

use crate::array::Array;
use crate::error::{Error, Result};
use crate::graph::primitive::{Patches, Primitive};
use crate::graph::shape::fmt_shape;
use crate::ops::reduce::as_float;
use crate::ops::{
    PadMode, concatenate, matmul, pad, reshape, slice, slice_update, transpose, zeros,
};
use crate::stream::Stream;

/// A convolution's parameters, one per spatial axis.
pub struct ConvParams {
    pub stride: Vec<usize>,
    pub padding: Vec<usize>,
    pub dilation: Vec<usize>,
    pub groups: usize,
}

fn fail(op: &str, what: String) -> Error {
    Error::Value(format!("{op}: {what}"))
}

/// Checks the shapes and returns each spatial axis's output length.
fn output_sizes(op: &str, x: &Array, w: &Array, p: &ConvParams) -> Result<Vec<usize>> {
    let spatial = x.ndim().saturating_sub(2);
    if !(3..=4).contains(&x.ndim()) || w.ndim() != x.ndim() {
        return Err(Error::Shape(format!(
            "{op}: input [N, *spatial, C] and weight [O, *kernel, C/groups] of one rank with one \
             or two spatial axes, got {} and {}",
            fmt_shape(x.shape()),
            fmt_shape(w.shape())
        )));
    }
    let (c, o, cg) = (
        x.shape()[x.ndim() - 1],
        w.shape()[0],
        w.shape()[w.ndim() - 1],
    );
    let g = p.groups;
    if g == 0 || c % g != 0 || o % g != 0 || cg * g != c {
        return Err(Error::Shape(format!(
            "{op}: {c} input channels and {o} filters in {g} groups need weights of {} channels, \
             got weight shape {}",
            c.checked_div(g).unwrap_or(0),
            fmt_shape(w.shape())
        )));
    }
    let lists = [&p.stride, &p.padding, &p.dilation];
    if lists.iter().any(|l| l.len() != spatial) || p.stride.contains(&0) || p.dilation.contains(&0)
    {
        return Err(fail(
            op,
            format!(
                "stride, padding and dilation need {spatial} values each, strides and dilations from 1"
            ),
        ));
    }
    (0..spatial)
        .map(|i| {
            let (size, k) = (x.shape()[1 + i] + 2 * p.padding[i], w.shape()[1 + i]);
            let span = p.dilation[i] * (k.max(1) - 1) + 1;
            if k == 0 || span > size {
                return Err(fail(op, format!(
                    "the kernel spans {span} on spatial axis {i}, more than the padded input's {size}"
                )));
            }
            Ok((size - span) / p.stride[i] + 1)
        })
        .collect()
}

/// The patches of `x` (`[N, *spatial, C]`, one or two spatial axes) for `kernel`: one node
/// (`Primitive::Patches`) of shape `[N, *out, taps, C]`; a 1-D input is a 2-D one of height 1.
fn patches(x: &Array, kernel: &[usize], p: &ConvParams, stream: Stream) -> Result<Array> {
    let pair = |v: &[usize], one: usize| match v {
        [a] => [one, *a],
        [a, b] => [*a, *b],
        _ => unreachable!("conv checks one or two spatial axes"),
    };
    let spec = Patches {
        kernel: pair(kernel, 1),
        stride: pair(&p.stride, 1),
        padding: pair(&p.padding, 0),
        dilation: pair(&p.dilation, 1),
    };
    let s = x.shape();
    let image = if kernel.len() == 1 {
        reshape(x, &[s[0] as isize, 1, s[1] as isize, s[2] as isize], stream)?
    } else {
        x.clone()
    };
    let (h, w) = (image.shape()[1], image.shape()[2]);
    let out = [0, 1].map(|a| {
        let extent = [h, w][a] + 2 * spec.padding[a];
        (extent - spec.dilation[a] * (spec.kernel[a] - 1) - 1) / spec.stride[a] + 1
    });
    let shape = vec![
        s[0],
        out[0],
        out[1],
        spec.kernel[0] * spec.kernel[1],
        s[s.len() - 1],
    ];
    let dtype = image.dtype();
    Ok(Array::from_primitive(
        Primitive::Patches(spec),
        vec![image],
        shape,
        dtype,
        stream,
    ))
}

/// On the GPU stream, `x` and `w` with zero channels added so that a patch row (taps times
/// channels) is whole `vec4`s, which the matmul's `vec4` kernel needs (an RGB image's 3x3
/// patches are 27 long; with a fourth, zero channel, 36). The zeros add exact zeros. With
/// groups, or on the CPU, they stay as they are. Returns them and their channel count.
fn lane_aligned(
    x: Array,
    w: Array,
    taps: usize,
    groups: usize,
    stream: Stream,
) -> Result<(Array, Array, usize)> {
    let c = x.shape()[x.ndim() - 1];
    if stream.device != crate::stream::Device::Gpu || groups != 1 || (taps * c).is_multiple_of(4) {
        return Ok((x, w, c));
    }
    let wide = c.next_multiple_of(4);
    let widen = |a: &Array| {
        let mut widths = vec![(0, 0); a.ndim()];
        widths[a.ndim() - 1] = (0, wide - c);
        pad(a, &widths, PadMode::Constant(0.0), stream)
    };
    Ok((widen(&x)?, widen(&w)?, wide))
}

/// A convolution of one or two spatial axes.
pub fn conv(
    op: &str,
    x: &Array,
    w: &Array,
    p: &ConvParams,
    stream: impl Into<Stream>,
) -> Result<Array> {
    let stream: Stream = stream.into();
    let out = output_sizes(op, x, w, p)?;
    let (n, o, g) = (x.shape()[0], w.shape()[0], p.groups);
    let kernel = &w.shape()[1..w.ndim() - 1];
    let taps = kernel.iter().product::<usize>();
    let rows = n * out.iter().product::<usize>();
    let (x, w, c) = lane_aligned(as_float(x, stream), as_float(w, stream), taps, g, stream)?;
    let views = patches(&x, kernel, p, stream)?;
    let dims = |v: &[usize]| v.iter().map(|&d| d as isize).collect::<Vec<_>>();
    // [rows, taps, g, c/g] -> [g, rows, taps * c/g], against weights [g, taps * c/g, o/g].
    let columns = reshape(&views, &dims(&[rows, taps, g, c / g]), stream)?;
    let columns = reshape(
        &transpose(&columns, Some(&[2, 0, 1, 3]), stream)?,
        &dims(&[g, rows, taps * c / g]),
        stream,
    )?;
    let weights = reshape(&w, &dims(&[g, o / g, taps * c / g]), stream)?;
    let weights = transpose(&weights, Some(&[0, 2, 1]), stream)?;
    let product = matmul(&columns, &weights, stream)?;
    let mut shape = vec![n];
    shape.extend(&out);
    shape.push(o);
    // [g, rows, o/g] -> [rows, g, o/g]; one group needs no transpose, and the product is then
    // read through a reshape alone, which lets a bias and activation become its epilogue.
    let product = if g == 1 {
        product
    } else {
        transpose(&product, Some(&[1, 0, 2]), stream)?
    };
    reshape(&product, &dims(&shape), stream)
}

/// `x` with `lo` zeros before and `hi` after on `axis`; a negative amount crops instead.
fn border(x: &Array, axis: usize, lo: isize, hi: isize, stream: Stream) -> Result<Array> {
    let n = x.ndim();
    let mut start = vec![0isize; n];
    let mut stop: Vec<isize> = x.shape().iter().map(|&d| d as isize).collect();
    start[axis] = (-lo).max(0);
    stop[axis] -= (-hi).max(0);
    let mut out = slice(x, &start, &stop, None, stream)?;
    for (amount, before) in [(lo, true), (hi, false)] {
        if amount > 0 {
            let mut shape = out.shape().to_vec();
            shape[axis] = amount as usize;
            let edge = zeros(&shape, out.dtype(), stream)?;
            let parts = if before { [edge, out] } else { [out, edge] };
            out = concatenate(&parts, axis as isize, stream)?;
        }
    }
    Ok(out)
}

/// A transposed convolution (MLX's `conv_transpose`, weight `[O, *kernel, C / groups]` as for
/// `conv`): the convolution with the spatially flipped kernel, stride 1 and the same dilation
/// and groups, of the input spread out by the stride (zeros between its elements) and bordered
/// by `dilation * (k - 1) - padding` zeros, plus `output_padding` more after.
pub fn conv_transpose(
    op: &str,
    x: &Array,
    w: &Array,
    p: &ConvParams,
    output_padding: &[usize],
    stream: impl Into<Stream>,
) -> Result<Array> {
    let stream: Stream = stream.into();
    let spatial = x.ndim().saturating_sub(2);
    if x.ndim() < 3 || w.ndim() != x.ndim() {
        return Err(Error::Shape(format!(
            "{op}: input [N, *spatial, C] and weight [O, *kernel, C/groups] of one rank, got {} and {}",
            fmt_shape(x.shape()),
            fmt_shape(w.shape())
        )));
    }
    let lists = [&p.stride, &p.padding, &p.dilation];
    let counts = lists.iter().all(|l| l.len() == spatial) && output_padding.len() == spatial;
    if !counts || p.stride.contains(&0) || p.dilation.contains(&0) {
        return Err(fail(
            op,
            format!(
                "stride, padding, dilation and outputPadding need {spatial} values each, \
                 strides and dilations from 1"
            ),
        ));
    }
    if x.shape()[1..=spatial].contains(&0) {
        return Err(Error::Shape(format!(
            "{op}: the input of shape {} has an empty spatial axis",
            fmt_shape(x.shape())
        )));
    }
    let mut spread = as_float(x, stream);
    if p.stride.iter().any(|&s| s > 1) {
        let mut shape = x.shape().to_vec();
        let mut steps = vec![1isize; x.ndim()];
        for i in 0..spatial {
            shape[1 + i] = (x.shape()[1 + i] - 1) * p.stride[i] + 1;
            steps[1 + i] = p.stride[i] as isize;
        }
        let stop: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
        let start = vec![0isize; x.ndim()];
        let room = zeros(&shape, spread.dtype(), stream)?;
        spread = slice_update(&room, &spread, &start, &stop, Some(&steps), stream)?;
    }
    let (mut start, mut stop, mut flip) = (vec![0isize; w.ndim()], vec![], vec![1isize; w.ndim()]);
    stop.extend(w.shape().iter().map(|&d| d as isize));
    for i in 0..spatial {
        let (k, d, s) = (w.shape()[1 + i], p.dilation[i], p.stride[i]);
        if output_padding[i] >= s.max(d) {
            return Err(fail(
                op,
                format!(
                    "outputPadding {} on spatial axis {i} must be smaller than the stride or the \
                     dilation",
                    output_padding[i]
                ),
            ));
        }
        let lo = (d * k.max(1) - d) as isize - p.padding[i] as isize;
        spread = border(&spread, 1 + i, lo, lo + output_padding[i] as isize, stream)?;
        (start[1 + i], stop[1 + i], flip[1 + i]) = (-1, -(k as isize) - 1, -1);
    }
    let flipped = slice(w, &start, &stop, Some(&flip), stream)?;
    let plain = ConvParams {
        stride: vec![1; spatial],
        padding: vec![0; spatial],
        dilation: p.dilation.clone(),
        groups: p.groups,
    };
    conv(op, &spread, &flipped, &plain, stream)
}
