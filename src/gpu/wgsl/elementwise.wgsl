// Shared prelude of the elementwise kernels (unary, binary, where).
//
// Binding 0 is the `Dims` uniform: the output's element count and shape (up to 8 axes after
// collapsing), and each operand's offset and strides over that shape. A thread finds its
// operands' elements by peeling its output index into coordinates, innermost axis first.
// Workgroup: 256 threads, one output element each; the grid is 2-D so that more than
// 65535 workgroups fit in one dispatch.

struct Dims {
    len: u32,
    rank: u32,
    offsets: vec3<u32>,
    // Up to 8 axes, innermost last; vec4 because uniform arrays have a 16-byte stride.
    shape: array<vec4<u32>, 2>,
    // Operand k's stride on axis d is strides[2 * k + d / 4][d % 4].
    strides: array<vec4<i32>, 6>,
    // A kernel's own parameters (the gather: the axis's extent and the input's stride on it).
    extra: vec4<u32>,
}

@group(0) @binding(0) var<uniform> dims: Dims;

// The element offset of each of (up to) three operands for output element `index`.
fn operand_offsets(index: u32) -> vec3<i32> {
    var rest = index;
    var at = vec3<i32>(dims.offsets);
    for (var d = i32(dims.rank) - 1; d >= 0; d--) {
        let extent = dims.shape[d / 4][d % 4];
        let i = i32(rest % extent);
        rest = rest / extent;
        let q = d / 4;
        let r = d % 4;
        at += i * vec3<i32>(dims.strides[q][r], dims.strides[2 + q][r], dims.strides[4 + q][r]);
    }
    return at;
}
