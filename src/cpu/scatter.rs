//! The scatter of `putAlongAxis`, `sliceUpdate` and a gather's gradient (`scatterAdd`): the
//! output starts as a row-major copy of `x`, then each update is written (or, for
//! `scatterAdd`, added in float32) where its coordinates (and, along an axis, its index)
//! place it. Every dtype is one word an element, so only an addition looks at a value.

use crate::cpu::gather::position;
use crate::cpu::{HostInput, Spec};
use crate::dtype::DType;
use crate::error::Result;
use crate::graph::primitive::Scatter;
use crate::graph::shape::{Layout, collapse_dims, contiguous_strides, for_each_row, slice_view};

/// `x` (`inputs[0]`) with the updates that follow it written as `scatter` places them.
pub fn eval(scatter: &Scatter, inputs: &[Spec], host: &[HostInput]) -> Result<Vec<u32>> {
    let mut out = crate::cpu::contiguous(&inputs[0], &host[0])?;
    let x_shape = inputs[0].shape();
    let out_strides = contiguous_strides(x_shape);
    match scatter {
        Scatter::Axis(axis) | Scatter::AxisAdd(axis) => {
            let mut placement = out_strides.clone();
            placement[*axis] = 0;
            let indices = (inputs[1].dtype(), &host[1]);
            let step = (out_strides[*axis], x_shape[*axis]);
            let values = (inputs[2].shape(), &host[2]);
            let land = match scatter {
                Scatter::AxisAdd(_) => add_f32,
                _ => replace,
            };
            write_along_axis(&mut out, values, indices, (&placement, step), land);
        }
        Scatter::Slice { start, step } => {
            let region = slice_view(&Layout::contiguous(x_shape), start, step);
            write_slice(&mut out, (inputs[1].shape(), &host[1]), &region);
        }
    }
    Ok(out)
}

fn replace(_: u32, value: u32) -> u32 {
    value
}

fn add_f32(word: u32, value: u32) -> u32 {
    (f32::from_bits(word) + f32::from_bits(value)).to_bits()
}

/// Each value of `values` (of the updates' shape) landed by `land(old, value)` at its own
/// offset in `placement` plus its index's position times the axis's `(stride, extent)`.
fn write_along_axis(
    out: &mut [u32],
    values: (&[usize], &HostInput),
    indices: (DType, &HostInput),
    (placement, (stride, extent)): (&[isize], (isize, usize)),
    land: fn(u32, u32) -> u32,
) {
    let (shape, v) = values;
    let (dtype, i) = indices;
    let (dims, [sv, si, so]) =
        collapse_dims(shape, [&v.layout.strides, &i.layout.strides, placement]);
    let inner = dims[dims.len() - 1] as isize;
    let [iv, ii, io] = [&sv, &si, &so].map(|s| s[s.len() - 1]);
    for_each_row(&dims, [&sv[..], &si[..], &so[..]], |_, [ov, oi, oo]| {
        let (pv, pi) = (v.layout.offset as isize + ov, i.layout.offset as isize + oi);
        for k in 0..inner {
            let at = position(i.words[(pi + k * ii) as usize], dtype, extent);
            let o = (oo + k * io + at * stride) as usize;
            out[o] = land(out[o], v.words[(pv + k * iv) as usize]);
        }
    });
}

/// The update (of the slice's shape) written through the slice's `region` of the output.
fn write_slice(out: &mut [u32], update: (&[usize], &HostInput), region: &Layout) {
    let (shape, u) = update;
    let (dims, [su, so]) = collapse_dims(shape, [&u.layout.strides, &region.strides]);
    let inner = dims[dims.len() - 1] as isize;
    let (iu, io) = (su[su.len() - 1], so[so.len() - 1]);
    for_each_row(&dims, [&su[..], &so[..]], |_, [ou, oo]| {
        let (pu, po) = (u.layout.offset as isize + ou, region.offset as isize + oo);
        for k in 0..inner {
            out[(po + k * io) as usize] = u.words[(pu + k * iu) as usize];
        }
    });
}
