//! The WGSL of `where` (`wgsl/where.wgsl`).

use crate::dtype::DType;
use crate::gpu::device::pipelines::KernelKey;
use crate::gpu::elementwise::Family;
use crate::gpu::elementwise::{convert, strided_source, wgsl_type};

const KERNEL: &str = include_str!("wgsl/where.wgsl");

pub const FAMILY: Family = Family {
    strided_kernel: KERNEL,
    vec4_kernel: "where_vec4",
    inputs: &["Cond", "X", "Y"],
    function: "pick",
};

/// The pipeline key for operands of these dtypes and an output of `out`.
pub fn key(cond: DType, x: DType, y: DType, out: DType) -> KernelKey {
    KernelKey::new("where", "", &[cond, x, y, out])
}

/// The kernel's full source.
pub fn source(cond: DType, x: DType, y: DType, out: DType) -> String {
    strided_source(&header(cond, x, y, out), KERNEL)
}

/// The aliases `Cond`, `X`, `Y` and `Out` and `fn pick(c: Cond, a: X, b: Y) -> Out`.
pub fn header(cond: DType, x: DType, y: DType, out: DType) -> String {
    format!(
        "alias Cond = {};\nalias X = {};\nalias Y = {};\nalias Out = {};\n{}",
        wgsl_type(cond),
        wgsl_type(x),
        wgsl_type(y),
        wgsl_type(out),
        function("pick", cond, x, y, out)
    )
}

/// `fn {name}(c, a, b) -> out` choosing `a` where `c` is non-zero (fused kernels call it by
/// name).
pub fn function(name: &str, cond: DType, x: DType, y: DType, out: DType) -> String {
    format!(
        "fn {name}(c: {}, a: {}, b: {}) -> {} {{\n    return select({}, {}, {} != 0u);\n}}\n",
        wgsl_type(cond),
        wgsl_type(x),
        wgsl_type(y),
        wgsl_type(out),
        convert("b", y, out),
        convert("a", x, out),
        convert("c", cond, DType::Bool),
    )
}
