// Batched matmul with a register tile per thread, vec4 loads and no workgroup memory, for
// operands whose rows are whole vec4s: out[b] = a[b] (M x K) * b[b] (K x N), float32, with
// K, N, the offsets, the batch strides and the row strides all multiples of 4.
//
// Prepended by the host: `const TM: u32` (output rows per thread) and `const TN4: u32`
// (output vec4 columns per thread): 8 and 2 give the 8 x 8 tile; a skinny product (N = 4)
// takes 8 and 1. The host also writes the unrolled lines at the `//{...}` markers.
// Bindings: 0 params (uniform), 1 a, 2 b (read), 3 out (read_write), declared by the host
// with `fn load_a4(i)` and `fn load_b4(i)` (vec4 i, widened from a packed dtype) and
// `fn store(i, value)` (rounding to a packed output): a float16 operand is read as
// vec2<u32>s and never copied to float32.
// Every size and offset in the params counts vec4s except m. Workgroup: 64 threads; tiles
// are numbered row by row and the threads of the x * y workgroups of a batch take them in
// order. Grid: (x, y, batch). Each step of the k loop loads a vec4 of each of the TM rows of a
// (four k at once) and four rows of TN4 vec4s of b, and makes 4 * TM * TN4 vec4 `fma`s.
//
// Barriers are expensive on software adapters such as SwiftShader, so the tile lives in
// registers and every thread reads its operands straight from memory.

struct Params {
    m: u32,
    n4: u32,
    k4: u32,
    a_offset: u32,
    b_offset: u32,
    a_batch_stride: u32,
    b_batch_stride: u32,
    groups_x: u32,
    // Row strides (in vec4s): a column slice of a wider matrix is read in place.
    lda4: u32,
    ldb4: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> params: Params;

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) t: u32,
) {
    let tiles_n = (params.n4 + TN4 - 1u) / TN4;
    let tile = (wg.y * params.groups_x + wg.x) * 64u + t;
    let row0 = (tile / tiles_n) * TM;
    let col0 = (tile % tiles_n) * TN4;
    if (row0 >= params.m) {
        return;
    }
    let a_base = params.a_offset + wg.z * params.a_batch_stride;
    let b_base = params.b_offset + wg.z * params.b_batch_stride;
    // The host unrolls the tile into named registers (arrays indexed in loops may live in
    // memory on some compilers): `a{i}` is row i's start, `b{j}` column j's, `acc{i}_{j}` a sum.
    // Rows and columns past an edge read the last valid one; their results are not stored.
    //{DECLARE}
    for (var kk = 0u; kk < params.k4; kk++) {
        let kb = 4u * kk * params.ldb4;
        //{STEP}
    }
    let out_base = wg.z * params.m * params.n4;
    //{STORE}
}
