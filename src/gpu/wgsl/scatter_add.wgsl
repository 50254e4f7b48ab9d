// The scatter of scatterAdd (a gather's gradient): out[placement(i) + position(indices[...]) *
// stride] += values[...], float32. The output already holds a copy of x (written by
// copy_into first).
//
// Prepended by the host: elementwise.wgsl, positions.wgsl (the index rule) and a header
// defining `alias Index = i32|u32;`. Operands and dims as in scatter.wgsl. Bindings: 0 dims
// (uniform), 1 values (read), 2 indices (read), 3 out (read_write, as atomic words).
// Workgroup: 256 threads, one update each. Updates that land on one element are all added:
// WGSL has no float atomics, so each adds by a compare-exchange loop on the element's bits.
// The order of the additions is the hardware's, so sums of many may differ in the last bits
// from one run to the next (as on every GPU scatter-add).

@group(0) @binding(1) var<storage, read> values: array<u32>;
@group(0) @binding(2) var<storage, read> indices: array<Index>;
@group(0) @binding(3) var<storage, read_write> out: array<atomic<u32>>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = thread_index(gid, groups);
    if (index >= dims.len) {
        return;
    }
    let at = operand_offsets(index);
    let p = POSITION(indices[at.y], dims.extra.x);
    let slot = u32(at.z + p * i32(dims.extra.y));
    let value = bitcast<f32>(values[at.x]);
    var old = atomicLoad(&out[slot]);
    loop {
        let sum = bitcast<u32>(bitcast<f32>(old) + value);
        let swapped = atomicCompareExchangeWeak(&out[slot], old, sum);
        if (swapped.exchanged) {
            break;
        }
        old = swapped.old_value;
    }
}
