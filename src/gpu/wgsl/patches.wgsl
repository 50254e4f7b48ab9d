// The patches of a 2-D convolution's float32 input (im2col): out[n, y, x, tap, c] is the input
// at (y * stride - padding + i * dilation, x * stride - padding + j * dilation) for tap
// (i, j), or 0 outside the input, so the padding is never materialized.
//
// Bindings: 0 params (uniform), 1 x (read, row-major [N, H, W, C] from x_offset), 2 out.
// Workgroup: 256 threads, one output `Value` each (a 2-D grid of workgroups).
//
// `Value` is one channel, or four (`vec4<f32>`, which the host swaps in where the channels
// and the input's offset are whole vec4s; then c, len and x_offset count vec4s): a thread
// then does the index arithmetic once for four channels, which on a software adapter is
// most of the kernel's cost.
alias Value = f32;

struct Params {
    len: u32,
    x_offset: u32,
    h: u32,
    w: u32,
    c: u32,
    oh: u32,
    ow: u32,
    kw: u32,
    taps: u32,
    stride_y: u32,
    stride_x: u32,
    pad_y: u32,
    pad_x: u32,
    dilation_y: u32,
    dilation_x: u32,
    pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<Value>;
@group(0) @binding(2) var<storage, read_write> out: array<Value>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = thread_index(gid, groups);
    if (index >= params.len) {
        return;
    }
    let c = index % params.c;
    var rest = index / params.c;
    let tap = rest % params.taps;
    rest = rest / params.taps;
    let ox = rest % params.ow;
    rest = rest / params.ow;
    let oy = rest % params.oh;
    let image = rest / params.oh;
    // Signed: a tap in the padding lands before the input's start.
    let iy = i32(oy * params.stride_y + (tap / params.kw) * params.dilation_y) - i32(params.pad_y);
    let ix = i32(ox * params.stride_x + (tap % params.kw) * params.dilation_x) - i32(params.pad_x);
    var value = Value();
    if (iy >= 0 && iy < i32(params.h) && ix >= 0 && ix < i32(params.w)) {
        value = x[params.x_offset + ((image * params.h + u32(iy)) * params.w + u32(ix)) * params.c + c];
    }
    out[index] = value;
}
