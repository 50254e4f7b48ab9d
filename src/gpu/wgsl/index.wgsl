// The index arithmetic every kernel shares; the pipeline cache puts it before every kernel's
// source, so no kernel defines it again.
//
// Grids are 2-D so that more than 65535 workgroups fit in one dispatch (`device/grid.rs` lays
// them out): a grid of `groups` workgroups, `width` threads each along x, counts its threads
// row after row.

// The index of thread `gid` (or, with `width` 1, of workgroup `gid`) in its grid.
fn grid_index(gid: vec3<u32>, groups: vec3<u32>, width: u32) -> u32 {
    return gid.y * groups.x * width + gid.x;
}

// The index of thread `gid` in a grid of 256-thread workgroups.
fn thread_index(gid: vec3<u32>, groups: vec3<u32>) -> u32 {
    return grid_index(gid, groups, 256u);
}
