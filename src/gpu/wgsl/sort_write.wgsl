@group(0) @binding(1) var<storage, read> pairs: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read> x: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let t = thread(gid, groups);
    if (t >= params.rows * params.keep) {
        return;
    }
    let row = t / params.keep;
    let i = t % params.keep;
    // Descending takes the row's sorted elements from its last real one backwards.
    let at = select(i, params.n - 1u - i, params.descending != 0u);
    let index = pairs[row * params.padded + at].y;
    out[t] = OUTPUT;
}
