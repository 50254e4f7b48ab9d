// Elementwise binary op: out[i] = op(lhs[...], rhs[...]) over broadcast, strided operands.
//
// Prepended by the host: elementwise.wgsl, math.wgsl, and a header defining
//   alias Lhs = ...; alias Rhs = ...; alias Out = ...; fn op(a: Lhs, b: Rhs) -> Out { ... }
// Bindings: 0 dims (uniform), 1 lhs (read), 2 rhs (read), 3 out (read_write).
// Workgroup: 256 threads, each a run of RUN consecutive output elements (elementwise.wgsl).

@group(0) @binding(1) var<storage, read> lhs: array<Lhs>;
@group(0) @binding(2) var<storage, read> rhs: array<Rhs>;
@group(0) @binding(3) var<storage, read_write> out: array<Out>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let first = thread_index(gid, groups) * RUN;
    var walk = walk_from(first);
    for (var index = first; index < min(first + RUN, dims.len); index++) {
        out[index] = op(lhs[walk.at.x], rhs[walk.at.y]);
        walk = walk_next(walk, index);
    }
}
