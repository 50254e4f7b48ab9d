// Softmax and logsumexp over contiguous float32 rows: `rows` rows of `row_len` elements from
// element `offset` of x. Every row is shifted by its maximum m; a row whose m is not finite
// gives NaN (softmax) or m (logsumexp), as the unfused ops do (primitive.rs, `RowNorm`).
//
// This file holds what the entry points share; row_norm_entries.wgsl and softmax_write.wgsl
// follow it, each with its own bindings. Prepended by the host: math.wgsl.
// Bindings: 0 params (uniform), 1 x (read), then the entry's other input and its output.
//
// Many rows: one thread per row, no barriers (`softmax_rows`, `logsumexp_rows`).
// Few long rows, in passes: `stats_parts` has `parts` threads per row, thread p reading
// elements p, p + parts, … and keeping a running (max, sum of exp(x - max)) that it rescales
// when the max grows; `*_merge` folds a row's partial pairs into its (m, sum); `softmax_write`
// writes exp(x - m) / sum, a thread per element.

struct Params {
    rows: u32,
    row_len: u32,
    parts: u32,
    offset: u32,
}

@group(0) @binding(0) var<uniform> params: Params;

fn is_finite(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7f800000u) != 0x7f800000u;
}

fn row_max(base: u32) -> f32 {
    var m = -inf_f32();
    for (var j = 0u; j < params.row_len; j++) {
        m = max_or_nan(m, load_x(base + j));
    }
    return m;
}

fn row_total(base: u32, m: f32) -> f32 {
    var total = 0.0;
    for (var j = 0u; j < params.row_len; j++) {
        total += exp_best(load_x(base + j) - m);
    }
    return total;
}

// A running (max, sum of exp(x - max)) with one more element folded in. -inf adds nothing;
// NaN sticks in the max.
fn fold_stats(stats: vec2<f32>, v: f32) -> vec2<f32> {
    let m = stats.x;
    if (is_nan(m) || is_nan(v)) {
        return vec2<f32>(nan_f32(), 0.0);
    }
    if (v == -inf_f32()) {
        return stats;
    }
    if (v > m) {
        return vec2<f32>(v, stats.y * exp_best(m - v) + 1.0);
    }
    return vec2<f32>(m, stats.y + exp_best(v - m));
}
