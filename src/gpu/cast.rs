//! Conversions where either side is a packed dtype (`wgsl/cast.wgsl`): one thread per output
//! word, each element read through the input's strides, widened exactly (`packed.rs`),
//! converted with the CPU's rules (`dtype::convert::cast_element`) and packed. Also the row-major copy of a
//! packed view. Casts between word dtypes stay with the unary kernels.

use crate::dtype::DType;
use crate::error::Result;
use crate::gpu::device::buffers::create_output;
use crate::gpu::device::encoder::CommandBatch;
use crate::gpu::device::pipelines::KernelKey;
use crate::gpu::elementwise::{self, CONVERT, Operand, PRELUDE, convert, wgsl_type};
use crate::gpu::{GpuContext, packed};
use crate::graph::shape::numel;
use crate::memory::allocator::GpuBuffer;

const KERNEL: &str = include_str!("wgsl/cast.wgsl");

/// Whether converting `from` to `to` needs this module's kernel.
pub fn handles(from: DType, to: DType) -> bool {
    from.is_packed() || to.is_packed()
}

/// Records the conversion of `operand` (of dtype `from`, read over `shape`) to `to`.
pub fn dispatch(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    (from, to): (DType, DType),
    shape: &[usize],
    operand: Operand,
) -> Result<GpuBuffer> {
    let words = to.words(numel(shape));
    let out = create_output(gpu, words, &[operand.buffer])?;
    let key = key(from, to);
    let source = || source(from, to);
    let (operands, extra) = ([operand], [0; 4]);
    elementwise::record_over(
        gpu, batch, key, source, shape, &operands, None, extra, &out, words,
    )?;
    Ok(out)
}

/// The pipeline key of the conversion from `from` to `to`.
pub fn key(from: DType, to: DType) -> KernelKey {
    KernelKey::new("cast", "", &[from, to])
}

/// The kernel's full source for a conversion from `from` to `to`.
pub fn source(from: DType, to: DType) -> String {
    format!(
        "{}\n{PRELUDE}\n{CONVERT}\n{}\n{KERNEL}",
        header(from, to),
        packed::SOURCE
    )
}

/// `PER_WORD`, `load` and `element` for a conversion from `from` to `to`.
fn header(from: DType, to: DType) -> String {
    format!(
        "const PER_WORD: u32 = {}u;\nfn load(i: u32) -> u32 {{\n    return {};\n}}\n\
         fn element(bits: u32) -> u32 {{\n    let w = {};\n    return {};\n}}\n",
        to.per_word(),
        load(from),
        to_compute(from, to),
        narrowed(to),
    )
}

/// Element `i` of the input, as its compute dtype's bits.
fn load(dtype: DType) -> String {
    format!("bitcast<u32>({})", packed::element(dtype, "x", "i"))
}

/// The input's compute word converted to the output's compute dtype, as bits.
fn to_compute(from: DType, to: DType) -> String {
    let (a, b) = (from.compute(), to.compute());
    if a == b {
        return "bits".to_string();
    }
    let value = format!("bitcast<{}>(bits)", wgsl_type(a));
    format!("bitcast<u32>({})", convert(&value, a, b))
}

/// The output element's bits from its compute word `w`.
fn narrowed(to: DType) -> &'static str {
    match to {
        DType::Float16 => "f16_from_f32_bits(w)",
        DType::BFloat16 => "bf16_from_f32_bits(w)",
        DType::Int8 | DType::Uint8 => "w & 0xffu",
        _ => "w",
    }
}
