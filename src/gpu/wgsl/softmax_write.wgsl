// The last pass of a softmax over few long rows (row_norm.wgsl precedes this file): each
// element becomes exp(x - m) / sum with its row's (m, sum) pair, or NaN when m is not finite.
// Bindings: 2 the rows' pairs (read), 3 out (read_write). A thread per element.

@group(0) @binding(2) var<storage, read> stats: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(256)
fn softmax_write(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = thread_index(gid, groups);
    if (i >= params.rows * params.row_len) {
        return;
    }
    let row = i / params.row_len;
    let m = stats[2u * row];
    if (!is_finite(m)) {
        out[i] = nan_f32();
        return;
    }
    out[i] = exp_best(load_x(params.offset + i) - m) / stats[2u * row + 1u];
}
