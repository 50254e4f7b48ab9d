//! The WGSL of unary ops (`wgsl/unary.wgsl`): the header that defines `op` per op and dtype.

use crate::dtype::DType;
use crate::gpu::device::pipelines::KernelKey;
use crate::gpu::elementwise::Family;
use crate::gpu::elementwise::{convert, strided_source, wgsl_type};
use crate::graph::primitive::UnaryOp;

const KERNEL: &str = include_str!("wgsl/unary.wgsl");

pub const FAMILY: Family = Family {
    strided_kernel: KERNEL,
    vec4_kernel: "unary_vec4",
    inputs: &["In"],
    function: "op",
};

/// The pipeline key of `op` from `input` to `out`.
pub fn key(op: UnaryOp, input: DType, out: DType) -> KernelKey {
    KernelKey::new("unary", op.name(), &[input, out])
}

/// The strided kernel's full source.
pub fn source(op: UnaryOp, input: DType, out: DType) -> String {
    strided_source(&header(op, input, out), KERNEL)
}

/// The aliases `In` and `Out` and `fn op(x_in: In) -> Out`.
pub fn header(op: UnaryOp, input: DType, out: DType) -> String {
    format!(
        "alias In = {};\nalias Out = {};\n{}",
        wgsl_type(input),
        wgsl_type(out),
        function("op", op, input, out)
    )
}

/// `fn {name}(x_in) -> out` computing `op` (fused kernels call several, by name).
pub fn function(name: &str, op: UnaryOp, input: DType, out: DType) -> String {
    let compute = op.compute_dtype(out);
    let result = if op.is_float_test() {
        expression(op, compute).to_string()
    } else {
        convert(expression(op, compute), compute, out)
    };
    format!(
        "fn {name}(x_in: {}) -> {} {{\n    let x = {};\n    return {result};\n}}\n",
        wgsl_type(input),
        wgsl_type(out),
        convert("x_in", input, compute),
    )
}

/// `op(x)` for `x` of the compute dtype. Op builders reject the pairs that fall through.
fn expression(op: UnaryOp, compute: DType) -> &'static str {
    use UnaryOp::*;
    match (compute, op) {
        (_, Cast) => "x",
        (DType::Float32, _) => float_expression(op),
        (DType::Int32, Abs) => "abs(x)",
        (DType::Int32, Neg) => "-x",
        (DType::Int32, Sign) => "sign(x)",
        (DType::Int32, Relu) => "max(x, 0i)",
        (DType::Uint32, Neg) => "0u - x",
        (DType::Uint32, Sign) => "select(0u, 1u, x > 0u)",
        (DType::Int32 | DType::Uint32, Square) => "x * x",
        (DType::Bool, LogicalNot) => "x ^ 1u",
        // abs of unsigned, relu of unsigned, and rounding of integers and bools keep x.
        _ => "x",
    }
}

fn float_expression(op: UnaryOp) -> &'static str {
    use UnaryOp::*;
    match op {
        Abs => "abs(x)",
        Neg => "-x",
        // Through integers: MLX's sign is +0 for both zeros and for NaN.
        Sign => "f32(i32(x > 0.0) - i32(x < 0.0))",
        Square => "x * x",
        Sqrt => "sqrt(x)",
        Rsqrt => "inverseSqrt(x)",
        Exp => "exp_best(x)",
        Expm1 => "expm1_acc(x)",
        Log => "log_acc(x)",
        Log1p => "log1p_acc(x)",
        Sin => "sin_acc(x)",
        Cos => "cos_acc(x)",
        Tan => "tan_acc(x)",
        Tanh => "tanh_acc(x)",
        Sigmoid => "sigmoid_acc(x)",
        Relu => "select(select(0.0, x, x > 0.0), x, is_nan(x))",
        Gelu => "gelu_acc(x)",
        Erf => "erf_acc(x)",
        Floor => "floor(x)",
        Ceil => "ceil(x)",
        Round => "round(x)",
        Reciprocal => "1.0 / x",
        // The class tests give the bool word directly.
        IsNan => "select(0u, 1u, is_nan(x))",
        IsInf => "select(0u, 1u, is_inf(x))",
        IsFinite => "select(1u, 0u, is_nan(x) | is_inf(x))",
        Log2 => "log2_acc(x)",
        Log10 => "log10_acc(x)",
        Sinh => "sinh_acc(x)",
        Cosh => "cosh_acc(x)",
        Arcsin => "asin_acc(x)",
        Arccos => "acos_acc(x)",
        Arctan => "atan_acc(x)",
        Arcsinh => "asinh_acc(x)",
        Arccosh => "acosh_acc(x)",
        Arctanh => "atanh_acc(x)",
        Erfinv => "erfinv_acc(x)",
        LogicalNot | Cast => "x",
    }
}
