//! Kernel operands converted to a compute dtype (the conversion rules are `dtype::convert`'s).

use std::borrow::Cow;

use crate::cpu::elementwise::{Strided, map1};
use crate::dtype::convert::{cast, cast_element};
use crate::dtype::{DType, packed};

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

/// `operand` converted to `to`, a word dtype. The whole storage is converted, so views keep
/// their strides (a packed operand's elements each become a word).
pub fn cast_strided<'a>(operand: &Operand<'a>, to: DType) -> Converted<'a> {
    let (words, from) = (operand.words, operand.dtype);
    let words = if from.is_packed() {
        let wide = packed::unpack(words, from, words.len() * from.per_word());
        Cow::Owned(cast(&wide, wide.len(), from.compute(), to).into_owned())
    } else {
        cast(words, words.len(), from, to)
    };
    Converted {
        words,
        strides: operand.strides.to_vec(),
        offset: operand.offset,
    }
}

/// `x` over `shape` as storage of `to`: each element read through its strides, converted once
/// (`convert::cast_element`'s rules) and packed where `to` is.
pub fn cast_elements(shape: &[usize], x: &Operand, to: DType) -> Vec<u32> {
    if !x.dtype.is_packed() && !to.is_packed() {
        return map1(shape, &cast_strided(x, to).view::<u32>(), |w| w);
    }
    // The common rounding, a dense float32 run to a half float (a fused chunk, an
    // activation), in one loop over the bits.
    let n = crate::graph::shape::numel(shape);
    let dense = x.strides == crate::graph::shape::contiguous_strides(shape).as_slice();
    if x.dtype == DType::Float32 && to == DType::Float16 && dense {
        let run = &x.words[x.offset..x.offset + n];
        return packed::pack(run.iter().map(|&w| packed::f16_from_f32_bits(w)), to);
    }
    let wide = cast_strided(x, x.dtype.compute());
    let bits = map1(shape, &wide.view::<u32>(), |w| cast_element(w, x.dtype, to));
    packed::pack(bits, to)
}
