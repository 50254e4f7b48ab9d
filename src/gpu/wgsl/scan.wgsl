// Running reductions along rows: one workgroup per slice of a row (the whole row, or for long
// rows among few a block of it), walking it in chunks of WORKGROUP * ITEMS elements. In a
// chunk each thread folds ITEMS neighbours serially, the workgroup scans the 256 thread totals
// in shared memory (Hillis-Steele, 8 steps), and a carry takes the chunk's total to the next
// chunk: O(n) combines, 256 threads a slice. A row cut into blocks takes three dispatches
// (gpu/scan.rs): each block's total alone (flag bit 2), an exclusive scan of the totals, then
// each block again from its scanned total as the first carry (flag bit 3).
//
// Prepended by the host: math.wgsl (max_or_nan, logaddexp_acc) and a header defining
//   alias In = ...; alias Acc = ...; fn load(x: In) -> Acc; fn identity() -> Acc;
//   fn combine(a: Acc, b: Acc) -> Acc;   // a is the earlier part of the row
// Bindings: 0 params (uniform), 1 x (read), 2 carries (read: each block's first carry with
// bit 3, else unread), 3 out (read_write: the scan, or each block's total with bit 2).

struct Params {
    rows: u32,
    row_len: u32,
    // Bit 0: reversed (from the row's end); bit 1: inclusive; bit 2: write each block's total
    // only; bit 3: start each block from its carry.
    flags: u32,
    offset: u32,
    // Elements per block (a multiple of WORKGROUP * ITEMS), and blocks per row.
    block_len: u32,
    blocks: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<In>;
@group(0) @binding(2) var<storage, read> carries: array<Acc>;
@group(0) @binding(3) var<storage, read_write> out: array<Acc>;

const WORKGROUP: u32 = 256u;
const ITEMS: u32 = 4u;

var<workgroup> totals: array<Acc, WORKGROUP>;

// Where the row's `step`th element (in scan order) is.
fn position(row: u32, step: u32) -> u32 {
    let i = select(step, params.row_len - 1u - step, (params.flags & 1u) != 0u);
    return row * params.row_len + i;
}

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let slice = wid.x + wid.y * groups.x;
    let row = slice / params.blocks;
    // Uniform across the workgroup, so every thread meets the barriers below or none does.
    if (row >= params.rows) {
        return;
    }
    let t = lid.x;
    let inclusive = (params.flags & 2u) != 0u;
    let totals_only = (params.flags & 4u) != 0u;
    let first = (slice % params.blocks) * params.block_len;
    let end = min(params.row_len, first + params.block_len);
    var carry = identity();
    if ((params.flags & 8u) != 0u) {
        carry = carries[slice];
    }
    for (var start = first; start < end; start += WORKGROUP * ITEMS) {
        var running: array<Acc, ITEMS>;
        var total = identity();
        for (var k = 0u; k < ITEMS; k++) {
            let step = start + t * ITEMS + k;
            var v = identity();
            if (step < end) {
                v = load(x[params.offset + position(row, step)]);
            }
            total = combine(total, v);
            running[k] = total;
        }
        totals[t] = total;
        workgroupBarrier();
        for (var reach = 1u; reach < WORKGROUP; reach = reach << 1u) {
            var earlier = identity();
            if (t >= reach) {
                earlier = totals[t - reach];
            }
            workgroupBarrier();
            totals[t] = combine(earlier, totals[t]);
            workgroupBarrier();
        }
        var before = carry;
        if (t > 0u) {
            before = combine(carry, totals[t - 1u]);
        }
        for (var k = 0u; k < ITEMS; k++) {
            let step = start + t * ITEMS + k;
            if (step < end && !totals_only) {
                var value = combine(before, running[k]);
                if (!inclusive) {
                    value = before;
                    if (k > 0u) {
                        value = combine(before, running[k - 1u]);
                    }
                }
                out[position(row, step)] = value;
            }
        }
        carry = combine(carry, totals[WORKGROUP - 1u]);
        workgroupBarrier();
    }
    if (totals_only && t == 0u) {
        out[slice] = carry;
    }
}
