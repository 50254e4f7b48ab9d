// The scatter of putAlongAxis: out[placement(i) + position(indices[...]) * stride] = values[...],
// every dtype as its word. The output already holds a copy of x (written by copy_into first).
//
// Prepended by the host: elementwise.wgsl, positions.wgsl (the index rule) and a header
// defining `alias Index = i32|u32;`.
// The dispatch runs over the updates' shape. Operand 0 of `dims` reads the values, operand 1
// the indices, and the third slot places each update in the output with stride 0 on the
// scattered axis; dims.extra.x is the axis's extent (at least 1) and dims.extra.y the
// output's stride on it. Bindings: 0 dims (uniform), 1 values (read), 2 indices (read),
// 3 out (read_write). Workgroup: 256 threads, one update each. Of two updates to one element,
// one lands (which is unspecified, as on every GPU scatter without atomics).

@group(0) @binding(1) var<storage, read> values: array<u32>;
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
    out[at.z + p * i32(dims.extra.y)] = values[at.x];
}
