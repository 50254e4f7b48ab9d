// Strided copy into part of a larger output: out[placement(i)] = convert(x[...]), used by
// concatenate to write each input into its slab of the result.
//
// Prepended by the host: elementwise.wgsl and a header defining
//   alias In = ...; alias Out = ...; fn op(x: In) -> Out { ... }
// Operand 0 of `dims` is the input; operand 1 gives the output's offset and strides over the
// input's shape. Bindings: 0 dims (uniform), 1 x (read), 2 out (read_write).
// Workgroup: 256 threads, one element each.

@group(0) @binding(1) var<storage, read> x: array<In>;
@group(0) @binding(2) var<storage, read_write> out: array<Out>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = thread_index(gid, groups);
    if (index >= dims.len) {
        return;
    }
    let at = operand_offsets(index);
    out[at.y] = op(x[at.x]);
}
