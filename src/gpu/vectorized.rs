//! The contiguous fast path of the elementwise kernels (`wgsl/elementwise_vec4.wgsl`): when
//! every operand is dense over the output, a row repeated along it (a bias), or a single
//! scalar element, a thread loads and
//! stores `vec4`s and computes several of them, instead of peeling one element's index into
//! coordinates. Strided and broadcast operands keep the general kernel (`elementwise.rs`).
//! Operands and outputs of a packed dtype are read and written as whole words, four
//! elements at a time, through `packed.rs`.

use crate::dtype::DType;
use crate::error::Result;
use crate::gpu::GpuContext;
use crate::gpu::device::grid::grid_of;
use crate::gpu::device::pipelines::KernelKey;
use crate::gpu::device::{buffers::create_output, encoder::CommandBatch};
use crate::gpu::elementwise::{CONVERT, MATH, more_math_for};
use crate::gpu::packed;
use crate::graph::shape::{contiguous_strides, numel, repeated_row};
use crate::memory::allocator::GpuBuffer;

const KERNEL: &str = include_str!("wgsl/elementwise_vec4.wgsl");

/// Threads per workgroup and `vec4`s per thread. On SwiftShader, 256 threads computing two
/// `vec4`s each was the fastest hand-written `exp` measured.
const WORKGROUP: u32 = 256;
const ITEMS: u32 = 2;
/// Small outputs (up to this many threads) take workgroups of [`SMALL_WORKGROUP`] instead: a
/// software adapter runs every invocation of a workgroup, busy or not, so a 64-element op in a
/// 256-thread workgroup paid for 248 idle threads.
const SMALL_THREADS: usize = 1024;
pub const SMALL_WORKGROUP: u32 = 64;

/// The workgroup size for `threads` threads. Outputs that fit one small workgroup get one just
/// big enough (a power of two, at least SwiftShader's 4 SIMD lanes): the 1000 chained adds on
/// 64 elements (8 threads) went from about 25 to 18 µs per op against 64-thread groups.
fn workgroup_for(threads: usize) -> u32 {
    if threads <= SMALL_WORKGROUP as usize {
        threads.next_power_of_two().max(4) as u32
    } else if threads <= SMALL_THREADS {
        SMALL_WORKGROUP
    } else {
        WORKGROUP
    }
}

/// How the fast kernel reads an operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Row-major over the output's shape, from an offset that is a multiple of 4.
    Dense,
    /// One element of a buffer, broadcast to every output element.
    Scalar,
    /// One element given as a parameter word (no buffer), broadcast.
    Word(u32),
    /// A row of this many `vec4`s, contiguous from an offset that is a multiple of 4,
    /// repeated along the output (a bias over a matmul's or convolution's rows).
    Row(u32),
    /// Elements in order, each repeated over this many `vec4`s of the output (a per-row
    /// statistic over its row: a norm's scale in its backward pass). Only single-op kernels
    /// take it (see [`access_or_column`]).
    Column(u32),
}

impl Access {
    /// The operand's part of the kernel's specialization.
    fn code(self) -> u32 {
        match self {
            Access::Dense => 0,
            Access::Scalar => 1,
            Access::Word(_) => 2,
            Access::Row(_) => 3,
            Access::Column(_) => 4,
        }
    }
}

/// How the fast kernel reads an operand with `strides` and `offset` over the output `shape`,
/// or `None` if only the strided kernel can.
pub fn access(shape: &[usize], strides: &[isize], offset: usize) -> Option<Access> {
    if shape
        .iter()
        .zip(strides)
        .all(|(&extent, &s)| extent <= 1 || s == 0)
    {
        return Some(Access::Scalar);
    }
    let dense = contiguous_strides(shape);
    let matches = shape
        .iter()
        .zip(strides.iter().zip(&dense))
        .all(|(&extent, (&s, &d))| extent <= 1 || s == d);
    if matches && offset.is_multiple_of(4) {
        return Some(Access::Dense);
    }
    row(shape, strides, offset)
}

/// [`access`], or else a column: each element of a dense run repeated over whole `vec4`s of
/// the output (`[rows, 1]` over `[rows, cols]`, cols a multiple of 4), which the fast kernel
/// reads one element per `vec4`. Its period costs a parameter word, so only kernels of a few
/// operands (one op's) take it; a fused kernel's operands stay within [`access`].
pub fn access_or_column(shape: &[usize], strides: &[isize], offset: usize) -> Option<Access> {
    access(shape, strides, offset).or_else(|| column(shape, strides))
}

fn column(shape: &[usize], strides: &[isize]) -> Option<Access> {
    let repeats = |i: usize| shape[i] <= 1 || strides[i] == 0;
    let split = (0..shape.len())
        .rev()
        .find(|&i| !repeats(i))
        .map_or(0, |i| i + 1);
    let inner = numel(&shape[split..]);
    let dense = contiguous_strides(&shape[..split]);
    let leading = shape[..split]
        .iter()
        .zip(strides.iter().zip(&dense))
        .all(|(&extent, (&s, &d))| extent <= 1 || s == d);
    (leading && inner >= 4 && inner.is_multiple_of(4)).then_some(Access::Column((inner / 4) as u32))
}

/// A row repeated along the output ([`repeated_row`]) of whole `vec4`s from a whole `vec4`.
fn row(shape: &[usize], strides: &[isize], offset: usize) -> Option<Access> {
    repeated_row(shape, strides)
        .filter(|&len| len.is_multiple_of(4) && offset.is_multiple_of(4))
        .map(|len| Access::Row((len / 4) as u32))
}

/// What the op's header defines: the input aliases (each operand's compute type), in operand
/// order, and the function that takes one element of each and returns the output element
/// (`op` or `pick`); and the dtypes the operands and the output are stored in, which differ
/// from the aliases for the packed dtypes (`packed.rs`).
pub struct OpHeader<'a> {
    pub inputs: &'a [&'a str],
    pub function: &'a str,
    pub stored: &'a [DType],
    pub out: DType,
}

/// Records the fast kernel over `shape` with each operand (its buffer, unless it is a word,
/// and its offset) read as its access says, and returns the output buffer. `key` names the
/// op's `vec4` kernel; the accesses are added to it.
pub fn dispatch(
    gpu: &GpuContext,
    batch: &mut CommandBatch,
    key: KernelKey,
    header: impl FnOnce() -> String,
    op: &OpHeader<'_>,
    shape: &[usize],
    operands: &[(Option<&GpuBuffer>, usize, Access)],
) -> Result<GpuBuffer> {
    let len = numel(shape);
    let inputs: Vec<&GpuBuffer> = operands.iter().filter_map(|o| o.0).collect();
    let out = create_output(gpu, op.out.words(len), &inputs)?;
    if len == 0 {
        return Ok(out);
    }
    let accesses: Vec<Access> = operands.iter().map(|o| o.2).collect();
    let threads = len.div_ceil(4).div_ceil(ITEMS as usize);
    let workgroup = workgroup_for(threads);
    let key = KernelKey {
        accesses: access_number(&accesses),
        ..key.variant(workgroup)
    };
    // The output's length in vec4s, then each operand's offset (or word) and each row
    // operand's period: at most 1 + 32 + 6 words, inside the 64 of a parameter slot.
    let offsets: Vec<usize> = operands.iter().map(|o| o.1).collect();
    let mut params = vec![len.div_ceil(4) as u32];
    params.extend(operand_words(&accesses, &offsets));
    params.resize(params.len().next_multiple_of(4), 0);
    let mut buffers: Vec<&GpuBuffer> = operands
        .iter()
        .filter(|o| !matches!(o.2, Access::Word(_)))
        .map(|o| o.0.expect("an operand read from memory has a buffer"))
        .collect();
    buffers.push(&out);
    let kernel = gpu
        .pipelines
        .get_or_create(&gpu.device, key, "main", buffers.len() - 1, || {
            source(&header(), op, &accesses, workgroup)
        });
    let max = gpu.limits().max_compute_workgroups_per_dimension;
    let (x, y) = grid_of(threads, workgroup, max);
    batch.dispatch(&kernel, &params, &buffers, (x, y, 1))?;
    Ok(out)
}

/// The kernel's source: the op's header, the helpers, each operand's binding and load, the
/// output's binding, `element4`, then the kernel.
pub fn source(header: &str, op: &OpHeader<'_>, accesses: &[Access], workgroup: u32) -> String {
    let dtypes: Vec<DType> = op.stored.iter().copied().chain([op.out]).collect();
    let mut text = format!(
        "{header}\n{CONVERT}\n{MATH}\n{}\n{}\nconst WORKGROUP: u32 = {workgroup}u;\nconst ITEMS: u32 = {ITEMS}u;\n{}",
        more_math_for(header),
        packed::source_for(&dtypes, header),
        params_struct(accesses)
    );
    let mut binding = 0;
    for (k, ((alias, access), &stored)) in op.inputs.iter().zip(accesses).zip(op.stored).enumerate()
    {
        if !matches!(access, Access::Word(_)) {
            binding += 1;
        }
        text += &operand_text(k, alias, *access, binding, stored);
    }
    text += &output_text(binding + 1, op.out, "Out");
    let loads: Vec<String> = (0..op.inputs.len())
        .map(|k| format!("    let a{k} = load{k}(v);\n"))
        .collect();
    let lane = |l: &str| {
        let args: Vec<String> = (0..op.inputs.len()).map(|k| format!("a{k}.{l}")).collect();
        format!("{}({})", op.function, args.join(", "))
    };
    text += &format!(
        "fn element4(v: u32) -> vec4<Out> {{\n{}    return vec4<Out>({}, {}, {}, {});\n}}\n{KERNEL}",
        loads.concat(),
        lane("x"),
        lane("y"),
        lane("z"),
        lane("w"),
    );
    text
}

/// The output's binding at `binding` and `fn store(v, value)`, which writes `vec4` v of the
/// output (computed as `alias`, and rounded where `dtype` is packed).
pub fn output_text(binding: usize, dtype: DType, alias: &str) -> String {
    let element = match dtype.is_packed() {
        true => packed::storage4(dtype),
        false => format!("vec4<{alias}>"),
    };
    format!(
        "@group(0) @binding({binding}) var<storage, read_write> out: array<{element}>;\n\
         fn store(v: u32, value: vec4<{alias}>) {{ out[v] = {}; }}\n",
        packed::narrow4(dtype, "value")
    )
}

/// Operand `k`'s binding (unless it is a word) and `fn load{k}(v)`, which reads its `vec4` v
/// as `access` says from `params.offset{k}` (and `params.period{k}` for a row), widened from
/// `stored` to `alias` where `stored` is a packed dtype (`packed.rs`: a word dtype's loads are
/// plain reads). A word holds the compute value.
pub fn operand_text(
    k: usize,
    alias: &str,
    access: Access,
    binding: usize,
    stored: DType,
) -> String {
    if let Access::Word(_) = access {
        return format!(
            "fn load{k}(v: u32) -> vec4<{alias}> {{ return vec4<{alias}>(bitcast<{alias}>(params.offset{k})); }}\n"
        );
    }
    let (vec4, scalar) = match stored.is_packed() {
        true => (packed::storage4(stored), "u32".to_string()),
        false => (format!("vec4<{alias}>"), alias.to_string()),
    };
    let declare = |element: &str| {
        format!("@group(0) @binding({binding}) var<storage, read> in{k}: array<{element}>;\n")
    };
    let load =
        |value: String| format!("fn load{k}(v: u32) -> vec4<{alias}> {{ return {value}; }}\n");
    let vector = |index: &str| packed::widen4(stored, &format!("in{k}[{index}]"));
    match access {
        Access::Dense => declare(&vec4) + &load(vector(&format!("params.offset{k} + v"))),
        Access::Row(_) => {
            declare(&vec4) + &load(vector(&format!("params.offset{k} + v % params.period{k}")))
        }
        Access::Scalar => {
            let element = packed::element(stored, &format!("in{k}"), &format!("params.offset{k}"));
            declare(&scalar) + &load(format!("vec4<{alias}>({element})"))
        }
        Access::Column(_) => {
            let at = format!("params.offset{k} + v / params.period{k}");
            let element = packed::element(stored, &format!("in{k}"), &at);
            declare(&scalar) + &load(format!("vec4<{alias}>({element})"))
        }
        Access::Word(_) => unreachable!("a word has no binding"),
    }
}

/// Access lists remembered before the table starts over. A fused kernel has up to 32 operands
/// of three kinds, far more lists than a table should keep for a page that never stops.
const ACCESS_LIST_BOUND: usize = 4096;

thread_local! {
    /// Operand access lists by number: fused kernels read more operands than fit in bits.
    static ACCESS_LISTS: std::cell::RefCell<rustc_hash::FxHashMap<Vec<u32>, u64>> =
        std::cell::RefCell::default();
    static NEXT_ACCESS_LIST: std::cell::Cell<u64> = const { std::cell::Cell::new(1) };
}

/// A number for the list of accesses, the same for equal lists while the table remembers
/// them. Numbers are never given out twice, so a pipeline found by one reads its operands as
/// that list says; a list forgotten and seen again gets a new number (and pipeline).
pub fn access_number(accesses: &[Access]) -> u64 {
    let codes: Vec<u32> = accesses.iter().map(|a| a.code()).collect();
    ACCESS_LISTS.with(|lists| {
        let mut lists = lists.borrow_mut();
        if let Some(&number) = lists.get(&codes) {
            return number;
        }
        if lists.len() >= ACCESS_LIST_BOUND {
            lists.clear();
        }
        let number = NEXT_ACCESS_LIST.with(|n| n.replace(n.get() + 1));
        lists.insert(codes, number);
        number
    })
}

/// `Vec4Params`: the output's length in `vec4`s, then [`operand_fields`].
fn params_struct(accesses: &[Access]) -> String {
    format!(
        "struct Vec4Params {{\n    len4: u32,\n{}}}\n@group(0) @binding(0) var<uniform> params: Vec4Params;\n",
        operand_fields(accesses, 0, 1)
    )
}

/// The parameter words of operands read as `accesses` from `offsets` (in elements): each
/// one's offset (in `vec4`s for a dense or row operand, in elements for a scalar) or its word,
/// then each row operand's period. A kernel puts them after its own words.
pub fn operand_words(accesses: &[Access], offsets: &[usize]) -> Vec<u32> {
    let mut words: Vec<u32> = accesses
        .iter()
        .zip(offsets)
        .map(|(access, &offset)| match *access {
            Access::Dense | Access::Row(_) => (offset / 4) as u32,
            Access::Scalar | Access::Column(_) => offset as u32,
            Access::Word(word) => word,
        })
        .collect();
    words.extend(accesses.iter().filter_map(|a| match a {
        Access::Row(period) | Access::Column(period) => Some(*period),
        _ => None,
    }));
    words
}

/// The uniform fields [`operand_words`] fills, for operands numbered from `first`
/// (`offset{k}`, then `period{k}` for each row), after `before` words of the kernel's own, and
/// padding to whole `vec4`s as uniform blocks are.
pub fn operand_fields(accesses: &[Access], first: usize, before: usize) -> String {
    let mut text = String::new();
    for k in 0..accesses.len() {
        text += &format!("    offset{}: u32,\n", first + k);
    }
    let periodic = |a: &Access| matches!(a, Access::Row(_) | Access::Column(_));
    for k in (0..accesses.len()).filter(|&k| periodic(&accesses[k])) {
        text += &format!("    period{}: u32,\n", first + k);
    }
    let rows = accesses.iter().filter(|a| periodic(a)).count();
    let used = before + accesses.len() + rows;
    for k in used..used.next_multiple_of(4) {
        text += &format!("    pad{k}: u32,\n");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operands_are_dense_scalar_or_strided() {
        assert_eq!(access(&[2, 3], &[3, 1], 0), Some(Access::Dense));
        assert_eq!(access(&[2, 3], &[3, 1], 8), Some(Access::Dense));
        assert_eq!(access(&[2, 3], &[3, 1], 2), None, "unaligned");
        assert_eq!(access(&[2, 3], &[0, 0], 5), Some(Access::Scalar));
        assert_eq!(access(&[1, 3], &[7, 1], 0), Some(Access::Dense));
        assert_eq!(access(&[2, 3], &[0, 1], 0), None, "a broadcast row of 3");
        assert_eq!(access(&[2, 8], &[0, 1], 4), Some(Access::Row(2)), "a bias");
        assert_eq!(access(&[5, 2, 4], &[0, 4, 1], 0), Some(Access::Row(2)));
        assert_eq!(
            access(&[5, 2, 4], &[0, 0, 1], 0),
            Some(Access::Row(1)),
            "a row of 4"
        );
        assert_eq!(
            access(&[5, 2, 4], &[0, 1, 0], 0),
            None,
            "repeats inside the row"
        );
        assert_eq!(access(&[2, 8], &[0, 1], 2), None, "unaligned");
        assert_eq!(access(&[2, 3], &[1, 2], 0), None, "transposed");
        assert_eq!(access(&[], &[], 3), Some(Access::Scalar));
        // Columns: a value per row, repeated over whole vec4s; single-op kernels only.
        assert_eq!(access(&[3, 8], &[1, 0], 0), None);
        assert_eq!(
            access_or_column(&[3, 8], &[1, 0], 5),
            Some(Access::Column(2))
        );
        assert_eq!(
            access_or_column(&[2, 3, 2, 4], &[3, 1, 0, 0], 0),
            Some(Access::Column(2))
        );
        assert_eq!(access_or_column(&[3, 6], &[1, 0], 0), None, "rows of 6");
        assert_eq!(access_or_column(&[3, 8], &[2, 0], 0), None, "rows apart");
        assert_eq!(
            access_or_column(&[3, 4, 8], &[1, 0, 1], 0),
            None,
            "not trailing"
        );
        assert_eq!(access_or_column(&[2, 8], &[8, 1], 0), Some(Access::Dense));
    }

    #[test]
    fn the_params_struct_has_a_word_per_operand_and_row_in_whole_vec4s() {
        let text = params_struct(&[Access::Dense; 3]);
        assert!(text.contains("offset2: u32") && !text.contains("pad"));
        let text = params_struct(&[Access::Scalar; 5]);
        assert!(text.contains("offset4: u32") && text.contains("pad6: u32"));
        let text = params_struct(&[Access::Dense, Access::Row(8)]);
        assert!(
            text.contains("offset1: u32,\n    period1: u32,\n}") && !text.contains("pad"),
            "{text}"
        );
    }

    #[test]
    fn small_outputs_take_small_workgroups() {
        assert_eq!(workgroup_for(1), 4);
        assert_eq!(workgroup_for(8), 8);
        assert_eq!(workgroup_for(9), 16);
        assert_eq!(workgroup_for(64), SMALL_WORKGROUP);
        assert_eq!(workgroup_for(65), SMALL_WORKGROUP);
        assert_eq!(workgroup_for(1 << 20), WORKGROUP);
    }
}
