// Batched matmul with a register tile per thread, vec4 loads and no workgroup memory, for
// operands whose rows are whole vec4s: out[b] = a[b] (M x K) * b[b] (K x N), float32, with
// K, N, the offsets and the batch strides all multiples of 4.
//
// Prepended by the host: `const TM: u32` (output rows per thread) and `const TN4: u32`
// (output vec4 columns per thread): 8 and 2 give the 8 x 8 tile; a skinny product (N = 4)
// takes 8 and 1.
// Bindings: 0 params (uniform), 1 a, 2 b (read, as vec4s), 3 out (read_write, as vec4s).
// Every size and offset in the params counts vec4s except m. Workgroup: 64 threads; tiles
// are numbered row by row and the threads of the x * y workgroups of a batch take them in
// order. Grid: (x, y, batch). Each step of the k loop loads a vec4 of each of the TM rows of a
// (four k at once) and four rows of TN4 vec4s of b, and makes 4 * TM * TN4 vec4 `fma`s.
//
// Barriers are expensive on software adapters (PERFORMANCE.md: SwiftShader), so the tile
// lives in registers and every thread reads its operands straight from memory.

struct Params {
    m: u32,
    n4: u32,
    k4: u32,
    a_offset: u32,
    b_offset: u32,
    a_batch_stride: u32,
    b_batch_stride: u32,
    groups_x: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4<f32>>;

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
    // Rows and columns past an edge read the last valid one; their results are not stored.
    var a_rows: array<u32, TM>;
    for (var i = 0u; i < TM; i++) {
        a_rows[i] = a_base + min(row0 + i, params.m - 1u) * params.k4;
    }
    var b_cols: array<u32, TN4>;
    for (var j = 0u; j < TN4; j++) {
        b_cols[j] = b_base + min(col0 + j, params.n4 - 1u);
    }
    var acc: array<vec4<f32>, TM * TN4>;
    for (var kk = 0u; kk < params.k4; kk++) {
        var bv: array<vec4<f32>, 4u * TN4>;
        for (var r = 0u; r < 4u; r++) {
            let row = (4u * kk + r) * params.n4;
            for (var j = 0u; j < TN4; j++) {
                bv[r * TN4 + j] = b[b_cols[j] + row];
            }
        }
        for (var i = 0u; i < TM; i++) {
            let av = a[a_rows[i] + kk];
            for (var j = 0u; j < TN4; j++) {
                var sum = acc[i * TN4 + j];
                sum = fma(vec4<f32>(av.x), bv[j], sum);
                sum = fma(vec4<f32>(av.y), bv[TN4 + j], sum);
                sum = fma(vec4<f32>(av.z), bv[2u * TN4 + j], sum);
                sum = fma(vec4<f32>(av.w), bv[3u * TN4 + j], sum);
                acc[i * TN4 + j] = sum;
            }
        }
    }
    let out_base = wg.z * params.m * params.n4;
    for (var i = 0u; i < TM; i++) {
        let r = row0 + i;
        for (var j = 0u; j < TN4; j++) {
            let c = col0 + j;
            if (r < params.m && c < params.n4) {
                out[out_base + r * params.n4 + c] = acc[i * TN4 + j];
            }
        }
    }
}
