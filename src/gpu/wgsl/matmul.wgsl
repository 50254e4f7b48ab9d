// Batched matmul, tiled in workgroup memory: out[b] = a[b] (M x K) * b[b] (K x N), float32.
//
// Bindings: 0 params (uniform), 1 a (read), 2 b (read), 3 out (read_write). The host
// declares a and b with `fn load_a(i)` and `fn load_b(i)`, which widen a packed operand
// (`gpu/matmul.rs`).
// Matrices are row-major; each operand's batch stride is its matrix size, or 0 when it is
// broadcast across the batch. Workgroup: 16 x 16 threads computing a 64 x 64 tile of out,
// each thread a 4 x 4 block; K advances 16 at a time through two tiles in workgroup memory.
// Shapes need not be multiples of the tile: loads past an edge read 0 and stores past one
// are skipped. Grid: (ceil(N / 64), ceil(M / 64), batch).

struct Params {
    m: u32,
    n: u32,
    k: u32,
    a_offset: u32,
    b_offset: u32,
    a_batch_stride: u32,
    b_batch_stride: u32,
    pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

const TILE: u32 = 64u;
const DEPTH: u32 = 16u;

var<workgroup> tile_a: array<f32, 1024>; // TILE rows x DEPTH columns
var<workgroup> tile_b: array<f32, 1024>; // DEPTH rows x TILE columns

@compute @workgroup_size(16, 16)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(local_invocation_index) t: u32,
) {
    let row0 = wg.y * TILE;
    let col0 = wg.x * TILE;
    let a_base = params.a_offset + wg.z * params.a_batch_stride;
    let b_base = params.b_offset + wg.z * params.b_batch_stride;
    var acc: array<f32, 16>;
    for (var k0 = 0u; k0 < params.k; k0 += DEPTH) {
        for (var i = 0u; i < 4u; i++) {
            let e = t + i * 256u;
            let r = row0 + e / DEPTH;
            let ka = k0 + e % DEPTH;
            var va = 0.0;
            if (r < params.m && ka < params.k) {
                va = load_a(a_base + r * params.k + ka);
            }
            tile_a[e] = va;
            let kb = k0 + e / TILE;
            let c = col0 + e % TILE;
            var vb = 0.0;
            if (kb < params.k && c < params.n) {
                vb = load_b(b_base + kb * params.n + c);
            }
            tile_b[e] = vb;
        }
        workgroupBarrier();
        for (var kk = 0u; kk < DEPTH; kk++) {
            var bs: array<f32, 4>;
            for (var j = 0u; j < 4u; j++) {
                bs[j] = tile_b[kk * TILE + lid.x * 4u + j];
            }
            for (var i = 0u; i < 4u; i++) {
                let av = tile_a[(lid.y * 4u + i) * DEPTH + kk];
                for (var j = 0u; j < 4u; j++) {
                    acc[i * 4u + j] = fma(av, bs[j], acc[i * 4u + j]);
                }
            }
        }
        workgroupBarrier();
    }
    let out_base = wg.z * params.m * params.n;
    for (var i = 0u; i < 4u; i++) {
        let r = row0 + lid.y * 4u + i;
        for (var j = 0u; j < 4u; j++) {
            let c = col0 + lid.x * 4u + j;
            if (r < params.m && c < params.n) {
                out[out_base + r * params.n + c] = acc[i * 4u + j];
            }
        }
    }
}
