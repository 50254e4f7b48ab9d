// Creation ops on the GPU, one vec4 of the output per thread: `fill` writes one word
// everywhere; `eye` writes `word` on the diagonal of an n x n matrix and 0 elsewhere. The
// last vec4 may run into the buffer's padding (buffers are whole multiples of 256 bytes),
// which no one reads.
// Bindings: 0 params (uniform), 1 out (read_write). Workgroup: 256 threads.

struct Params {
    // Output length in vec4s.
    len4: u32,
    word: u32,
    // `eye`: the matrix's side.
    n: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> out: array<vec4<u32>>;

@compute @workgroup_size(256)
fn fill(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let v = thread_index(gid, groups);
    if (v < params.len4) {
        out[v] = vec4<u32>(params.word);
    }
}

@compute @workgroup_size(256)
fn eye(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let v = thread_index(gid, groups);
    if (v >= params.len4) {
        return;
    }
    let i = 4u * v + vec4<u32>(0u, 1u, 2u, 3u);
    let diagonal = i % (params.n + 1u) == vec4<u32>(0u);
    out[v] = select(vec4<u32>(0u), vec4<u32>(params.word), diagonal);
}
