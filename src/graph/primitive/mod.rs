//! What a graph node computes. The set is closed: each primitive has one CPU kernel (in `cpu/`)
//! and one GPU kernel (in `gpu/`), and no device code lives here. The dtype rules of each op
//! (what it accepts, what it returns, what it computes in) live here too, so that both devices
//! and the op builders agree on them.

mod elementwise;
mod fused;
mod norm;

pub use elementwise::{BinaryOp, UnaryOp};
pub use fused::{FusedExpr, GPU_FUSED_BUFFERS, Step};
pub use norm::NormKind;

use std::rc::Rc;

use crate::dtype::DType;
use crate::graph::shape::{Layout, broadcast_strides, reshape_view, slice_view, transpose_view};

/// A reduction of trailing axes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    Prod,
    Max,
    Min,
    /// The index of the first maximum (NaN counts as the maximum, as `max` propagates it).
    ArgMax,
    /// The index of the first minimum (NaN counts as the minimum).
    ArgMin,
}

impl ReduceOp {
    /// Every reduction primitive.
    pub const ALL: [ReduceOp; 6] = [
        ReduceOp::Sum,
        ReduceOp::Prod,
        ReduceOp::Max,
        ReduceOp::Min,
        ReduceOp::ArgMax,
        ReduceOp::ArgMin,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::ArgMax => "argmax",
            ReduceOp::ArgMin => "argmin",
        }
    }

    /// The result dtype: indices are `uint32`; sums and products of bools and `int8` count
    /// in `int32`, of `uint8` in `uint32` (MLX's rules).
    pub fn out_dtype(self, dtype: DType) -> DType {
        match (self, dtype) {
            (ReduceOp::ArgMax | ReduceOp::ArgMin, _) => DType::Uint32,
            (ReduceOp::Sum | ReduceOp::Prod, DType::Bool | DType::Int8) => DType::Int32,
            (ReduceOp::Sum | ReduceOp::Prod, DType::Uint8) => DType::Uint32,
            _ => dtype,
        }
    }

    /// Whether the result is an index rather than a value.
    pub fn is_arg(self) -> bool {
        matches!(self, ReduceOp::ArgMax | ReduceOp::ArgMin)
    }
}

/// What a random node draws. Parameters are kept as `f32` bits so primitives stay hashable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Distribution {
    /// Uniform in [low, high).
    Uniform { low: u32, high: u32 },
    /// Normal with mean `loc` and standard deviation `scale`.
    Normal { loc: u32, scale: u32 },
}

impl Distribution {
    /// Whether it is the normal distribution, and its two parameters.
    pub fn parts(self) -> (bool, f32, f32) {
        match self {
            Distribution::Uniform { low, high } => {
                (false, f32::from_bits(low), f32::from_bits(high))
            }
            Distribution::Normal { loc, scale } => {
                (true, f32::from_bits(loc), f32::from_bits(scale))
            }
        }
    }
}

/// What a creation op fills its row-major array with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fill {
    /// Every element the same word (`zeros`, `ones`, `full`).
    Constant(u32),
    /// The identity matrix: this word on the diagonal, 0 elsewhere.
    Eye(u32),
    /// `start + i * step`, computed in f64 and rounded to the dtype (the f64 bits).
    Arange { start: u64, step: u64 },
    /// Evenly spaced from `start` to `stop`, both included (the f64 bits).
    Linspace { start: u64, stop: u64 },
}

impl Fill {
    pub fn name(self) -> &'static str {
        match self {
            Fill::Constant(_) => "full",
            Fill::Eye(_) => "eye",
            Fill::Arange { .. } => "arange",
            Fill::Linspace { .. } => "linspace",
        }
    }
}

/// The fused row ops of [`Primitive::RowNorm`]. Both shift by the row's maximum `m` for range;
/// a row whose maximum is not finite (it holds +inf or NaN, or is all -inf) gives NaN for
/// softmax and `m` for logsumexp, as the unfused ops do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowNorm {
    /// `exp(x - m) / sum(exp(x - m))`, of the input's shape.
    Softmax,
    /// `m + log(sum(exp(x - m)))`, one value per row.
    LogSumExp,
}

impl RowNorm {
    pub fn name(self) -> &'static str {
        match self {
            RowNorm::Softmax => "softmax",
            RowNorm::LogSumExp => "logsumexp",
        }
    }
}

/// The running reductions of [`Primitive::Scan`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScanOp {
    Sum,
    Prod,
    /// NaN propagates from where it appears, as `maximum` does.
    Max,
    Min,
    /// `log(sum(exp))`, running; float32.
    LogAddExp,
}

impl ScanOp {
    pub fn name(self) -> &'static str {
        match self {
            ScanOp::Sum => "cumsum",
            ScanOp::Prod => "cumprod",
            ScanOp::Max => "cummax",
            ScanOp::Min => "cummin",
            ScanOp::LogAddExp => "logcumsumexp",
        }
    }

    /// The result dtype, MLX's: sums of bools count in int32, `logcumsumexp` is float32
    /// for integers, the rest keep the input's (a running product of bools is their running
    /// "and").
    pub fn out_dtype(self, dtype: DType) -> DType {
        match (self, dtype) {
            (ScanOp::LogAddExp, d) if !d.is_float() => DType::Float32,
            (ScanOp::Sum, DType::Bool) => DType::Int32,
            _ => dtype,
        }
    }
}

/// Where a scatter writes. The node's first input is the array written into (the node has its
/// shape and dtype); the updates already have its dtype and the shape of the region written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Scatter {
    /// MLX's `put_along_axis` on this axis: inputs `x`, int32/uint32 indices and values, both
    /// broadcast to the updates' shape, which is `x`'s off the axis. Each update lands at its
    /// own coordinates with the axis's read from the indices (negative from the end, the rest
    /// clamped, as the gather); of two updates to one element, one lands.
    Axis(usize),
    /// MLX's `scatter_add` along this axis (`x.at[indices].add(values)` with
    /// `put_along_axis`'s placement): inputs as [`Scatter::Axis`], float32, and every update
    /// is added where it lands, so repeated indices sum. The gradient of a gather.
    AxisAdd(usize),
    /// MLX's `slice_update`: inputs `x` and the update, which fills the slice of `x` that
    /// starts at `start` and steps by `step` on each axis (the slice view's parameters).
    Slice { start: Vec<usize>, step: Vec<isize> },
}

/// The patches of a 2-D convolution's float32 input `[N, H, W, C]` (im2col): the node is
/// `[N, OH, OW, KH * KW, C]`, where tap `(i, j)` of output position `(y, x)` holds the input
/// at `(y * stride - padding + i * dilation, x * stride - padding + j * dilation)`, and zeros
/// where that is outside the input. One pass, so the padding is never materialized.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Patches {
    pub kernel: [usize; 2],
    pub stride: [usize; 2],
    pub padding: [usize; 2],
    pub dilation: [usize; 2],
}

impl Patches {
    /// The input position of output `out` and tap `tap` on axis `axis`, if inside `extent`.
    pub fn source(&self, axis: usize, out: usize, tap: usize, extent: usize) -> Option<usize> {
        let at = out * self.stride[axis] + tap * self.dilation[axis];
        at.checked_sub(self.padding[axis]).filter(|&i| i < extent)
    }
}

/// A change of layout that shares the input's data where it can.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum View {
    /// To the node's shape, same elements in row-major order (also `expandDims`, `squeeze`,
    /// `flatten`). A copy when the input's layout cannot be viewed that way.
    Reshape,
    /// Permutes the axes.
    Transpose(Vec<usize>),
    /// To the node's shape, repeating along broadcast axes with stride 0.
    Broadcast,
    /// Per axis, the first index taken and the step (negative steps walk backwards).
    Slice { start: Vec<usize>, step: Vec<isize> },
    /// The input unchanged, through which no gradient flows (MLX's `stop_gradient`).
    StopGradient,
    /// Input 0 unchanged, once inputs 1.. have been computed (MLX's `depends`): it orders a
    /// checkpoint's recomputation after the cotangent that needs it.
    Depends,
    /// Input 0, output `output` of a checkpointed function whose inputs are inputs 1..: the
    /// backward pass recomputes the function there rather than reading what it saved.
    Checkpoint { output: usize, function: Opaque },
}

/// What a transform attaches to a node and only that transform reads (the function that a
/// checkpoint recomputes, which this layer cannot name); compared and hashed by identity.
#[derive(Clone)]
pub struct Opaque(pub Rc<dyn std::any::Any>);

impl PartialEq for Opaque {
    fn eq(&self, other: &Opaque) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Opaque {}

impl std::hash::Hash for Opaque {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        Rc::as_ptr(&self.0).cast::<()>().hash(state);
    }
}

impl std::fmt::Debug for Opaque {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Opaque({:p})", Rc::as_ptr(&self.0).cast::<()>())
    }
}

impl View {
    /// The layout that reads the input (of `in_shape`, laid out as `layout`) as this view of
    /// shape `out_shape`, or `None` when the data must be copied first.
    pub fn layout(
        &self,
        in_shape: &[usize],
        layout: &Layout,
        out_shape: &[usize],
    ) -> Option<Layout> {
        match self {
            View::Reshape => reshape_view(in_shape, layout, out_shape),
            View::Transpose(axes) => Some(transpose_view(layout, axes)),
            View::Broadcast => Some(Layout {
                strides: broadcast_strides(in_shape, &layout.strides, out_shape),
                offset: layout.offset,
            }),
            View::Slice { start, step } => Some(slice_view(layout, start, step)),
            View::StopGradient | View::Depends | View::Checkpoint { .. } => Some(layout.clone()),
        }
    }
}

/// The computation of a node that has inputs. Arrays made from data have none.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Primitive {
    Unary(UnaryOp),
    Binary(BinaryOp),
    /// `where(cond, x, y)`: inputs are cond, x and y, broadcast together.
    Where,
    /// Reduces the input's last `n` axes (op builders move the reduced axes there).
    Reduce(ReduceOp, usize),
    /// `softmax` or `logsumexp` over the float32 input's last `n` axes, fused: one pass over
    /// each row rather than a chain of reductions and elementwise ops.
    RowNorm(RowNorm, usize),
    /// Batched matrix product of inputs already broadcast to one batch shape.
    Matmul,
    /// The inputs joined along an axis (their dtypes converted to the node's).
    Concatenate(usize),
    /// A running reduction along the input's last axis, in the node's dtype: reversed
    /// (from the end) and exclusive (each element left out of its own value) as flagged.
    Scan {
        op: ScanOp,
        reverse: bool,
        inclusive: bool,
    },
    /// `tn.fast.layerNorm` (or `rmsNorm` when `rms`) over the float32 input's last axis, in
    /// one pass of a row: inputs are x, then the weight and the bias where present (1-D, the
    /// row's length). `eps` is kept as f32 bits so that primitives stay hashable.
    Norm {
        rms: bool,
        weight: bool,
        bias: bool,
        eps: u32,
    },
    /// A stable sort along the input's last axis, NaN last (-0 and +0 equal): the first
    /// `keep` of each sorted row, or with `descending` the last `keep` from the end, as
    /// values or (`indices`) uint32 positions in the row.
    Sort {
        indices: bool,
        descending: bool,
        keep: usize,
    },
    /// MLX's `take_along_axis` on this axis: inputs are `x` and int32/uint32 indices of the
    /// same rank; the node's shape is their broadcast, with the indices' extent on the axis.
    /// Negative indices count from the end; out-of-range ones clamp (MLX's device rule).
    Gather(usize),
    /// A copy of the first input with some of its elements replaced (see [`Scatter`]).
    Scatter(Scatter),
    /// A 2-D convolution's input as its patches (see [`Patches`]).
    Patches(Patches),
    /// Counter-based random numbers under a key; no inputs.
    Random([u32; 2], Distribution),
    /// A creation op's values; no inputs.
    Fill(Fill),
    View(View),
    /// A chain of elementwise ops run as one kernel (see [`FusedExpr`]); made by fusion, never
    /// by an op builder.
    Fused(Rc<FusedExpr>),
    /// A matmul whose product goes straight through a fused program (its epilogue: a bias
    /// and an activation): inputs are the matmul's two, broadcast to one batch shape, then the
    /// program's inputs from its second on; the program's input 0 is the product. Made by
    /// fusion, never by an op builder.
    MatmulThen(Rc<FusedExpr>),
    /// A convolution's product with its epilogue, as [`Primitive::MatmulThen`], whose A is
    /// the patches of input 0 (`[N, H, W, C]`, see [`Patches`]) rather than a made matrix:
    /// the CPU makes them a block of rows at a time as the product needs them. Inputs: the
    /// image, B (`[1, taps * C, O]`), then the program's inputs from its second on. Made by
    /// fusion on the CPU stream, never by an op builder.
    PatchesThen(Patches, Rc<FusedExpr>),
}

impl Primitive {
    /// Whether the primitive's kernels on `device` read its input `k` in a packed dtype
    /// (`float16`, `bfloat16`, `int8`, `uint8`) themselves: the conversion and a view's copy,
    /// and the CPU matmul's B (a weight), which it widens panel by panel as it packs them.
    /// Other packed inputs are widened by `astype` nodes (`Array::from_primitive`). A fused
    /// program (made by fusion from nodes already widened, or replayed from a compiled tape)
    /// reads its inputs in the dtypes it was built with, and is never widened again.
    pub fn reads_packed(&self, k: usize, device: crate::stream::Device) -> bool {
        match self {
            Primitive::Unary(UnaryOp::Cast)
            | Primitive::View(_)
            | Primitive::Fused(_)
            | Primitive::MatmulThen(_)
            | Primitive::PatchesThen(..) => true,
            // The CPU's kernel widens its B (a weight) panel by panel; the GPU's kernels read
            // both operands packed.
            Primitive::Matmul => k == 1 || device == crate::stream::Device::Gpu,
            // The GPU's norms and softmax read their input's elements one at a time.
            Primitive::RowNorm(..) | Primitive::Norm { .. } => {
                k == 0 && device == crate::stream::Device::Gpu
            }
            _ => false,
        }
    }

    /// Whether the primitive's kernels write a packed dtype themselves; others compute in
    /// the compute dtype and an `astype` rounds their result once.
    pub fn writes_packed(&self, device: crate::stream::Device) -> bool {
        match self {
            Primitive::Unary(UnaryOp::Cast)
            | Primitive::View(_)
            | Primitive::Fused(_)
            | Primitive::MatmulThen(_)
            | Primitive::PatchesThen(..) => true,
            Primitive::Matmul => device == crate::stream::Device::Gpu,
            _ => false,
        }
    }

    /// For an elementwise op of inputs of `dtypes`: the dtype its value operands are
    /// converted to before it computes (their promotion, as in MLX) and which inputs those
    /// are (`where`'s condition is not one).
    pub fn operand_dtype(&self, dtypes: &[DType]) -> Option<(DType, std::ops::Range<usize>)> {
        match self {
            Primitive::Binary(_) => Some((crate::dtype::promote(dtypes[0], dtypes[1]), 0..2)),
            Primitive::Where => Some((crate::dtype::promote(dtypes[1], dtypes[2]), 1..3)),
            _ => None,
        }
    }

    /// The op's name, as profiles and memory snapshots report it.
    pub fn name(&self) -> &'static str {
        match self {
            Primitive::Unary(op) => op.name(),
            Primitive::Binary(op) => op.name(),
            Primitive::Where => "where",
            Primitive::Reduce(op, _) => op.name(),
            Primitive::RowNorm(op, _) => op.name(),
            Primitive::Matmul => "matmul",
            Primitive::MatmulThen(_) => "fusedMatmul",
            Primitive::PatchesThen(..) => "fusedConv",
            Primitive::Concatenate(_) => "concatenate",
            Primitive::Gather(_) => "takeAlongAxis",
            Primitive::Scatter(Scatter::Axis(_)) => "putAlongAxis",
            Primitive::Scatter(Scatter::AxisAdd(_)) => "scatterAdd",
            Primitive::Scatter(Scatter::Slice { .. }) => "sliceUpdate",
            Primitive::Patches(_) => "im2col",
            Primitive::Scan { op, .. } => op.name(),
            Primitive::Sort { indices: true, .. } => "argsort",
            Primitive::Sort {
                descending: true, ..
            } => "topk",
            Primitive::Sort { .. } => "sort",
            Primitive::Norm { rms: true, .. } => "rmsNorm",
            Primitive::Norm { .. } => "layerNorm",
            Primitive::Random(_, Distribution::Uniform { .. }) => "randomUniform",
            Primitive::Random(_, _) => "randomNormal",
            Primitive::Fill(fill) => fill.name(),
            Primitive::View(View::Reshape) => "reshape",
            Primitive::View(View::Transpose(_)) => "transpose",
            Primitive::View(View::Broadcast) => "broadcastTo",
            Primitive::View(View::Slice { .. }) => "slice",
            Primitive::View(View::StopGradient) => "stopGradient",
            Primitive::View(View::Depends) => "depends",
            Primitive::View(View::Checkpoint { .. }) => "checkpoint",
            Primitive::Fused(_) => "fused",
        }
    }
}
