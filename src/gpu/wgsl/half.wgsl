// The packed floats' bits, converted exactly as the CPU's `dtype::packed` converts them (the
// `half` crate's rules): float16 and bfloat16 round to nearest, ties to even; overflow gives
// infinity; NaN keeps its sign and top mantissa bits, with the quiet bit set. All on bits,
// never through float arithmetic, so no adapter's flushing or rounding mode can change them
// (WGSL leaves `pack2x16float` of out-of-range values indeterminate).

fn f32_bits_from_f16(h: u32) -> u32 {
    let sign = (h & 0x8000u) << 16u;
    let exp = (h >> 10u) & 0x1fu;
    let man = h & 0x3ffu;
    if (exp == 0u) {
        // Zero or subnormal: man * 2^-24, which f32 holds exactly (as a normal number).
        return sign | bitcast<u32>(f32(man) * 5.9604644775390625e-8);
    }
    if (exp == 31u) {
        return sign | 0x7f800000u | (man << 13u);
    }
    return sign | ((exp + 112u) << 23u) | (man << 13u);
}

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
