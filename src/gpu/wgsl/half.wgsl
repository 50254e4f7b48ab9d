// A float32's bits rounded to the packed floats' exactly as the CPU's `dtype::packed` rounds
// them (the `half` crate's rules): to nearest, ties to even; overflow gives infinity; NaN
// keeps its sign and top mantissa bits, with the quiet bit set. All on bits, never through
// float arithmetic, so no adapter's flushing or rounding mode can change them (WGSL leaves
// `pack2x16float` of out-of-range values indeterminate). Widening is in packed.wgsl.

fn f16_from_f32_bits(b: u32) -> u32 {
    let sign = (b >> 16u) & 0x8000u;
    let exp = b & 0x7f800000u;
    let man = b & 0x007fffffu;
    if (exp == 0x7f800000u) {
        return sign | 0x7c00u | select(0u, 0x0200u, man != 0u) | (man >> 13u);
    }
    let e = i32(exp >> 23u) - 112;
    if (e >= 31) {
        return sign | 0x7c00u;
    }
    if (e <= 0) {
        if (e < -10) {
            return sign;
        }
        let m = man | 0x00800000u;
        let shift = u32(14 - e);
        let round = 1u << (shift - 1u);
        let up = ((m & round) != 0u) && ((m & (3u * round - 1u)) != 0u);
        return sign | ((m >> shift) + select(0u, 1u, up));
    }
    let up = ((man & 0x1000u) != 0u) && ((man & 0x2fffu) != 0u);
    return sign | (((u32(e) << 10u) | (man >> 13u)) + select(0u, 1u, up));
}

fn bf16_from_f32_bits(b: u32) -> u32 {
    if ((b & 0x7fffffffu) > 0x7f800000u) {
        return (b >> 16u) | 0x0040u;
    }
    let up = ((b & 0x8000u) != 0u) && ((b & 0x17fffu) != 0u);
    return (b >> 16u) + select(0u, 1u, up);
}
