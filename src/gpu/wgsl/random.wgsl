// Random numbers from Philox-4x32-10, element i from counter (i, 0, 0, 0) under the key: the
// same numbers as cpu/random.rs. Uniform in [a, b), or normal with mean a and deviation b
// (Box-Muller).
//
// Prepended by the host: math.wgsl (mul_wide, log_acc, cos_acc).
// Bindings: 0 params (uniform), 1 out (read_write). Workgroup: 256 threads, one element each.

struct Params {
    key: vec2<u32>,
    len: u32,
    normal: u32,
    a: f32,
    b: f32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;

fn philox(key_in: vec2<u32>, counter: vec4<u32>) -> vec4<u32> {
    var c = counter;
    var k = key_in;
    for (var round = 0u; round < 10u; round++) {
        let p0 = mul_wide(0xD2511F53u, c.x);
        let p1 = mul_wide(0xCD9E8D57u, c.z);
        c = vec4<u32>(p1.y ^ c.y ^ k.x, p1.x, p0.y ^ c.w ^ k.y, p0.x);
        k = k + vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
    }
    return c;
}

fn unit(word: u32) -> f32 {
    return f32(word >> 8u) * (1.0 / 16777216.0);
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = thread_index(gid, groups);
    if (index >= params.len) {
        return;
    }
    let r = philox(params.key, vec4<u32>(index, 0u, 0u, 0u));
    if (params.normal == 0u) {
        out[index] = params.a + (params.b - params.a) * unit(r.x);
        return;
    }
    let radius = sqrt(-2.0 * log_acc(1.0 - unit(r.x)));
    let angle = 6.283185307179586 * unit(r.y);
    out[index] = params.a + params.b * radius * cos_acc(angle);
}
