//! How kernels read and write the packed dtypes in place (`wgsl/half.wgsl`,
//! `wgsl/packed.wgsl`): the WGSL expressions that widen an element or a `vec4` of elements to
//! its compute dtype, and round a compute value back, with the CPU's rules
//! (`dtype::packed`). The `vec4` kernels (elementwise, fused, matmul) read and write four
//! elements as one `vec2<u32>` (16-bit floats) or one `u32` (bytes), so a thread always owns
//! whole words. Word dtypes pass through unchanged.

use crate::dtype::DType;
use crate::gpu::elementwise::wgsl_type;

/// The helpers' source: half.wgsl, then packed.wgsl.
pub const SOURCE: &str = concat!(
    include_str!("wgsl/half.wgsl"),
    "\n",
    include_str!("wgsl/packed.wgsl")
);

/// `SOURCE` where any of `dtypes` is packed or `code` (a fused program's header, which may
/// round to a packed dtype between word dtypes) calls a helper, else nothing: kernels without
/// packed data compile as before.
pub fn source_for(dtypes: &[DType], code: &str) -> &'static str {
    let calls = ["f16_value(", "_from_f32_bits("];
    if dtypes.iter().any(|d| d.is_packed()) || calls.iter().any(|c| code.contains(c)) {
        SOURCE
    } else {
        ""
    }
}

/// The WGSL type of a `vec4` of `dtype` in storage.
pub fn storage4(dtype: DType) -> String {
    match dtype {
        DType::Float16 | DType::BFloat16 => "vec2<u32>".into(),
        DType::Int8 | DType::Uint8 => "u32".into(),
        _ => format!("vec4<{}>", wgsl_type(dtype)),
    }
}

/// `stored`, a `vec4` of `dtype` read from storage, as a `vec4` of its compute type.
pub fn widen4(dtype: DType, stored: &str) -> String {
    match dtype {
        DType::Float16 => format!("f16x4({stored})"),
        DType::BFloat16 => format!("bf16x4({stored})"),
        DType::Int8 => format!("i8x4({stored})"),
        DType::Uint8 => format!("u8x4({stored})"),
        _ => stored.to_string(),
    }
}

/// `value`, a `vec4` of `dtype`'s compute type, rounded to `dtype` for storage.
pub fn narrow4(dtype: DType, value: &str) -> String {
    match dtype {
        DType::Float16 => format!("to_f16x4({value})"),
        DType::BFloat16 => format!("to_bf16x4({value})"),
        DType::Int8 => format!("to_i8x4({value})"),
        DType::Uint8 => format!("to_u8x4({value})"),
        _ => value.to_string(),
    }
}

/// Element `index` of `array` (a `u32` array for a packed dtype), as its compute type.
pub fn element(dtype: DType, array: &str, index: &str) -> String {
    let half =
        |shift: &str| format!("({array}[({index}) >> 1u] >> ((({index}) & 1u) * 16u){shift})");
    match dtype {
        DType::Float16 => format!("f16_value({} & 0xffffu)", half("")),
        DType::BFloat16 => format!("bitcast<f32>(({} & 0xffffu) << 16u)", half("")),
        DType::Int8 => format!(
            "(bitcast<i32>({array}[({index}) >> 2u] << ((3u - (({index}) & 3u)) * 8u)) >> 24u)"
        ),
        DType::Uint8 => format!("(({array}[({index}) >> 2u] >> ((({index}) & 3u) * 8u)) & 0xffu)"),
        _ => format!("{array}[{index}]"),
    }
}

/// A read-only input `name` of `dtype` at `binding` and `fn load_{name}(i)`, element i as its
/// compute type: kernels that read elements one at a time (norms, softmax) read a packed
/// input in place this way.
pub fn input_text(name: &str, binding: u32, dtype: DType) -> String {
    let stored = if dtype.is_packed() {
        "u32"
    } else {
        wgsl_type(dtype)
    };
    format!(
        "@group(0) @binding({binding}) var<storage, read> {name}: array<{stored}>;\n\
         fn load_{name}(i: u32) -> {} {{ return {}; }}\n",
        wgsl_type(dtype.compute()),
        element(dtype, name, "i")
    )
}

/// `value`, of `dtype`'s compute type, rounded to `dtype` and widened back: the value a store
/// and a load would give, for a cast inside a fused program.
pub fn round_trip(dtype: DType, value: &str) -> String {
    match dtype {
        DType::Float16 => format!("f16_value(f16_from_f32_bits(bitcast<u32>({value})))"),
        DType::BFloat16 => {
            format!("bitcast<f32>(bf16_from_f32_bits(bitcast<u32>({value})) << 16u)")
        }
        DType::Int8 => format!("(({value}) << 24u) >> 24u"),
        DType::Uint8 => format!("(({value}) & 0xffu)"),
        _ => value.to_string(),
    }
}
