// The scatter along an axis of putAlongAxis and scatterAdd: each update lands at
// out[placement(i) + position(indices[...]) * stride], every dtype as its word. The output
// already holds a copy of x (written by copy_into first).
//
// Prepended by the host: elementwise.wgsl, positions.wgsl (the index rule), a header defining
// `alias Index = i32|u32;`, and the output's binding 3 with `fn land(slot, value)`: a write
// (scatter_write.wgsl) or a float32 addition (scatter_add.wgsl).
// The dispatch runs over the updates' shape. Operand 0 of `dims` reads the values, operand 1
// the indices, and the third slot places each update in the output with stride 0 on the
// scattered axis; dims.extra.x is the axis's extent (at least 1) and dims.extra.y the
// output's stride on it. Bindings: 0 dims (uniform), 1 values (read), 2 indices (read),
// 3 out (read_write). Workgroup: 256 threads, one update each.

@group(0) @binding(1) var<storage, read> values: array<u32>;
@group(0) @binding(2) var<storage, read> indices: array<Index>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = thread_index(gid, groups);
    if (index >= dims.len) {
        return;
    }
    let at = operand_offsets(index);
    let p = POSITION(indices[at.y], dims.extra.x);
    land(u32(at.z + p * i32(dims.extra.y)), values[at.x]);
}
