//! Dispatch of the strided elementwise kernels (unary, binary, where; and the gather, scatter,
//! copy and conversion kernels that share their prelude): operands read through their strides,
//! all described by one `Dims` uniform (`wgsl/elementwise.wgsl`), with the index arithmetic
//! unrolled for the dispatch's collapsed axes ([`for_axes`]).

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::gpu::GpuContext;
use crate::gpu::device::grid::grid_for;
use crate::gpu::device::pipelines::KernelKey;
use crate::gpu::device::{buffers::create_output, encoder::CommandBatch};
use crate::graph::shape::{collapse_dims, numel};
use crate::memory::allocator::GpuBuffer;

pub const PRELUDE: &str = include_str!("wgsl/elementwise.wgsl");
pub const CONVERT: &str = include_str!("wgsl/convert.wgsl");
pub const MATH: &str = include_str!("wgsl/math.wgsl");
/// What the elementwise ops' functions need beyond `MATH`: the functions built on exp and log
/// and the inverse ones. Only elementwise kernels carry them.
pub const MORE_MATH: &str = concat!(
    include_str!("wgsl/math_derived.wgsl"),
    include_str!("wgsl/math_inverse.wgsl")
);

/// The functions of [`MORE_MATH`], by the names op expressions call them.
const MORE_MATH_CALLS: [&str; 10] = [
    "log2_acc",
    "log10_acc",
    "sinh_acc",
    "cosh_acc",
    "logaddexp_acc",
    "floor_div_",
    "remainder_",
    "atan",
    "asin",
    "acos",
];

/// [`MORE_MATH`] for a kernel whose op functions are `code`, or nothing when they call none of
/// it, so that an `add`'s module (compiled at first use, start-up included) does not carry
/// the inverse trigonometry. A first measurement with it in every kernel looked slower on
/// SwiftShader; alternated runs showed only noise (of up to 30% here), so this is for the
/// modules' size, not a measured speed.
pub fn more_math_for(code: &str) -> &'static str {
    let needed =
        MORE_MATH_CALLS.iter().any(|name| code.contains(name)) || code.contains("erfinv_acc");
    if needed { MORE_MATH } else { "" }
}

/// The source of a strided kernel: the op's header (its aliases and function), the shared
/// prelude and helpers, then the kernel.
pub fn strided_source(header: &str, kernel: &str) -> String {
    let more = more_math_for(header);
    format!("{header}\n{PRELUDE}\n{CONVERT}\n{MATH}\n{more}\n{kernel}")
}

/// The most axes the kernels walk; broadcasts collapse to far fewer in practice.
const MAX_RANK: usize = 8;
/// The most operands a kernel reads.
const MAX_OPERANDS: usize = 3;

/// One operand: its buffer and its offset and strides over the output shape.
pub struct Operand<'a> {
    pub buffer: &'a GpuBuffer,
    pub strides: Vec<isize>,
    pub offset: usize,
}

/// Output elements per thread of the kernels [`dispatch`] runs (`RUN` in
/// `wgsl/elementwise.wgsl`). A 1024x1024 multiply of a transposed or sliced view on
/// SwiftShader (kernel time, with the unrolled index arithmetic): 80-94 ms at 1, 41-58 at 4,
/// 29-43 at 8, against 7-12 for the dense `vec4` kernel.
const RUN: usize = 8;

/// Records one elementwise dispatch over `shape` of a unary, binary or `where` kernel (whose
/// threads each take a run of [`RUN`] elements) and returns the output buffer. `key` names
/// the pipeline; `source` builds its WGSL on first use.
pub fn dispatch(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    key: KernelKey,
    source: impl FnOnce() -> String,
    shape: &[usize],
    operands: &[Operand],
) -> Result<GpuBuffer> {
    let inputs: Vec<&GpuBuffer> = operands.iter().map(|o| o.buffer).collect();
    let out = create_output(gpu, numel(shape), &inputs)?;
    // The kernels `dispatch` runs (unary, binary, where) walk runs of RUN elements a thread.
    let threads = numel(shape).div_ceil(RUN);
    record_over(
        gpu, batch, key, source, shape, operands, None, [0; 4], &out, threads,
    )?;
    Ok(out)
}

/// Where a kernel that writes through strides (`copy_into.wgsl`) puts element `i`: the offset
/// and strides of the output over the dispatch's shape. It takes the `Dims` slot after the
/// operands.
pub struct Placement<'a> {
    pub strides: &'a [isize],
    pub offset: usize,
}

/// Records one elementwise dispatch over `shape` that writes into `out`, at element `i` or,
/// for kernels that read a placement, wherever it says. `extra` is the uniform's last four
/// words, for a kernel's own parameters (the gather's axis extent and stride).
#[allow(clippy::too_many_arguments)]
pub fn record(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    key: KernelKey,
    source: impl FnOnce() -> String,
    shape: &[usize],
    operands: &[Operand],
    placement: Option<Placement>,
    extra: [u32; 4],
    out: &GpuBuffer,
) -> Result<()> {
    let threads = numel(shape);
    record_over(
        gpu, batch, key, source, shape, operands, placement, extra, out, threads,
    )
}

/// [`record`] with `threads` threads (one per output word, say) rather than one per element
/// of `shape`.
#[allow(clippy::too_many_arguments)]
pub fn record_over(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    key: KernelKey,
    source: impl FnOnce() -> String,
    shape: &[usize],
    operands: &[Operand],
    placement: Option<Placement>,
    extra: [u32; 4],
    out: &GpuBuffer,
    threads: usize,
) -> Result<()> {
    if numel(shape) == 0 {
        return Ok(());
    }
    let mut strides: Vec<&[isize]> = operands.iter().map(|o| &o.strides[..]).collect();
    let mut offsets: Vec<usize> = operands.iter().map(|o| o.offset).collect();
    if let Some(p) = &placement {
        strides.push(p.strides);
        offsets.push(p.offset);
    }
    let (mut params, axes) = dims_words(key, shape, &strides, &offsets)?;
    params.extend(extra);
    let key = KernelKey {
        axes: axes as u8,
        ..key
    };
    let source = || for_axes(&source(), axes);
    let pipeline = gpu
        .pipelines
        .get_or_create(&gpu.device, key, "main", operands.len(), source);
    let mut buffers: Vec<&GpuBuffer> = operands.iter().map(|o| o.buffer).collect();
    buffers.push(out);
    let (x, y) = grid_for(threads, gpu.limits().max_compute_workgroups_per_dimension);
    batch.dispatch(&pipeline, &params, &buffers, (x, y, 1))?;
    Ok(())
}

/// A strided kernel's `source` made whole for a dispatch over `axes` collapsed axes (1 to 8):
/// its index arithmetic put before it.
pub fn for_axes(source: &str, axes: usize) -> String {
    format!("{}\n{source}", axes_functions(axes))
}

/// The functions of the kernels' index arithmetic over `axes` collapsed axes (see
/// `wgsl/elementwise.wgsl`), unrolled with constant indices. A loop over the axes indexed the
/// uniform's arrays by a variable, which SwiftShader compiles into a per-lane lookup: the
/// strided kernels ran at 150 ns an element there, against 8 for the `vec4` kernel.
fn axes_functions(axes: usize) -> String {
    let at = |d: usize| format!("[{}][{}]", d / 4, d % 4);
    let strides = |d: usize| {
        let (q, r) = (d / 4, d % 4);
        format!(
            "vec3<i32>(dims.strides[{q}][{r}], dims.strides[{}][{r}], dims.strides[{}][{r}])",
            q + 2,
            q + 4
        )
    };
    let mut text = String::from(
        "fn operand_offsets(index: u32) -> vec3<i32> {\n    var rest = index;\n    var next = 0u;\n    var at = vec3<i32>(dims.offsets);\n",
    );
    // Innermost first; the outermost axis's coordinate is what is left.
    for d in (1..axes).rev() {
        text += &format!(
            "    next = rest / dims.shape{0};\n    at += i32(rest - next * dims.shape{0}) * {1};\n    rest = next;\n",
            at(d),
            strides(d)
        );
    }
    let inner = axes - 1;
    text += &format!(
        "    return at + i32(rest) * {};\n}}\n\nfn inner_extent() -> u32 {{\n    return dims.shape{};\n}}\n\nfn inner_strides() -> vec3<i32> {{\n    return {};\n}}\n",
        strides(0),
        at(inner),
        strides(inner)
    );
    text
}

/// The `Dims` uniform: len, rank, two pad words, three offsets and a pad, the shape padded to
/// 8 axes, then each of three operands' strides padded to 8 (absent operands read stride 0);
/// and the collapsed axes' count.
fn dims_words(
    key: KernelKey,
    shape: &[usize],
    strides: &[&[isize]],
    offsets: &[usize],
) -> Result<(Vec<u32>, usize)> {
    let zeros = vec![0isize; shape.len()];
    let all: [&[isize]; MAX_OPERANDS] =
        std::array::from_fn(|k| strides.get(k).copied().unwrap_or(&zeros));
    let (dims, collapsed) = collapse_dims(shape, all);
    if dims.len() > MAX_RANK {
        return Err(Error::Shape(format!(
            "{key}: the GPU kernel walks at most {MAX_RANK} axes, and this broadcast needs {}",
            dims.len()
        )));
    }
    let offset = |k: usize| offsets.get(k).map_or(0, |&o| o as u32);
    let header = [
        numel(shape) as u32,
        dims.len() as u32,
        0,
        0,
        offset(0),
        offset(1),
        offset(2),
        0,
    ];
    let mut words = header.to_vec();
    words.extend(padded(dims.iter().map(|&d| d as u32)));
    for s in &collapsed {
        words.extend(padded(s.iter().map(|&v| v as i32 as u32)));
    }
    Ok((words, dims.len()))
}

fn padded(values: impl Iterator<Item = u32>) -> Vec<u32> {
    let mut v: Vec<u32> = values.collect();
    v.resize(MAX_RANK, 0);
    v
}

/// The strided copy kernel converting `from` to `to`.
pub fn copy_into_source(from: DType, to: DType) -> String {
    let header = format!(
        "alias In = {};\nalias Out = {};\nfn op(x: In) -> Out {{ return {}; }}",
        wgsl_type(from),
        wgsl_type(to),
        convert("x", from, to),
    );
    strided_source(&header, include_str!("wgsl/copy_into.wgsl"))
}

/// The WGSL scalar type that stores a dtype (bool is stored as a 0/1 `u32`, and the packed
/// dtypes as words of several elements).
pub fn wgsl_type(dtype: DType) -> &'static str {
    match dtype {
        DType::Float32 => "f32",
        DType::Int32 => "i32",
        _ => "u32",
    }
}

/// A WGSL expression converting `expr` from one dtype to another, with the CPU kernels' rules
/// (`cpu/cast.rs`): float to integer truncates and saturates, integers reinterpret, and
/// anything to bool tests for non-zero.
pub fn convert(expr: &str, from: DType, to: DType) -> String {
    match (from, to) {
        _ if from == to => expr.to_string(),
        // On the bits: compilers may fold `x != 0.0` to false for NaN.
        (DType::Float32, DType::Bool) => {
            format!("select(0u, 1u, (bitcast<u32>({expr}) & 0x7fffffffu) != 0u)")
        }
        (DType::Int32, DType::Bool) => format!("select(0u, 1u, {expr} != 0i)"),
        (_, DType::Bool) => format!("select(0u, 1u, {expr} != 0u)"),
        (DType::Uint32 | DType::Bool, DType::Uint32) => expr.to_string(),
        (DType::Float32, DType::Int32) => format!("f32_to_i32({expr})"),
        (DType::Float32, DType::Uint32) => format!("f32_to_u32({expr})"),
        (_, to) => format!("{}({expr})", wgsl_type(to)),
    }
}

/// What an elementwise op family's kernels share: the strided kernel's text, the name of its
/// `vec4` kernel, its input aliases in operand order, and the function its header defines.
pub struct Family {
    pub strided_kernel: &'static str,
    pub vec4_kernel: &'static str,
    pub inputs: &'static [&'static str],
    pub function: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_uniform_matches_the_wgsl_struct() {
        let (words, axes) = dims_words(
            KernelKey::new("t", "", &[]),
            &[2, 3],
            &[&[3, 1], &[0, 1]],
            &[0, 5],
        )
        .unwrap();
        assert_eq!(axes, 2);
        // The kernels' struct adds four words of `extra`: 176 bytes in all.
        assert_eq!(words.len() * 4, 160);
        assert_eq!(&words[..2], &[6, 2]);
        assert_eq!(&words[4..6], &[0, 5]);
        assert_eq!(&words[8..10], &[2, 3]);
        assert_eq!(&words[16..18], &[3, 1]);
        assert_eq!(&words[24..26], &[0, 1]);
    }

    #[test]
    fn conversions_follow_the_cpu_rules() {
        assert_eq!(
            convert("x", DType::Float32, DType::Bool),
            "select(0u, 1u, (bitcast<u32>(x) & 0x7fffffffu) != 0u)"
        );
        assert_eq!(convert("x", DType::Int32, DType::Float32), "f32(x)");
        assert_eq!(convert("x", DType::Bool, DType::Uint32), "x");
    }
}
