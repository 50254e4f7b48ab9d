//! Workgroup grids: how many workgroups a dispatch of so many threads takes, within the
//! adapter's limit per dimension.

/// Threads per workgroup of the elementwise kernels.
pub const WORKGROUP_SIZE: u32 = 256;

/// The workgroup grid for `threads` one-element threads: x is capped at the per-dimension limit
/// and y takes the rest.
pub fn grid_for(threads: usize, max_per_dimension: u32) -> (u32, u32) {
    grid_of(threads, WORKGROUP_SIZE, max_per_dimension)
}

/// [`grid_for`] with workgroups of `workgroup` threads.
pub fn grid_of(threads: usize, workgroup: u32, max_per_dimension: u32) -> (u32, u32) {
    let groups = threads.div_ceil(workgroup as usize).max(1) as u64;
    let x = groups.min(max_per_dimension as u64);
    let y = groups.div_ceil(x);
    (x as u32, y as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_covers_every_thread_within_limits() {
        assert_eq!(grid_for(1, 65535), (1, 1));
        assert_eq!(grid_for(256 * 65535, 65535), (65535, 1));
        let (x, y) = grid_for(256 * 65535 + 1, 65535);
        assert_eq!((x, y), (65535, 2));
        assert!(x as usize * y as usize * 256 > 256 * 65535);
        assert_eq!(grid_of(65, 64, 65535), (2, 1));
        assert_eq!(grid_of(256 * 65536, 256, 65535), (65535, 2));
    }
}
