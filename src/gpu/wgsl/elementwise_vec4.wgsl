// The contiguous elementwise kernel: every operand is either dense over the output (read as
// `vec4`) or one scalar element, so no index is peeled into coordinates. Each thread computes
// ITEMS `vec4`s, a whole grid's width apart so that neighbouring threads touch neighbouring
// memory. The last `vec4` may run past the output's length into its buffer's padding (buffers
// are whole multiples of 256 bytes), which no one reads.
//
// Prepended by the host (`gpu/vectorized.rs`): the op's header, convert.wgsl, math.wgsl,
// the operands' and output's bindings, and `fn element4(v: u32) -> vec4<Out>`, which loads
// `vec4` v of each operand and applies the op to each lane, and `fn store`, which writes (and
// for a packed output rounds) it.
// Bindings: 0 params (uniform), 1..=n the operands that are not words (read), n + 1 out.

// `params` (made with the source, one word per operand): the output's length in `vec4`s, then
// each operand's offset, in `vec4`s for a dense operand and in elements for a scalar; an
// operand passed as a word (a one-element array only on the host) has its bits there instead,
// and no binding.

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let threads = groups.x * groups.y * WORKGROUP;
    var v = grid_index(gid, groups, WORKGROUP);
    for (var k = 0u; k < ITEMS; k++) {
        if (v < params.len4) {
            store(v, element4(v));
        }
        v += threads;
    }
}
