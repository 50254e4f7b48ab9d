//! What a graph node computes. The set is closed: each primitive has one CPU kernel (in `cpu/`)
//! and one GPU kernel (in `gpu/`), and no device code lives here. The dtype rules of each op
//! (what it accepts, what it returns, what it computes in) live here too, so that both devices
//! and the op builders agree on them.

mod fused;

pub use fused::{FusedExpr, GPU_FUSED_BUFFERS, Step};

use std::rc::Rc;

use crate::dtype::DType;
use crate::graph::shape::{Layout, broadcast_strides, reshape_view, slice_view, transpose_view};

/// An elementwise operation of one operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Abs,
    Neg,
    Sign,
    Square,
    Sqrt,
    Rsqrt,
    Exp,
    Expm1,
    Log,
    Log1p,
    Sin,
    Cos,
    Tan,
    Tanh,
    Sigmoid,
    Relu,
    Gelu,
    Erf,
    Floor,
    Ceil,
    Round,
    Reciprocal,
    LogicalNot,
    /// Converts to the node's dtype (`astype`), or copies when the dtype is the same; the copy
    /// also makes strided views contiguous.
    Cast,
}

impl UnaryOp {
    /// Every unary op of the JS API, in the API's order (`Cast` is `astype`).
    pub const ALL: [UnaryOp; 23] = [
        UnaryOp::Abs,
        UnaryOp::Neg,
        UnaryOp::Sign,
        UnaryOp::Square,
        UnaryOp::Sqrt,
        UnaryOp::Rsqrt,
        UnaryOp::Exp,
        UnaryOp::Expm1,
        UnaryOp::Log,
        UnaryOp::Log1p,
        UnaryOp::Sin,
        UnaryOp::Cos,
        UnaryOp::Tan,
        UnaryOp::Tanh,
        UnaryOp::Sigmoid,
        UnaryOp::Relu,
        UnaryOp::Gelu,
        UnaryOp::Erf,
        UnaryOp::Floor,
        UnaryOp::Ceil,
        UnaryOp::Round,
        UnaryOp::Reciprocal,
        UnaryOp::LogicalNot,
    ];

    /// The op's name in the JS API.
    pub fn name(self) -> &'static str {
        use UnaryOp::*;
        match self {
            Abs => "abs",
            Neg => "neg",
            Sign => "sign",
            Square => "square",
            Sqrt => "sqrt",
            Rsqrt => "rsqrt",
            Exp => "exp",
            Expm1 => "expm1",
            Log => "log",
            Log1p => "log1p",
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Tanh => "tanh",
            Sigmoid => "sigmoid",
            Relu => "relu",
            Gelu => "gelu",
            Erf => "erf",
            Floor => "floor",
            Ceil => "ceil",
            Round => "round",
            Reciprocal => "reciprocal",
            LogicalNot => "logicalNot",
            Cast => "astype",
        }
    }

    /// Whether the op computes in floating point, so integer inputs become `float32`.
    pub fn is_float_only(self) -> bool {
        use UnaryOp::*;
        matches!(
            self,
            Sqrt | Rsqrt
                | Exp
                | Expm1
                | Log
                | Log1p
                | Sin
                | Cos
                | Tan
                | Tanh
                | Sigmoid
                | Gelu
                | Erf
                | Reciprocal
        )
    }

    /// The dtype of `op(x)` for an input of `dtype` (`Cast` is decided by its caller). As in
    /// MLX, `relu` of bools is `maximum(x, 0)` and so counts in int32.
    pub fn out_dtype(self, dtype: DType) -> DType {
        match (self, dtype) {
            (UnaryOp::LogicalNot, _) => DType::Bool,
            (UnaryOp::Relu, DType::Bool) => DType::Int32,
            (op, _) if op.is_float_only() => DType::Float32,
            _ => dtype,
        }
    }
}

/// An elementwise operation of two broadcast operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Subtract,
    Multiply,
    Divide,
    Power,
    Maximum,
    Minimum,
    Equal,
    NotEqual,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
    LogicalAnd,
    LogicalOr,
}

impl BinaryOp {
    /// Every binary op of the JS API, in the API's order.
    pub const ALL: [BinaryOp; 15] = [
        BinaryOp::Add,
        BinaryOp::Subtract,
        BinaryOp::Multiply,
        BinaryOp::Divide,
        BinaryOp::Power,
        BinaryOp::Maximum,
        BinaryOp::Minimum,
        BinaryOp::Equal,
        BinaryOp::NotEqual,
        BinaryOp::Less,
        BinaryOp::LessEqual,
        BinaryOp::Greater,
        BinaryOp::GreaterEqual,
        BinaryOp::LogicalAnd,
        BinaryOp::LogicalOr,
    ];

    /// The op's name in the JS API, used in error messages.
    pub fn name(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Add => "add",
            Subtract => "subtract",
            Multiply => "multiply",
            Divide => "divide",
            Power => "power",
            Maximum => "maximum",
            Minimum => "minimum",
            Equal => "equal",
            NotEqual => "notEqual",
            Less => "less",
            LessEqual => "lessEqual",
            Greater => "greater",
            GreaterEqual => "greaterEqual",
            LogicalAnd => "logicalAnd",
            LogicalOr => "logicalOr",
        }
    }

    /// Whether the result is a `bool` whatever the operands.
    pub fn is_predicate(self) -> bool {
        use BinaryOp::*;
        matches!(
            self,
            Equal | NotEqual | Less | LessEqual | Greater | GreaterEqual | LogicalAnd | LogicalOr
        )
    }

    /// Whether the op orders or equates its operands.
    pub fn is_comparison(self) -> bool {
        self.is_predicate() && !matches!(self, BinaryOp::LogicalAnd | BinaryOp::LogicalOr)
    }

    /// Whether a comparison of these operands must compare their exact values rather than
    /// convert them: an int32 against a uint32 (MLX compares them as int64).
    pub fn compares_mixed_signs(self, lhs: DType, rhs: DType) -> bool {
        let mixed = matches!(
            (lhs, rhs),
            (DType::Int32, DType::Uint32) | (DType::Uint32, DType::Int32)
        );
        self.is_comparison() && mixed
    }

    /// The dtype both operands are converted to before the op: the promoted dtype, except that
    /// `divide` of integers is true division in `float32` and logical ops work on `bool`.
    pub fn compute_dtype(self, promoted: DType) -> DType {
        match self {
            BinaryOp::Divide => DType::Float32,
            BinaryOp::LogicalAnd | BinaryOp::LogicalOr => DType::Bool,
            _ => promoted,
        }
    }

    /// The dtype of the result for operands that promote to `promoted`.
    pub fn out_dtype(self, promoted: DType) -> DType {
        if self.is_predicate() {
            DType::Bool
        } else {
            self.compute_dtype(promoted)
        }
    }
}

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

    /// The result dtype: indices are `uint32`; sums and products of bools count in `int32`.
    pub fn out_dtype(self, dtype: DType) -> DType {
        match (self, dtype) {
            (ReduceOp::ArgMax | ReduceOp::ArgMin, _) => DType::Uint32,
            (ReduceOp::Sum | ReduceOp::Prod, DType::Bool) => DType::Int32,
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
    /// Counter-based random numbers under a key; no inputs.
    Random([u32; 2], Distribution),
    /// A creation op's values; no inputs.
    Fill(Fill),
    View(View),
    /// A chain of elementwise ops run as one kernel (see [`FusedExpr`]); made by fusion, never
    /// by an op builder.
    Fused(Rc<FusedExpr>),
}

impl Primitive {
    /// The op's name, as profiles and memory snapshots report it.
    pub fn name(&self) -> &'static str {
        match self {
            Primitive::Unary(op) => op.name(),
            Primitive::Binary(op) => op.name(),
            Primitive::Where => "where",
            Primitive::Reduce(op, _) => op.name(),
            Primitive::RowNorm(op, _) => op.name(),
            Primitive::Matmul => "matmul",
            Primitive::Concatenate(_) => "concatenate",
            Primitive::Random(_, Distribution::Uniform { .. }) => "randomUniform",
            Primitive::Random(_, _) => "randomNormal",
            Primitive::Fill(fill) => fill.name(),
            Primitive::View(View::Reshape) => "reshape",
            Primitive::View(View::Transpose(_)) => "transpose",
            Primitive::View(View::Broadcast) => "broadcastTo",
            Primitive::View(View::Slice { .. }) => "slice",
            Primitive::Fused(_) => "fused",
        }
    }
}
