@group(0) @binding(1) var<storage, read_write> pairs: array<vec2<u32>>;

// Whether pair a goes after pair b: by key, then by original index.
fn after(a: vec2<u32>, b: vec2<u32>) -> bool {
    return (a.x > b.x) | ((a.x == b.x) & (a.y > b.y));
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let t = thread(gid, groups);
    if (t >= params.rows * params.padded) {
        return;
    }
    let row = t / params.padded;
    let i = t % params.padded;
    let l = i ^ params.j;
    if (l <= i) {
        return;
    }
    let a = pairs[row * params.padded + i];
    let b = pairs[row * params.padded + l];
    let ascending = (i & params.k) == 0u;
    if (after(a, b) == ascending) {
        pairs[row * params.padded + i] = b;
        pairs[row * params.padded + l] = a;
    }
}
