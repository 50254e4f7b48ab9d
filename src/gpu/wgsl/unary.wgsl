// Elementwise unary op: out[i] = op(x[...]) over a strided input.
//
// Prepended by the host: elementwise.wgsl, math.wgsl, and a header defining
//   alias In = ...; alias Out = ...; fn op(x: In) -> Out { ... }
// Bindings: 0 dims (uniform, see elementwise.wgsl), 1 x (read), 2 out (read_write).
// Workgroup: 256 threads, each a run of RUN consecutive output elements (elementwise.wgsl).

@group(0) @binding(1) var<storage, read> x: array<In>;
@group(0) @binding(2) var<storage, read_write> out: array<Out>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let first = thread_index(gid, groups) * RUN;
    var walk = walk_from(first);
    for (var index = first; index < min(first + RUN, dims.len); index++) {
        out[index] = op(x[walk.at.x]);
        walk = walk_next(walk, index);
    }
}
