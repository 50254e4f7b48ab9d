// The row entry points of row_norm.wgsl (which precedes this file): binding 2 is the output.

@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(256)
fn softmax_rows(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let row = thread_index(gid, groups);
    if (row >= params.rows) {
        return;
    }
    let base = params.offset + row * params.row_len;
    let at = row * params.row_len;
    let m = row_max(base);
    if (!is_finite(m)) {
        for (var j = 0u; j < params.row_len; j++) {
            out[at + j] = nan_f32();
        }
        return;
    }
    // One exp per element: exp is most of the cost on software adapters, so the shifted
    // exponentials are stored on the way to their sum and divided in place afterwards.
    var total = 0.0;
    for (var j = 0u; j < params.row_len; j++) {
        let e = exp_best(load_x(base + j) - m);
        out[at + j] = e;
        total += e;
    }
    for (var j = 0u; j < params.row_len; j++) {
        out[at + j] = out[at + j] / total;
    }
}

@compute @workgroup_size(256)
fn logsumexp_rows(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let row = thread_index(gid, groups);
    if (row >= params.rows) {
        return;
    }
    let base = params.offset + row * params.row_len;
    let m = row_max(base);
    if (!is_finite(m)) {
        out[row] = m;
        return;
    }
    out[row] = log_acc(row_total(base, m)) + m;
}

// Writes (max, sum) pairs: out[2 * (row * parts + p)] and the word after it.
@compute @workgroup_size(256)
fn stats_parts(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let slot = thread_index(gid, groups);
    let row = slot / params.parts;
    if (row >= params.rows) {
        return;
    }
    let base = params.offset + row * params.row_len;
    var stats = vec2<f32>(-inf_f32(), 0.0);
    for (var j = slot % params.parts; j < params.row_len; j += params.parts) {
        stats = fold_stats(stats, load_x(base + j));
    }
    out[2u * slot] = stats.x;
    out[2u * slot + 1u] = stats.y;
}

// Folds a row's `parts` pairs (x holds them, from offset 0) into its (m, sum).
fn merge(row: u32) -> vec2<f32> {
    var m = -inf_f32();
    for (var p = 0u; p < params.parts; p++) {
        m = max_or_nan(m, load_x(2u * (row * params.parts + p)));
    }
    if (!is_finite(m)) {
        return vec2<f32>(m, 0.0);
    }
    var total = 0.0;
    for (var p = 0u; p < params.parts; p++) {
        let at = 2u * (row * params.parts + p);
        total += load_x(at + 1u) * exp_best(load_x(at) - m);
    }
    return vec2<f32>(m, total);
}

@compute @workgroup_size(256)
fn softmax_merge(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let row = thread_index(gid, groups);
    if (row >= params.rows) {
        return;
    }
    let stats = merge(row);
    out[2u * row] = stats.x;
    out[2u * row + 1u] = stats.y;
}

@compute @workgroup_size(256)
fn logsumexp_merge(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let row = thread_index(gid, groups);
    if (row >= params.rows) {
        return;
    }
    let stats = merge(row);
    out[row] = select(stats.x, log_acc(stats.y) + stats.x, is_finite(stats.x));
}
