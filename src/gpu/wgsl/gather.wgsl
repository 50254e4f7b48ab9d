// The gather of take and takeAlongAxis: out[i] = x[base(i) + position(indices[...]) * stride],
// every dtype as its word.
//
// Prepended by the host: elementwise.wgsl, positions.wgsl (the index rule) and a header
// defining `alias Index = i32|u32;`.
// Operand 0 of `dims` reads x with stride 0 on the gathered axis, operand 1 the indices;
// dims.extra.x is the axis's extent (at least 1) and dims.extra.y x's stride on it (as i32).
// Bindings: 0 dims (uniform), 1 x (read), 2 indices (read), 3 out (read_write).
// Workgroup: 256 threads, one output element each.

@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read> indices: array<Index>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = thread_index(gid, groups);
    if (index >= dims.len) {
        return;
    }
    let at = operand_offsets(index);
    let p = POSITION(indices[at.y], dims.extra.x);
    out[index] = x[at.x + p * bitcast<i32>(dims.extra.y)];
}
