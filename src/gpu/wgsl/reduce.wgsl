// Reductions of contiguous rows: `rows` rows of `row_len` elements, row-major.
//
// Prepended by the host (gpu/reduce.rs):
//   alias In = ...; alias Acc = ...;            storage type of the input, and of the result
//   const IS_ARG: bool = ...;                   whether the result is the index of the winner
//   fn identity() -> Acc;                       the fold's starting value
//   fn load(x: In) -> Acc;                      an element as the accumulator type
//   fn combine(a: Acc, b: Acc) -> Acc;          value reductions
//   fn beats(b: Acc, a: Acc) -> bool;           arg reductions: whether b strictly beats a
// Bindings: 0 params (uniform), 1 x (read), 2 out (read_write): the bits of Acc values, or
// u32 indices for arg reductions (stored as words so no float path can touch them).
//
// The input is read as [rows, row_len, inner] from element `offset`, and each result folds
// the row_len elements of one (row, inner) pair; inner is 1 except for `main_columns`.
//
// `main`: workgroup (row, chunk) folds elements [chunk * chunk_len, (chunk + 1) * chunk_len)
// of its row into out[row * parts + chunk]: each of the 256 threads folds a strided slice,
// then the workgroup folds the 256 partials as a tree in workgroup memory. Used for arg
// reductions of few long rows, which must carry the winner's index through the fold.
// `main_rows`: one thread per row, no barriers (they are expensive on software adapters).
// `main_parts`: `parts` threads per row, thread p folding elements p, p + parts, … of its row
// into out[row * parts + p]: neighbouring threads read neighbouring elements and no thread
// waits for another. The host folds the partials in another pass.
// `main_columns`: one thread per (row, inner) pair, folding a column of a row-major block:
// neighbouring threads read neighbouring elements, and no copy moves the axis last.

struct Params {
    rows: u32,
    row_len: u32,
    inner: u32,
    // Partial results per row (`main`: chunks, `main_parts`: threads).
    parts: u32,
    offset: u32,
    // `main`: elements per chunk.
    chunk_len: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<In>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;

var<workgroup> values: array<Acc, 256>;
var<workgroup> indices: array<u32, 256>;

// Folds (b, j) into (a, i): for arg reductions the better value wins, ties to the lower index.
fn fold(a: Acc, i: u32, b: Acc, j: u32) -> Acc {
    if (IS_ARG) {
        return select(a, b, beats(b, a) || (!beats(a, b) && j < i));
    }
    return combine(a, b);
}

fn fold_index(a: Acc, i: u32, b: Acc, j: u32) -> u32 {
    return select(i, j, beats(b, a) || (!beats(a, b) && j < i));
}

fn result(value: Acc, index: u32) -> u32 {
    if (IS_ARG) {
        return index;
    }
    return bitcast<u32>(value);
}

@compute @workgroup_size(256)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) t: u32,
) {
    let slot = grid_index(wg, groups, 1u);
    let row = slot / params.parts;
    let chunk = slot % params.parts;
    // No early return: every thread must reach the barriers.
    let valid = row < params.rows;
    var acc = identity();
    var best = 0xffffffffu;
    if (valid) {
        let start = chunk * params.chunk_len;
        let end = min(start + params.chunk_len, params.row_len);
        let base = params.offset + row * params.row_len;
        for (var j = start + t; j < end; j += 256u) {
            let v = load(x[base + j]);
            let index = fold_index(acc, best, v, j);
            acc = fold(acc, best, v, j);
            best = index;
        }
    }
    values[t] = acc;
    indices[t] = best;
    workgroupBarrier();
    for (var s = 128u; s > 0u; s = s >> 1u) {
        if (t < s) {
            let a = values[t];
            let b = values[t + s];
            values[t] = fold(a, indices[t], b, indices[t + s]);
            indices[t] = fold_index(a, indices[t], b, indices[t + s]);
        }
        workgroupBarrier();
    }
    if (t == 0u && valid) {
        out[slot] = result(values[0], indices[0]);
    }
}

@compute @workgroup_size(256)
fn main_rows(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let row = thread_index(gid, groups);
    if (row >= params.rows) {
        return;
    }
    var acc = identity();
    var best = 0xffffffffu;
    let base = params.offset + row * params.row_len;
    for (var j = 0u; j < params.row_len; j++) {
        let v = load(x[base + j]);
        let index = fold_index(acc, best, v, j);
        acc = fold(acc, best, v, j);
        best = index;
    }
    out[row] = result(acc, best);
}

@compute @workgroup_size(256)
fn main_parts(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let slot = thread_index(gid, groups);
    let row = slot / params.parts;
    if (row >= params.rows) {
        return;
    }
    let part = slot % params.parts;
    var acc = identity();
    let base = params.offset + row * params.row_len;
    for (var j = part; j < params.row_len; j += params.parts) {
        acc = combine(acc, load(x[base + j]));
    }
    out[slot] = result(acc, 0u);
}

@compute @workgroup_size(256)
fn main_columns(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let slot = thread_index(gid, groups);
    let row = slot / params.inner;
    if (row >= params.rows) {
        return;
    }
    let column = slot % params.inner;
    var acc = identity();
    var best = 0xffffffffu;
    var at = params.offset + row * params.row_len * params.inner + column;
    for (var j = 0u; j < params.row_len; j++) {
        let v = load(x[at]);
        let index = fold_index(acc, best, v, j);
        acc = fold(acc, best, v, j);
        best = index;
        at += params.inner;
    }
    out[slot] = result(acc, best);
}
