//! The elementwise op families: what each op is called, which dtypes it reads, computes in
//! and returns.

use crate::dtype::DType;

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
    IsNan,
    IsInf,
    IsFinite,
    Log2,
    Log10,
    Sinh,
    Cosh,
    Arcsin,
    Arccos,
    Arctan,
    Arcsinh,
    Arccosh,
    Arctanh,
    Erfinv,
    /// Converts to the node's dtype (`astype`), or copies when the dtype is the same; the copy
    /// also makes strided views contiguous.
    Cast,
}

impl UnaryOp {
    /// Every unary op of the JS API, in the API's order (`Cast` is `astype`).
    pub const ALL: [UnaryOp; 37] = [
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
        UnaryOp::IsNan,
        UnaryOp::IsInf,
        UnaryOp::IsFinite,
        UnaryOp::Log2,
        UnaryOp::Log10,
        UnaryOp::Sinh,
        UnaryOp::Cosh,
        UnaryOp::Arcsin,
        UnaryOp::Arccos,
        UnaryOp::Arctan,
        UnaryOp::Arcsinh,
        UnaryOp::Arccosh,
        UnaryOp::Arctanh,
        UnaryOp::Erfinv,
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
            IsNan => "isnan",
            IsInf => "isinf",
            IsFinite => "isfinite",
            Log2 => "log2",
            Log10 => "log10",
            Sinh => "sinh",
            Cosh => "cosh",
            Arcsin => "arcsin",
            Arccos => "arccos",
            Arctan => "arctan",
            Arcsinh => "arcsinh",
            Arccosh => "arccosh",
            Arctanh => "arctanh",
            Erfinv => "erfinv",
            Cast => "astype",
        }
    }

    /// Whether the op computes in floating point, so integer inputs become `float32` (float
    /// inputs keep their dtype, as in MLX: `sqrt` of `float16` is `float16`).
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
                | Log2
                | Log10
                | Sinh
                | Cosh
                | Arcsin
                | Arccos
                | Arctan
                | Arcsinh
                | Arccosh
                | Arctanh
                | Erfinv
        )
    }

    /// Whether the op tests a float's class (`isnan`, `isinf`, `isfinite`): it reads its
    /// input as `float32` (integers are never NaN or infinite) and gives `bool`.
    pub fn is_float_test(self) -> bool {
        matches!(self, UnaryOp::IsNan | UnaryOp::IsInf | UnaryOp::IsFinite)
    }

    /// The dtype the op computes in, for a result of dtype `out`.
    pub fn compute_dtype(self, out: DType) -> DType {
        match self {
            UnaryOp::LogicalNot => DType::Bool,
            op if op.is_float_test() => DType::Float32,
            _ => out,
        }
    }

    /// The dtype of `op(x)` for an input of `dtype` (`Cast` is decided by its caller). As in
    /// MLX, `relu` of bools is `maximum(x, 0)` and so counts in int32.
    pub fn out_dtype(self, dtype: DType) -> DType {
        match (self, dtype) {
            (UnaryOp::LogicalNot, _) => DType::Bool,
            (op, _) if op.is_float_test() => DType::Bool,
            (UnaryOp::Relu, DType::Bool) => DType::Int32,
            (op, d) if op.is_float_only() && !d.is_float() => DType::Float32,
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
    /// `log(exp(a) + exp(b))`, without overflow.
    LogAddExp,
    /// `floor(a / b)`; for integers `a // 0` is 0 (and `a % 0` is `a`), and `MIN // -1` wraps.
    FloorDivide,
    /// `a - b * floor(a / b)`: the sign of the divisor, as MLX (and Python) give it.
    Remainder,
    /// The angle of the point `(b, a)`: `arctan2(y, x)`.
    Arctan2,
}

impl BinaryOp {
    /// Every binary op of the JS API, in the API's order.
    pub const ALL: [BinaryOp; 19] = [
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
        BinaryOp::LogAddExp,
        BinaryOp::FloorDivide,
        BinaryOp::Remainder,
        BinaryOp::Arctan2,
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
            LogAddExp => "logaddexp",
            FloorDivide => "floorDivide",
            Remainder => "remainder",
            Arctan2 => "arctan2",
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
    /// `divide` of integers is true division in `float32` (a float type keeps its own) and
    /// logical ops work on `bool`.
    pub fn compute_dtype(self, promoted: DType) -> DType {
        match self {
            BinaryOp::Divide | BinaryOp::LogAddExp | BinaryOp::Arctan2 if !promoted.is_float() => {
                DType::Float32
            }
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
