// Prepended to every kernel whose op converts between dtypes (see `elementwise::convert`).

// Float to integer conversions with the CPU's (Rust `as`) rules: truncate toward zero,
// saturate at the type's range, and NaN to 0. WGSL leaves out-of-range conversions undefined.
fn f32_to_i32(x: f32) -> i32 {
    if ((bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u) { return 0; }
    if (x >= 2147483648.0) { return 2147483647; }
    if (x <= -2147483648.0) { return -2147483647 - 1; }
    return i32(x);
}

fn f32_to_u32(x: f32) -> u32 {
    if (((bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u) | (x <= 0.0)) { return 0u; }
    if (x >= 4294967296.0) { return 4294967295u; }
    return u32(x);
}
