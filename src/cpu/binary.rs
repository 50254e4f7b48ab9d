//! Elementwise binary ops over broadcast, strided operands.

use crate::cpu::cast::cast;
use crate::dtype::DType;
use crate::primitive::BinaryOp;
use crate::shape::{collapse_dims, for_each_row, numel};

/// One input: its words, dtype and strides over the output shape.
pub struct Operand<'a> {
    pub words: &'a [u32],
    pub dtype: DType,
    pub strides: &'a [isize],
}

/// `op(lhs, rhs)` over `shape`, computed in `out_dtype` (operands are cast to it first).
pub fn binary(
    op: BinaryOp,
    out_dtype: DType,
    shape: &[usize],
    lhs: Operand,
    rhs: Operand,
) -> Vec<u32> {
    let a = cast(lhs.words, lhs.dtype, out_dtype);
    let b = cast(rhs.words, rhs.dtype, out_dtype);
    let (a, b) = (&*a, &*b);
    let (s, st) = (shape, [lhs.strides, rhs.strides]);
    match (op, out_dtype) {
        (BinaryOp::Add, DType::Float32) => map2::<f32>(s, st, a, b, |x, y| x + y),
        (BinaryOp::Add, DType::Int32) => map2::<i32>(s, st, a, b, i32::wrapping_add),
        (BinaryOp::Add, DType::Uint32) => map2::<u32>(s, st, a, b, u32::wrapping_add),
        (BinaryOp::Add, DType::Bool) => map2::<u32>(s, st, a, b, |x, y| u32::from(x | y != 0)),
    }
}

/// Applies `f` elementwise, reading both operands as `T`.
fn map2<T: bytemuck::Pod>(
    shape: &[usize],
    strides: [&[isize]; 2],
    a: &[u32],
    b: &[u32],
    f: impl Fn(T, T) -> T,
) -> Vec<u32> {
    let a: &[T] = bytemuck::cast_slice(a);
    let b: &[T] = bytemuck::cast_slice(b);
    let mut out: Vec<T> = Vec::with_capacity(numel(shape));
    let (dims, [sa, sb]) = collapse_dims(shape, strides);
    let inner = *dims.last().unwrap_or(&1);
    let (ia, ib) = (sa[sa.len() - 1], sb[sb.len() - 1]);
    for_each_row(&dims, [&sa[..], &sb[..]], |_, [oa, ob]| {
        let (oa, ob) = (oa as usize, ob as usize);
        if ia == 1 && ib == 1 {
            // The common case: both rows contiguous, a loop the compiler vectorises.
            let rows = a[oa..oa + inner].iter().zip(&b[ob..ob + inner]);
            out.extend(rows.map(|(&x, &y)| f(x, y)));
        } else {
            out.extend((0..inner as isize).map(|i| {
                f(
                    a[(oa as isize + i * ia) as usize],
                    b[(ob as isize + i * ib) as usize],
                )
            }));
        }
    });
    bytemuck::cast_slice(&out).to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::{broadcast_strides, contiguous_strides};

    fn words(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn adds_broadcast_row_to_matrix() {
        let shape = [2, 3];
        let m = words(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let r = words(&[10.0, 20.0, 30.0]);
        let sm = contiguous_strides(&shape);
        let sr = broadcast_strides(&[3], &[1], &shape);
        let out = binary(
            BinaryOp::Add,
            DType::Float32,
            &shape,
            Operand {
                words: &m,
                dtype: DType::Float32,
                strides: &sm,
            },
            Operand {
                words: &r,
                dtype: DType::Float32,
                strides: &sr,
            },
        );
        assert_eq!(out, words(&[11.0, 22.0, 33.0, 14.0, 25.0, 36.0]));
    }

    /// Adds two one-element operands of the given dtypes.
    fn add_one(out: DType, a: (u32, DType), b: (u32, DType)) -> Vec<u32> {
        let (wa, wb, s) = ([a.0], [b.0], [1isize]);
        let lhs = Operand {
            words: &wa,
            dtype: a.1,
            strides: &s,
        };
        let rhs = Operand {
            words: &wb,
            dtype: b.1,
            strides: &s,
        };
        binary(BinaryOp::Add, out, &[1], lhs, rhs)
    }

    #[test]
    fn int_add_wraps() {
        let out = add_one(
            DType::Int32,
            (i32::MAX as u32, DType::Int32),
            (1, DType::Int32),
        );
        assert_eq!(out, [i32::MIN as u32]);
    }

    #[test]
    fn mixed_dtypes_compute_in_the_promoted_type() {
        let half = 0.5f32.to_bits();
        let out = add_one(
            DType::Float32,
            ((-2i32) as u32, DType::Int32),
            (half, DType::Float32),
        );
        assert_eq!(out, words(&[-1.5]));
    }
}
