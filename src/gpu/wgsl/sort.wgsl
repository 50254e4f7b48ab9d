// Sorting rows: a bitonic network over (key, index) pairs, each row padded to a power of two.
// Comparing the pair, not the key alone, makes the order the stable one; keys are the values'
// bits mapped so that unsigned order is the value order (NaN above +inf, -0 equal to +0), and
// padding sorts after everything.
//
// Prepended by the host: a header defining `alias In = f32|i32|u32;` and `fn key(x: In) -> u32`.
// Entry points, one dispatch each, one thread per padded element:
//   pairs: x (binding 1) -> pairs (binding 2);
//   step: one compare-exchange stage (k, j) of the network, in place on pairs (binding 1);
//   values / indices: pairs (binding 1) and x (binding 2) -> out (binding 3): the first n of
//     each row, ascending or, with `descending`, from the end.

struct Params {
    rows: u32,
    n: u32,
    // The padded row length, a power of two.
    padded: u32,
    k: u32,
    j: u32,
    x_offset: u32,
    descending: u32,
    // How many of each row's sorted elements to write.
    keep: u32,
}

@group(0) @binding(0) var<uniform> params: Params;

fn thread(gid: vec3<u32>, groups: vec3<u32>) -> u32 {
    return gid.x + gid.y * groups.x * 256u;
}
