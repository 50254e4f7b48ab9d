@group(0) @binding(1) var<storage, read> x: array<In>;
@group(0) @binding(2) var<storage, read_write> pairs: array<vec2<u32>>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let t = thread(gid, groups);
    if (t >= params.rows * params.padded) {
        return;
    }
    let row = t / params.padded;
    let i = t % params.padded;
    if (i < params.n) {
        pairs[t] = vec2<u32>(key(x[params.x_offset + row * params.n + i]), i);
    } else {
        pairs[t] = vec2<u32>(0xffffffffu, i);
    }
}
