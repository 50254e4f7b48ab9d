// where(cond, x, y): out[i] = cond ? x : y over broadcast, strided operands.
//
// Prepended by the host: elementwise.wgsl and a header defining
//   alias Cond = ...; alias X = ...; alias Y = ...; alias Out = ...;
//   fn pick(c: Cond, a: X, b: Y) -> Out { ... }
// Bindings: 0 dims (uniform), 1 cond, 2 x, 3 y (read), 4 out (read_write).
// Workgroup: 256 threads, each a run of RUN consecutive output elements (elementwise.wgsl).

@group(0) @binding(1) var<storage, read> cond: array<Cond>;
@group(0) @binding(2) var<storage, read> x: array<X>;
@group(0) @binding(3) var<storage, read> y: array<Y>;
@group(0) @binding(4) var<storage, read_write> out: array<Out>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let first = thread_index(gid, groups) * RUN;
    var walk = walk_from(first);
    for (var index = first; index < min(first + RUN, dims.len); index++) {
        out[index] = pick(cond[walk.at.x], x[walk.at.y], y[walk.at.z]);
        walk = walk_next(walk, index);
    }
}
