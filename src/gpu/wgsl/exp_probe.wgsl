// The accuracy probe of an exp (startup/exp_probe.rs): one output per input. Prepended by the
// host: math.wgsl; appended: `fn probed(x: f32) -> f32`, the exp under test.
// Bindings: 0 inputs, 1 out. Workgroup: 64 threads.

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < arrayLength(&x)) {
        out[gid.x] = probed(x[gid.x]);
    }
}
