// Batched matmul with a register tile per thread and no workgroup memory:
// out[b] = a[b] (M x K) * b[b] (K x N), float32.
//
// Bindings: 0 params (uniform), 1 a (read), 2 b (read), 3 out (read_write). The host
// declares a and b with `fn load_a(i)` and `fn load_b(i)`, which widen a packed operand
// (`gpu/matmul.rs`).
// Matrices are row-major; each operand's batch stride is its matrix size, or 0 when it is
// broadcast across the batch. Workgroup: 64 threads. Each thread computes an 8 x 4 block of
// out; blocks are numbered row by row and threads across the x * y workgroups of a batch take
// them in order, so skinny products (N = 4) keep every thread busy. Grid: (x, y, batch).
//
// Workgroup barriers are expensive on software adapters such as SwiftShader, where this kernel
// beats the workgroup-memory one in matmul.wgsl (start-up's matmul tuning measures both; its
// choice is in `RuntimeInfo`).

struct Params {
    m: u32,
    n: u32,
    k: u32,
    a_offset: u32,
    b_offset: u32,
    a_batch_stride: u32,
    b_batch_stride: u32,
    groups_x: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

const ROWS: u32 = 8u;
const COLS: u32 = 4u;

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) t: u32,
) {
    let blocks_n = (params.n + COLS - 1u) / COLS;
    let block = (wg.y * params.groups_x + wg.x) * 64u + t;
    let row0 = (block / blocks_n) * ROWS;
    let col0 = (block % blocks_n) * COLS;
    if (row0 >= params.m) {
        return;
    }
    let a_base = params.a_offset + wg.z * params.a_batch_stride;
    let b_base = params.b_offset + wg.z * params.b_batch_stride;
    // Rows and columns past an edge read the last valid one; their results are not stored.
    var a_rows: array<u32, 8>;
    for (var i = 0u; i < ROWS; i++) {
        a_rows[i] = a_base + min(row0 + i, params.m - 1u) * params.k;
    }
    let b_cols = vec4<u32>(
        b_base + min(col0, params.n - 1u),
        b_base + min(col0 + 1u, params.n - 1u),
        b_base + min(col0 + 2u, params.n - 1u),
        b_base + min(col0 + 3u, params.n - 1u),
    );
    var acc: array<vec4<f32>, 8>;
    for (var kk = 0u; kk < params.k; kk++) {
        let row = kk * params.n;
        let bv = vec4<f32>(load_b(b_cols.x + row), load_b(b_cols.y + row), load_b(b_cols.z + row), load_b(b_cols.w + row));
        for (var i = 0u; i < ROWS; i++) {
            acc[i] = fma(vec4<f32>(load_a(a_rows[i] + kk)), bv, acc[i]);
        }
    }
    let out_base = wg.z * params.m * params.n;
    for (var i = 0u; i < ROWS; i++) {
        let r = row0 + i;
        for (var j = 0u; j < COLS; j++) {
            let c = col0 + j;
            if (r < params.m && c < params.n) {
                out[out_base + r * params.n + c] = acc[i][j];
            }
        }
    }
}
