//! Kernel operands converted to a compute dtype (the conversion rules are `dtype::convert`'s).

use std::borrow::Cow;

use crate::cpu::elementwise::Strided;
use crate::dtype::DType;
use crate::dtype::convert::cast;

/// One input of an elementwise kernel: its storage words, dtype, and strides over the output
/// shape.
pub struct Operand<'a> {
    pub words: &'a [u32],
    pub dtype: DType,
    pub strides: &'a [isize],
    pub offset: usize,
}

/// An operand converted to a compute dtype (borrowed when no conversion was needed).
pub struct Converted<'a> {
    words: Cow<'a, [u32]>,
    strides: Vec<isize>,
    offset: usize,
}

impl Converted<'_> {
    /// The words read as `T`, which must be the compute dtype's Rust type.
    pub fn view<T: bytemuck::Pod>(&self) -> Strided<'_, T> {
        Strided {
            data: bytemuck::cast_slice(&self.words),
            strides: self.strides.clone(),
            offset: self.offset,
        }
    }
}

/// `operand` converted to `to`. The whole storage is converted, so views keep their strides.
pub fn cast_strided<'a>(operand: &Operand<'a>, to: DType) -> Converted<'a> {
    Converted {
        words: cast(operand.words, operand.dtype, to),
        strides: operand.strides.to_vec(),
        offset: operand.offset,
    }
}
