// tn.fast.layerNorm and rmsNorm, one kernel for the whole norm, in one of two shapes:
// - `main`: one workgroup per row. The threads sum their strided elements, the workgroup adds
//   the partial sums in shared memory (the mean; then, over the same row still in cache, the
//   squared deviations), and each thread writes its elements scaled and shifted.
// - `rows`: one thread per row, no barriers. Software adapters run a workgroup's threads as
//   fibers and pay dearly for each barrier (a 128x768 layer norm took 98 ms of a transformer
//   block's 627 on SwiftShader), so there many rows go one to a thread.
//
// Bindings: 0 params (uniform), 1 x, 2 weight, 3 bias (read; x again where absent), 4 out.

struct Params {
    rows: u32,
    row_len: u32,
    x_offset: u32,
    weight_offset: u32,
    bias_offset: u32,
    // Bit 0: a weight; bit 1: a bias; bit 2: RMS (no mean).
    flags: u32,
    eps: f32,
    pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(2) var<storage, read> weight: array<f32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

const WORKGROUP: u32 = 256u;

var<workgroup> partial: array<f32, WORKGROUP>;

// The sum of every thread's `value`, in every thread.
fn workgroup_sum(t: u32, value: f32) -> f32 {
    partial[t] = value;
    workgroupBarrier();
    for (var half = WORKGROUP / 2u; half > 0u; half = half >> 1u) {
        if (t < half) {
            partial[t] = partial[t] + partial[t + half];
        }
        workgroupBarrier();
    }
    let total = partial[0];
    workgroupBarrier();
    return total;
}

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let row = wid.x + wid.y * groups.x;
    // Uniform across the workgroup: every thread meets the barriers or none does.
    if (row >= params.rows) {
        return;
    }
    let t = lid.x;
    let n = params.row_len;
    let base = params.x_offset + row * n;
    var mean = 0.0;
    if ((params.flags & 4u) == 0u) {
        var sum = 0.0;
        for (var i = t; i < n; i += WORKGROUP) {
            sum += load_x(base + i);
        }
        mean = workgroup_sum(t, sum) / f32(n);
    }
    var squares = 0.0;
    for (var i = t; i < n; i += WORKGROUP) {
        let d = load_x(base + i) - mean;
        squares += d * d;
    }
    let scale = 1.0 / sqrt(workgroup_sum(t, squares) / f32(n) + params.eps);
    let has_weight = (params.flags & 1u) != 0u;
    let has_bias = (params.flags & 2u) != 0u;
    for (var i = t; i < n; i += WORKGROUP) {
        var y = (load_x(base + i) - mean) * scale;
        if (has_weight) {
            y = y * weight[params.weight_offset + i];
        }
        if (has_bias) {
            y = y + bias[params.bias_offset + i];
        }
        out[row * n + i] = y;
    }
}

// The row's element i, scaled and shifted.
fn normed(row: u32, i: u32, mean: f32, scale: f32) -> f32 {
    var y = (load_x(params.x_offset + row * params.row_len + i) - mean) * scale;
    if ((params.flags & 1u) != 0u) {
        y = y * weight[params.weight_offset + i];
    }
    if ((params.flags & 2u) != 0u) {
        y = y + bias[params.bias_offset + i];
    }
    return y;
}

const ROW_THREADS: u32 = 16u;

@compute @workgroup_size(ROW_THREADS)
fn rows(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let row = gid.x + gid.y * groups.x * ROW_THREADS;
    if (row >= params.rows) {
        return;
    }
    let n = params.row_len;
    let base = params.x_offset + row * n;
    var mean = 0.0;
    if ((params.flags & 4u) == 0u) {
        var sum = 0.0;
        for (var i = 0u; i < n; i++) {
            sum += load_x(base + i);
        }
        mean = sum / f32(n);
    }
    var squares = 0.0;
    for (var i = 0u; i < n; i++) {
        let d = load_x(base + i) - mean;
        squares += d * d;
    }
    let scale = 1.0 / sqrt(squares / f32(n) + params.eps);
    for (var i = 0u; i < n; i++) {
        out[row * n + i] = normed(row, i, mean, scale);
    }
}
