// Shared prelude of the elementwise kernels (unary, binary, where).
//
// Binding 0 is the `Dims` uniform: the output's element count and shape (up to 8 axes after
// collapsing), and each operand's offset and strides over that shape. A thread finds its
// operands' elements by peeling its output index into coordinates, innermost axis first.
// Workgroup: 256 threads, one output element each (unary, binary and where: a run of RUN
// consecutive elements each); the grid is 2-D so that more than 65535 workgroups fit in one
// dispatch.

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

// The host puts before this prelude, unrolled for the dispatch's axes with constant indices
// (`elementwise.rs`'s `axes_functions`): `operand_offsets(index) -> vec3<i32>`, the element
// offset of each of (up to) three operands for output element `index` (below `dims.len`);
// `inner_extent() -> u32`, the innermost axis's extent; and `inner_strides() -> vec3<i32>`,
// the operands' strides along it.

// Output elements per thread of the kernels that walk runs of the output (unary, binary,
// where: `elementwise.rs`'s `dispatch`): a thread peels its first element's index into
// coordinates and steps the operands along the innermost axis for the rest, so that the
// divisions are paid once per run rather than per element.
const RUN: u32 = 8u;

// Where a thread's walk stands: the operands' offsets, the innermost coordinate, that axis's
// extent and the operands' strides along it.
struct Walk {
    at: vec3<i32>,
    column: u32,
    columns: u32,
    step: vec3<i32>,
}

// The walk at output element `index`.
fn walk_from(index: u32) -> Walk {
    let columns = inner_extent();
    let column = index - (index / columns) * columns;
    return Walk(operand_offsets(index), column, columns, inner_strides());
}

// The walk one element on from `index`, where `walk` stands.
fn walk_next(walk: Walk, index: u32) -> Walk {
    if (walk.column + 1u < walk.columns) {
        return Walk(walk.at + walk.step, walk.column + 1u, walk.columns, walk.step);
    }
    return walk_from(index + 1u);
}
