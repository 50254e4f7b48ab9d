//! The WGSL of binary ops (`wgsl/binary.wgsl`): the header that defines `op` per op and
//! dtypes.

use crate::dtype::DType;
use crate::gpu::device::pipelines::KernelKey;
use crate::gpu::elementwise::Family;
use crate::gpu::elementwise::{convert, strided_source, wgsl_type};
use crate::graph::primitive::BinaryOp;

const KERNEL: &str = include_str!("wgsl/binary.wgsl");

pub const FAMILY: Family = Family {
    strided_kernel: KERNEL,
    vec4_kernel: "binary_vec4",
    inputs: &["Lhs", "Rhs"],
    function: "op",
};

/// The pipeline key of `op` on operands of `lhs` and `rhs` promoting to `promoted`.
pub fn key(op: BinaryOp, lhs: DType, rhs: DType, promoted: DType) -> KernelKey {
    KernelKey::new("binary", op.name(), &[lhs, rhs, promoted])
}

/// The strided kernel's full source.
pub fn source(op: BinaryOp, lhs: DType, rhs: DType, promoted: DType) -> String {
    strided_source(&header(op, lhs, rhs, promoted), KERNEL)
}

/// The aliases `Lhs`, `Rhs` and `Out` and `fn op(a_in: Lhs, b_in: Rhs) -> Out`.
pub fn header(op: BinaryOp, lhs: DType, rhs: DType, promoted: DType) -> String {
    let out = if op.compares_mixed_signs(lhs, rhs) {
        DType::Bool
    } else {
        op.out_dtype(promoted)
    };
    format!(
        "alias Lhs = {};\nalias Rhs = {};\nalias Out = {};\n{}",
        wgsl_type(lhs),
        wgsl_type(rhs),
        wgsl_type(out),
        function("op", op, lhs, rhs, promoted)
    )
}

/// `fn {name}(a_in, b_in) -> out` computing `op` (fused kernels call several, by name).
pub fn function(name: &str, op: BinaryOp, lhs: DType, rhs: DType, promoted: DType) -> String {
    let (a, b, value, out) = if op.compares_mixed_signs(lhs, rhs) {
        let (a, b, value) = mixed_sign_parts(op, lhs, rhs);
        (a, b, value, DType::Bool)
    } else {
        let compute = op.compute_dtype(promoted);
        (
            convert("a_in", lhs, compute),
            convert("b_in", rhs, compute),
            expression(op, compute),
            op.out_dtype(promoted),
        )
    };
    format!(
        "fn {name}(a_in: {}, b_in: {}) -> {} {{\n    let a = {a};\n    let b = {b};\n    return {value};\n}}\n",
        wgsl_type(lhs),
        wgsl_type(rhs),
        wgsl_type(out),
    )
}

/// An int32 compared with a uint32 by value: each becomes the key (is non-negative, bits), and
/// keys order lexicographically as the values do. Returns both keys and the test.
fn mixed_sign_parts(op: BinaryOp, lhs: DType, rhs: DType) -> (String, String, String) {
    let key = |expr: &str, dtype: DType| match dtype {
        DType::Int32 => format!("vec2<u32>(select(0u, 1u, {expr} >= 0i), bitcast<u32>({expr}))"),
        _ => format!("vec2<u32>(1u, {expr})"),
    };
    let test = match op {
        BinaryOp::Equal => "all(a == b)",
        BinaryOp::NotEqual => "any(a != b)",
        BinaryOp::Less => "(a.x < b.x) | ((a.x == b.x) & (a.y < b.y))",
        BinaryOp::LessEqual => "(a.x < b.x) | ((a.x == b.x) & (a.y <= b.y))",
        BinaryOp::Greater => "(a.x > b.x) | ((a.x == b.x) & (a.y > b.y))",
        _ => "(a.x > b.x) | ((a.x == b.x) & (a.y >= b.y))",
    };
    (key("a_in", lhs), key("b_in", rhs), predicate(test))
}

/// `op(a, b)` for operands of the compute dtype, as the output type.
fn expression(op: BinaryOp, compute: DType) -> String {
    use BinaryOp::*;
    let value = match (op, compute) {
        (Equal | NotEqual | Less | LessEqual | Greater | GreaterEqual, DType::Float32) => {
            return float_predicate(op);
        }
        (Equal, _) => return predicate("a == b"),
        (NotEqual, _) => return predicate("a != b"),
        (Less, _) => return predicate("a < b"),
        (LessEqual, _) => return predicate("a <= b"),
        (Greater, _) => return predicate("a > b"),
        (GreaterEqual, _) => return predicate("a >= b"),
        (LogicalAnd, _) => return "a & b".into(),
        (LogicalOr, _) => return "a | b".into(),
        (Add, _) => "a + b",
        (Subtract, _) => "a - b",
        (Multiply, _) => "a * b",
        (Divide, _) => "a / b",
        (Power, DType::Float32) => "pow_acc(a, b)",
        (Power, DType::Int32) => "ipow_i32(a, b)",
        (Power, _) => "ipow_u32(a, b)",
        (Maximum, DType::Float32) => "max_or_nan(a, b)",
        (Minimum, DType::Float32) => "min_or_nan(a, b)",
        (Maximum, _) => "max(a, b)",
        (LogAddExp, _) => "logaddexp_acc(a, b)",
        (Arctan2, _) => "atan2_acc(a, b)",
        (FloorDivide, DType::Float32) => "floor(a / b)",
        (FloorDivide, DType::Int32) => "floor_div_i32(a, b)",
        (FloorDivide, _) => "floor_div_u32(a, b)",
        (Remainder, DType::Float32) => "remainder_f32(a, b)",
        (Remainder, DType::Int32) => "remainder_i32(a, b)",
        (Remainder, _) => "remainder_u32(a, b)",
        (Minimum, _) => "min(a, b)",
    };
    if compute == DType::Bool {
        // C's bool arithmetic: computed on 0/1, then tested for non-zero.
        format!("select(0u, 1u, ({value}) != 0u)")
    } else {
        value.into()
    }
}

/// IEEE comparisons with NaN made explicit: compilers may assume there is none, but every
/// comparison with NaN is false except `!=`.
fn float_predicate(op: BinaryOp) -> String {
    let test = match op {
        BinaryOp::Equal => "a == b",
        BinaryOp::NotEqual => return predicate("is_nan(a) | is_nan(b) | (a != b)"),
        BinaryOp::Less => "a < b",
        BinaryOp::LessEqual => "a <= b",
        BinaryOp::Greater => "a > b",
        _ => "a >= b",
    };
    predicate(&format!("!(is_nan(a) | is_nan(b)) & ({test})"))
}

fn predicate(test: &str) -> String {
    format!("select(0u, 1u, {test})")
}
