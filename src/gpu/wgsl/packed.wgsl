// Four elements of a packed dtype at a time, for the vec4 kernels (elementwise, fused,
// matmul): a load widens exactly (as the CPU's `dtype::packed::widen`), a store rounds once
// with half.wgsl's rules (prepended before this file). A vec4 of float16 or bfloat16 is a
// vec2<u32>, of int8 or uint8 one u32; element 0 is in the low bits.

// A float16's bits as a float32: exact, and NaN quieted as the CPU quiets it. No branch: a
// subnormal is renormalized by one exact subtraction of normal float32s, which no adapter
// flushes.
fn f16_value(h: u32) -> f32 {
    let o = (h & 0x7fffu) << 13u;
    let e = o & 0x0f800000u;
    let normal = o + 0x38000000u;
    let special = 0x7f800000u | o | select(0u, 0x00400000u, o > 0x0f800000u);
    let small = bitcast<u32>(bitcast<f32>(normal + 0x00800000u) - 6.103515625e-05);
    let m = select(select(normal, special, e == 0x0f800000u), small, e == 0u);
    return bitcast<f32>(m | ((h & 0x8000u) << 16u));
}

fn f16x4(w: vec2<u32>) -> vec4<f32> {
    return vec4<f32>(
        f16_value(w.x & 0xffffu), f16_value(w.x >> 16u),
        f16_value(w.y & 0xffffu), f16_value(w.y >> 16u),
    );
}

fn bf16x4(w: vec2<u32>) -> vec4<f32> {
    return bitcast<vec4<f32>>(vec4<u32>(w.x << 16u, w.x & 0xffff0000u, w.y << 16u, w.y & 0xffff0000u));
}

fn i8x4(w: u32) -> vec4<i32> {
    return bitcast<vec4<i32>>(vec4<u32>(w << 24u, w << 16u, w << 8u, w)) >> vec4<u32>(24u);
}

fn u8x4(w: u32) -> vec4<u32> {
    return (vec4<u32>(w) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(0xffu);
}

fn to_f16x4(v: vec4<f32>) -> vec2<u32> {
    let b = bitcast<vec4<u32>>(v);
    return vec2<u32>(
        f16_from_f32_bits(b.x) | (f16_from_f32_bits(b.y) << 16u),
        f16_from_f32_bits(b.z) | (f16_from_f32_bits(b.w) << 16u),
    );
}

fn to_bf16x4(v: vec4<f32>) -> vec2<u32> {
    let b = bitcast<vec4<u32>>(v);
    return vec2<u32>(
        bf16_from_f32_bits(b.x) | (bf16_from_f32_bits(b.y) << 16u),
        bf16_from_f32_bits(b.z) | (bf16_from_f32_bits(b.w) << 16u),
    );
}

fn to_u8x4(v: vec4<u32>) -> u32 {
    let b = v & vec4<u32>(0xffu);
    return b.x | (b.y << 8u) | (b.z << 16u) | (b.w << 24u);
}

fn to_i8x4(v: vec4<i32>) -> u32 {
    return to_u8x4(bitcast<vec4<u32>>(v));
}
