// Elementwise binary op over two broadcast, strided operands.
//
// The host prepends a header that defines the types and the op (gpu/ops/binary.rs):
//   alias Lhs = ...; alias Rhs = ...; alias Out = ...;
//   fn op(a: Lhs, b: Rhs) -> Out { ... }
// Bindings: 0 lhs (read), 1 rhs (read), 2 out (read_write), 3 dims (uniform).
// Workgroup: 256 threads, one output element each. The grid is 2-D so that more than
// 65535 workgroups fit in one dispatch; threads past `len` return at once.

struct Dims {
    len: u32,
    rank: u32,
    lhs_offset: u32,
    rhs_offset: u32,
    // Up to 8 dimensions, innermost last; vec4 because uniform arrays have a 16-byte stride.
    shape: array<vec4<u32>, 2>,
    lhs_strides: array<vec4<i32>, 2>,
    rhs_strides: array<vec4<i32>, 2>,
}

@group(0) @binding(0) var<storage, read> lhs: array<Lhs>;
@group(0) @binding(1) var<storage, read> rhs: array<Rhs>;
@group(0) @binding(2) var<storage, read_write> out: array<Out>;
@group(0) @binding(3) var<uniform> dims: Dims;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = gid.y * groups.x * 256u + gid.x;
    if (index >= dims.len) {
        return;
    }
    var rest = index;
    var a = i32(dims.lhs_offset);
    var b = i32(dims.rhs_offset);
    for (var d = i32(dims.rank) - 1; d >= 0; d--) {
        let extent = dims.shape[d / 4][d % 4];
        let i = i32(rest % extent);
        rest = rest / extent;
        a += i * dims.lhs_strides[d / 4][d % 4];
        b += i * dims.rhs_strides[d / 4][d % 4];
    }
    out[index] = op(lhs[a], rhs[b]);
}
