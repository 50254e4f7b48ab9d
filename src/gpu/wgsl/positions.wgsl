// Where an index word lands on an axis of `extent` (at least 1), shared by the gather and
// the scatter: negative indices count from the end, the rest clamp to the axis, as MLX's
// kernels do. The host names one of them POSITION, by the indices' dtype.

fn position(i: i32, extent: u32) -> i32 {
    return clamp(select(i, i + i32(extent), i < 0), 0, i32(extent) - 1);
}

fn position_u(i: u32, extent: u32) -> i32 {
    return i32(min(i, extent - 1u));
}
