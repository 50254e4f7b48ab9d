// A conversion between any two dtypes, packed or not, over a strided input: out = to(x).
//
// Prepended by the host: elementwise.wgsl, convert.wgsl, half.wgsl, and a header defining
//   const PER_WORD: u32 (output elements per word: 1, 2 or 4);
//   fn load(i: u32) -> u32 (element i of x, as the bits of its compute dtype's word);
//   fn element(bits: u32) -> u32 (those bits converted: the output element's bits).
// Bindings: 0 dims (uniform, see elementwise.wgsl), 1 x (read), 2 out (read_write).
// Workgroup: 256 threads, one output word each, so no two threads write one word.

@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let w = thread_index(gid, groups);
    let first = w * PER_WORD;
    if (first >= dims.len) {
        return;
    }
    var word = 0u;
    for (var j = 0u; j < PER_WORD; j++) {
        let index = first + j;
        if (index < dims.len) {
            let bits = element(load(u32(operand_offsets(index).x)));
            word |= bits << (j * (32u / PER_WORD));
        }
    }
    out[w] = word;
}
