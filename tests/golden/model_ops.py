"""Golden cases for the ops a model needs (the reference's "More ops" section), on the helpers
of make_golden.py, which calls `cases(g)` with itself as `g`. Same rules: MLX's CPU result,
checked against an independent NumPy reference in float64."""

import numpy as np
import mlx.core as mx


def nan_to_num_cases(g):
    x = g.f32([g.NAN, g.INF, -g.INF, 1.5, -0.0, 3.4e38, -1e-45])

    def ref(nan=0.0, posinf=None, neginf=None):
        big = np.finfo(np.float32).max
        return lambda a: np.nan_to_num(a, nan=nan, posinf=big if posinf is None else posinf,
                                       neginf=-big if neginf is None else neginf).astype(np.float32)
    g.add_case("nan_to_num_defaults_float32", "nanToNum", [x], {}, mx.nan_to_num, ref(), g.EXACT)
    params = {"nan": -1.0, "posinf": 100.0, "neginf": -200.0}
    g.add_case("nan_to_num_values_float32", "nanToNum", [x], params,
               lambda a: mx.nan_to_num(a, nan=-1.0, posinf=100.0, neginf=-200.0),
               ref(-1.0, 100.0, -200.0), g.EXACT)
    g.add_case("nan_to_num_rank3_float32", "nanToNum", [g.randn(7001, (2, 2, 3))], {"nan": 5.0},
               lambda a: mx.nan_to_num(a, nan=5.0), ref(5.0), g.EXACT)
    g.add_case("nan_to_num_int32", "nanToNum", [g.i32([1, -2, 2147483647])], {}, mx.nan_to_num,
               lambda a: a, g.EXACT)
    g.add_case("nan_to_num_empty_float32", "nanToNum", [np.zeros((0, 4), np.float32)], {},
               mx.nan_to_num, ref(), g.EXACT)


def spread_cases(g):
    x = g.randn(7100, (3, 4, 5))
    for op, mfn, npfn in (("var", mx.var, np.var), ("std", mx.std, np.std)):
        for axis, keepdims, ddof in ((None, False, 0), (1, True, 0), ([0, 2], False, 1), (-1, False, 5)):
            params = {"axis": axis, "keepdims": keepdims, "ddof": ddof}
            tag = "all" if axis is None else str(axis).replace(", ", "_").strip("[]").replace("-", "m")
            g.add_case(f"{op}_axis_{tag}_ddof{ddof}_float32", op, [x], params,
                       lambda a, mfn=mfn, axis=axis, keepdims=keepdims, ddof=ddof:
                       mfn(a, axis=axis, keepdims=keepdims, ddof=ddof),
                       lambda a, npfn=npfn, axis=axis, keepdims=keepdims, ddof=ddof: g.to_f32(
                           npfn(g.as_f64(a), axis=None if axis is None else tuple(np.atleast_1d(axis)),
                                keepdims=keepdims, ddof=ddof)), g.TRANS)
        g.add_case(f"{op}_int32", op, [g.i32([1, 2, 4, 8, -3, 100])], {}, mfn,
                   lambda a, npfn=npfn: g.to_f32(npfn(g.as_f64(a))), g.TRANS)
        g.add_case(f"{op}_scalar_float32", op, [g.f32(3.5, ())], {}, mfn,
                   lambda a, npfn=npfn: g.to_f32(npfn(g.as_f64(a))), g.TRANS)


def truth_cases(g):
    x = g.f32([[0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [g.NAN, -0.0, 2.0]])
    for op, mfn, npfn in (("any", mx.any, np.any), ("all", mx.all, np.all)):
        for axis, keepdims in ((None, False), (0, False), (1, True), (-1, False)):
            params = {"axis": axis, "keepdims": keepdims}
            tag = "all" if axis is None else str(axis).replace("-", "m")
            g.add_case(f"{op}_axis_{tag}_float32", op, [x], params,
                       lambda a, mfn=mfn, axis=axis, keepdims=keepdims: mfn(a, axis=axis, keepdims=keepdims),
                       lambda a, npfn=npfn, axis=axis, keepdims=keepdims: npfn(a, axis=axis, keepdims=keepdims),
                       g.EXACT)
        g.add_case(f"{op}_bool", op, [g.bools([[True, False], [True, True]])], {"axis": 1}, lambda a, mfn=mfn: mfn(a, axis=1),
                   lambda a, npfn=npfn: npfn(a, axis=1), g.EXACT)
        g.add_case(f"{op}_int32", op, [g.i32([0, -5, 7])], {}, mfn, lambda a, npfn=npfn: np.asarray(npfn(a)), g.EXACT)
        g.add_case(f"{op}_empty_axis_float32", op, [np.zeros((0, 3), np.float32)], {"axis": 0},
                   lambda a, mfn=mfn: mfn(a, axis=0), lambda a, npfn=npfn: npfn(a, axis=0), g.EXACT)
        g.add_case(f"{op}_empty_all_float32", op, [np.zeros((2, 0), np.float32)], {},
                   mfn, lambda a, npfn=npfn: np.asarray(npfn(a)), g.EXACT)


def triangle_cases(g):
    for op, mfn, npfn in (("tril", mx.tril, np.tril), ("triu", mx.triu, np.triu)):
        for k, shape, dtype in ((0, (4, 5), "f"), (1, (3, 3), "f"), (-2, (2, 4, 3), "f"), (9, (3, 2), "f"),
                                (-9, (3, 2), "f"), (0, (3, 3), "i"), (-1, (2, 2), "b"), (0, (0, 3), "f")):
            x = {"f": lambda: g.randn(7200 + k, shape), "i": lambda: g.randi(7300, shape),
                 "b": lambda: g.randb(7400, shape)}[dtype]()
            name = f"{op}_k{str(k).replace('-', 'm')}_{'x'.join(map(str, shape))}_{g.dtype_name(x)}"
            g.add_case(name, op, [x], {"k": k}, lambda a, mfn=mfn, k=k: mfn(a, k=k),
                       lambda a, npfn=npfn, k=k: npfn(a, k=k), g.EXACT)


def linear_cases(g):
    a, b = g.randn(7500, (3,)), g.randn(7501, (2, 2))
    g.add_case("outer_float32", "outer", [a, b], {}, mx.outer,
               lambda x, y: g.to_f32(np.outer(g.as_f64(x), g.as_f64(y))), g.TRANS)
    g.add_case("outer_int32", "outer", [g.i32([1, -2, 70000]), g.i32([3, 70000])], {}, mx.outer,
               lambda x, y: g.wrap(np.outer(g.as_i64(x), g.as_i64(y)), g.I32), g.EXACT)
    c, m, n = g.randn(7502, (4,)), g.randn(7503, (3, 5)), g.randn(7504, (5, 4))
    for alpha, beta in ((1.0, 1.0), (2.0, 0.5), (-1.0, 0.0)):
        g.add_case(f"addmm_a{alpha}_b{beta}_float32".replace(".", "p").replace("-", "m"), "addmm", [c, m, n],
                   {"alpha": alpha, "beta": beta},
                   lambda c_, x, y, alpha=alpha, beta=beta: mx.addmm(c_, x, y, alpha=alpha, beta=beta),
                   lambda c_, x, y, alpha=alpha, beta=beta: g.to_f32(
                       alpha * (g.as_f64(x) @ g.as_f64(y)) + beta * g.as_f64(c_)), g.MATMUL)


def cases(g):
    nan_to_num_cases(g)
    spread_cases(g)
    truth_cases(g)
    triangle_cases(g)
    linear_cases(g)
    take_cases(g)
    take_along_axis_cases(g)
    put_along_axis_cases(g)
    slice_update_cases(g)
    scan_cases(g)
    layer_norm_cases(g)
    rms_norm_cases(g)
    sort_cases(g)
    topk_cases(g)
    rope_cases(g)
    sdpa_cases(g)
    conv_cases(g)
    conv_transpose_cases(g)
    pad_cases(g)
    tile_cases(g)
    repeat_cases(g)
    roll_cases(g)
    diag_cases(g)
    diagonal_cases(g)
    tensordot_cases(g)
    einsum_cases(g)


# ----------------------------------------------------------------------------------------------
# Pending model ops: the Rust runner does not know these ops yet, so cases(g) does not call them.
# PENDING (at the end) maps a family key to its generator; check_pending(g) runs them all through
# g.add_case (MLX vs the NumPy reference), which fills g.CASES and writes no file. To ship a family
# once tandem has its ops, move its call into cases(g).
# Seeds: 8000 to 9540, a separate range per family (none reused).
# ----------------------------------------------------------------------------------------------

def _distinct_idx(g, seed, shape, axis, n, negative=True):
    """Indices of `shape` whose lines along `axis` hold distinct slots of an extent-n axis (some
    written as negative indices), so that a scatter along `axis` never writes one slot twice."""
    r = g.rng(seed)
    shape = list(shape)
    axis = axis % len(shape)
    k = shape[axis]
    moved = [s for i, s in enumerate(shape) if i != axis] + [k]
    out = np.empty(moved, np.int64)
    for pos in np.ndindex(*moved[:-1]):
        p = r.permutation(n)[:k]
        if negative:
            p = np.where(r.random(k) < 0.4, p - n, p)
        out[pos] = p
    out = np.moveaxis(out, -1, axis)
    return out.astype(np.int32) if negative else out.astype(np.uint32)


# ---- take ----------------------------------------------------------------------------------------
# MLX 0.32.4 (CPU) does not bounds-check: an out-of-range index reads whatever lies there (take of
# index 12 on a 12-element array gave 2.5e-43; index 5 on an axis of 4 read the next row), so no
# case has one. Negative indices count from the end, as in NumPy.

def take_cases(g):
    a34 = g.randn(8000, (3, 4))
    for name, a, idx, axis in [
        ("take_flat_float32", a34, g.i32([-1, 0, 5, -12, 11, 5]), None),
        ("take_axis0_float32", g.randn(8001, (4, 3)), g.i32([2, -1, 0, 0, 3]), 0),
        ("take_axis1_uint32_indices_float32", g.randn(8002, (3, 5)), g.u32([4, 0, 2, 2]), 1),
        ("take_axis_m1_2d_indices_float32", g.randn(8003, (2, 3, 4)), g.i32([[0, -1, 2], [3, 1, -4]]), -1),
        ("take_axis_m2_rank3_float32", g.randn(8004, (2, 3, 4)), g.i32([2, 0, -3, 1]), -2),
        ("take_embedding_rows_float32", g.randn(8005, (6, 4)), g.i32([[5, 0, 2], [2, 2, -6]]), 0),
        ("take_rank4_uint32_indices_float32", g.randn(8006, (2, 2, 3, 2)), g.u32([[2, 0], [1, 1]]), 2),
        ("take_scalar_index_axis0_float32", a34, g.i32(-2, ()), 0),
        ("take_scalar_index_axis1_float32", a34, g.i32(3, ()), 1),
        ("take_scalar_index_flat_float32", a34, g.u32(7, ()), None),
        ("take_from_scalar_float32", g.f32(2.5, ()), g.i32([0, 0, -1]), None),
        ("take_int32", g.randi(8007, (3, 4)), g.i32([-1, 1]), 1),
        ("take_uint32", g.randui(8008, (5,)), g.i32([4, -5, 2]), 0),
        ("take_bool", g.randb(8009, (2, 3)), g.u32([[0, 5], [3, 3]]), None),
        ("take_empty_indices_float32", a34, np.zeros((0,), np.int32), 1),
        ("take_empty_2d_indices_flat_float32", a34, np.zeros((2, 0), np.uint32), None),
        ("take_from_empty_float32", np.zeros((0, 3), np.float32), g.i32([0, 2, -1]), 1),
        ("take_empty_from_empty_float32", np.zeros((0,), np.float32), np.zeros((0,), np.int32), 0),
    ]:
        g.add_case(name, "take", [a, idx], {"axis": axis},
                   lambda x, i, axis=axis: mx.take(x, i) if axis is None else mx.take(x, i, axis=axis),
                   lambda x, i, axis=axis: np.asarray(np.take(x, g.as_i64(i), axis=axis)), g.EXACT)


# ---- takeAlongAxis -------------------------------------------------------------------------------
# Indices have the array's rank and broadcast with it except along the axis (MLX broadcasts both
# ways: a size-1 dimension of either one stretches). axis null: both flattened (1-D indices only:
# MLX rejects other ranks there).

def take_along_axis_cases(g):
    for name, a, idx, axis in [
        ("take_along_axis_axis1_float32", g.randn(8100, (3, 5)), g.i32([[0, -1], [4, 2], [1, 1]]), 1),
        ("take_along_axis_axis0_float32", g.randn(8101, (3, 4)), g.i32([[2, 0, 1, -1], [0, 0, 2, 1]]), 0),
        ("take_along_axis_axis_m1_rank3_float32", g.randn(8102, (2, 3, 4)), g.randi(8103, (2, 3, 6), -4, 4), -1),
        ("take_along_axis_argmax_style_float32", g.randn(8104, (3, 4)), g.i32([[3], [0], [-2]]), 1),
        ("take_along_axis_broadcast_indices_float32", g.randn(8105, (2, 4, 5)), g.randi(8106, (1, 4, 2), -5, 5), 2),
        ("take_along_axis_broadcast_array_float32", g.randn(8107, (1, 4)), g.i32([[0, 1], [2, 3], [-1, -1]]), 1),
        ("take_along_axis_rank4_axis2_float32", g.randn(8108, (2, 2, 3, 2)), g.randi(8109, (2, 2, 3, 2), -3, 3), 2),
        ("take_along_axis_1d_float32", g.randn(8110, (6,)), g.i32([5, -6, 0, 3]), 0),
        ("take_along_axis_flat_float32", g.randn(8111, (3, 4)), g.i32([0, -1, 5, 11, 5]), None),
        ("take_along_axis_uint32_indices_int32", g.randi(8112, (4, 3)), g.u32([[3, 0, 1], [1, 2, 2]]), 0),
        ("take_along_axis_uint32", g.randui(8113, (2, 5)), g.i32([[4, -5, 0], [1, 1, 1]]), -1),
        ("take_along_axis_bool", g.randb(8114, (3, 3)), g.u32([[2], [0], [1]]), 1),
        ("take_along_axis_empty_indices_float32", g.randn(8115, (3, 4)), np.zeros((3, 0), np.int32), 1),
        ("take_along_axis_empty_array_float32", np.zeros((0, 4), np.float32), np.zeros((0, 2), np.int32), 1),
    ]:
        def ref(x, i, axis=axis):
            if axis is None:
                return np.take_along_axis(x.reshape(-1), g.as_i64(i), axis=0)
            return np.take_along_axis(x, g.as_i64(i), axis=axis)
        g.add_case(name, "takeAlongAxis", [a, idx], {"axis": axis},
                   lambda x, i, axis=axis: mx.take_along_axis(x, i, axis=axis), ref, g.EXACT)


# ---- putAlongAxis --------------------------------------------------------------------------------
# Indices broadcast with the array except along the axis, values broadcast to the (broadcast)
# indices' shape; values have the array's dtype here (MLX would cast others to it). No line along
# the axis names one slot twice (the order of such writes is undefined).

def put_along_axis_cases(g):
    for name, a, idx, vals, axis in [
        ("put_along_axis_axis1_float32", g.randn(8200, (3, 4)), g.i32([[0], [3], [-1]]), g.randn(8201, (3, 1)), 1),
        ("put_along_axis_axis0_float32", g.randn(8202, (3, 4)), _distinct_idx(g, 8203, (2, 4), 0, 3),
         g.randn(8204, (2, 4)), 0),
        ("put_along_axis_scalar_value_float32", g.randn(8205, (3, 4)), g.i32([[1, 3], [0, -1], [2, 0]]),
         g.f32(7.5, ()), 1),
        ("put_along_axis_broadcast_indices_float32", g.randn(8206, (3, 4)), g.i32([[1, -1]]), g.randn(8207, (3, 2)), 1),
        ("put_along_axis_broadcast_values_float32", g.randn(8208, (2, 3, 4)), _distinct_idx(g, 8209, (2, 3, 2), -1, 4),
         g.randn(8210, (2, 1, 2)), -1),
        ("put_along_axis_rank3_axis_m2_float32", g.randn(8211, (2, 4, 3)), _distinct_idx(g, 8212, (2, 3, 3), -2, 4),
         g.randn(8213, (2, 3, 3)), -2),
        ("put_along_axis_rank4_float32", g.randn(8214, (2, 3, 2, 4)), _distinct_idx(g, 8215, (2, 3, 2, 2), 3, 4),
         g.randn(8216, (2, 3, 2, 2)), 3),
        ("put_along_axis_1d_float32", g.randn(8217, (6,)), _distinct_idx(g, 8218, (4,), 0, 6), g.randn(8219, (4,)), 0),
        ("put_along_axis_uint32_indices_int32", g.randi(8220, (3, 4)), _distinct_idx(g, 8221, (3, 2), 1, 4, False),
         g.randi(8222, (3, 2)), 1),
        ("put_along_axis_uint32", g.randui(8223, (4,)), g.i32([-1, 0]), g.randui(8224, (2,)), 0),
        ("put_along_axis_bool", g.randb(8225, (3, 3)), g.i32([[2], [0], [-2]]), g.bools([[True], [False], [True]]), 1),
        ("put_along_axis_empty_indices_float32", g.randn(8226, (3, 4)), np.zeros((3, 0), np.int32),
         np.zeros((3, 0), np.float32), 1),
        ("put_along_axis_empty_array_float32", np.zeros((0, 4), np.float32), np.zeros((0, 2), np.int32),
         np.zeros((0, 2), np.float32), 1),
    ]:
        def ref(x, i, v, axis=axis):
            r = x.copy()
            np.put_along_axis(r, g.as_i64(i), v, axis=axis)
            return r
        g.add_case(name, "putAlongAxis", [a, idx, vals], {"axis": axis},
                   lambda x, i, v, axis=axis: mx.put_along_axis(x, i, v, axis=axis), ref, g.EXACT)


# ---- sliceUpdate ---------------------------------------------------------------------------------
# MLX C++ slice semantics (as the slice cases: start/stop/strides per axis, clamped; negative
# strides walk backwards). MLX is driven through Python slice assignment (`b[sl] = update`), which
# maps 1:1 onto slice_update with strides; the update broadcasts to the slice's shape.

def slice_update_cases(g):
    a10 = np.arange(10, dtype=np.float32) * 1.5 - 3.0
    for n, (name, a, st, sp, sd, upd) in enumerate([
        ("slice_update_basic_float32", a10, [2], [7], [1], None),
        ("slice_update_stride2_float32", a10, [1], [10], [2], None),
        ("slice_update_negative_start_stop_float32", a10, [-4], [-1], [1], None),
        ("slice_update_clamped_stride3_float32", a10, [-100], [100], [3], None),
        ("slice_update_reverse_all_float32", a10, [-1], [-11], [-1], None),
        ("slice_update_reverse_stride2_float32", a10, [8], [1], [-2], None),
        ("slice_update_reverse_clamped_stride3_float32", a10, [100], [-100], [-3], None),
        ("slice_update_empty_slice_float32", a10, [7], [2], [1], None),
        ("slice_update_whole_float32", g.randn(8300, (2, 3)), [0, 0], [2, 3], [1, 1], None),
        ("slice_update_2d_int32", g.randi(8301, (3, 4)), [1, 0], [3, 4], [1, 2], None),
        ("slice_update_2d_negative_strides_int32", g.randi(8302, (3, 4)), [-1, -1], [-4, -5], [-1, -2], None),
        ("slice_update_3d_mixed_float32", g.randn(8303, (3, 4, 5)), [0, -1, 1], [3, -5, 5], [2, -1, 3], None),
        ("slice_update_rank4_float32", g.randn(8304, (2, 3, 4, 2)), [1, 0, 3, 0], [2, 3, 0, 2], [1, 2, -2, 1], None),
        ("slice_update_uint32", g.randui(8305, (6,)), [5], [0], [-2], None),
        ("slice_update_bool", g.randb(8306, (2, 5)), [0, 4], [2, 0], [1, -1], None),
        ("slice_update_of_empty_float32", np.zeros((0, 4), np.float32), [0, 1], [0, 3], [1, 1], None),
        ("slice_update_broadcast_row_float32", g.randn(8307, (4, 5)), [1, 0], [4, 5], [1, 2], g.randn(8308, (1, 3))),
        ("slice_update_broadcast_scalar_float32", g.randn(8309, (3, 4)), [0, 1], [3, 3], [2, 1], g.f32(-0.0, ())),
    ]):
        sl = tuple(slice(s, e, k) for s, e, k in zip(st, sp, sd))
        expect_shape = g.cpp_slice_shape(a.shape, st, sp, sd)
        if upd is None:
            upd = g.gen(g.dtype_name(a), 8350 + n, expect_shape)

        def ref(x, u, sl=sl, expect_shape=expect_shape):
            r = x.copy()
            assert r[sl].shape == expect_shape, (r[sl].shape, expect_shape)
            r[sl] = u
            return r

        def mfn(x, u, sl=sl):
            b = mx.array(x)
            b[sl] = u
            return b
        g.add_case(name, "sliceUpdate", [a, upd], {"start": st, "stop": sp, "strides": sd}, mfn, ref, g.EXACT)


# ---- scans ---------------------------------------------------------------------------------------
# MLX: bool cumsum -> int32 (a count); bool cumprod/cummax/cummin stay bool (and/or/and); int32
# and uint32 keep their dtype and wrap; logcumsumexp of int32 -> float32. Exclusive scans start
# from the identity: 0, 1, -inf / INT32_MIN / 0 / false (cummax), +inf / INT32_MAX / UINT32_MAX /
# true (cummin), -inf (logcumsumexp). NaN propagates through cummax/cummin (and stays). Ties of -0.0
# with 0.0 in cummax/cummin are avoided: MLX keeps the newer element on a tie in cummax
# ([-0, 0, -0] -> [-0, 0, -0]) but the older one in cummin ([0, -0, 0] -> [0, 0, 0]).

_SCAN_UFUNC = {"cumsum": np.add, "cumprod": np.multiply, "cummax": np.maximum, "cummin": np.minimum,
               "logcumsumexp": np.logaddexp}


def _scan_ref(g, op, a, axis, reverse, inclusive):
    dt = g.dtype_name(a)
    if axis is None:
        a, axis = a.reshape(-1), 0
    x = np.moveaxis(a, axis, -1)
    if reverse:
        x = x[..., ::-1]
    if op == "logcumsumexp" or dt == g.F32:
        w = g.as_f64(x)
        ident = {"cumsum": 0.0, "cumprod": 1.0, "cummax": -np.inf, "cummin": np.inf, "logcumsumexp": -np.inf}[op]
        out_dt = g.F32
    elif dt == g.BOOL:
        if op == "cumsum":
            w, ident, out_dt = x.astype(np.int64), 0, g.I32
        else:
            w, out_dt = x, g.BOOL
            ident = {"cumprod": True, "cummax": False, "cummin": True}[op]
    else:
        w, out_dt = g.as_i64(x), dt
        if op == "cumprod":
            w = w.astype(np.uint64)  # wraps mod 2**64, which keeps the product mod 2**32
        info = np.iinfo(np.int32 if dt == g.I32 else np.uint32)
        ident = {"cumsum": 0, "cumprod": 1, "cummax": int(info.min), "cummin": int(info.max)}[op]
    ufunc = _SCAN_UFUNC[op]
    if dt == g.BOOL and op != "cumsum":
        ufunc = {"cumprod": np.logical_and, "cummax": np.logical_or, "cummin": np.logical_and}[op]
    acc = ufunc.accumulate(w, axis=-1) if w.shape[-1] > 0 else w.copy()
    if not inclusive and w.shape[-1] > 0:
        first = np.full(w.shape[:-1] + (1,), ident, dtype=acc.dtype)
        acc = np.concatenate([first, acc[..., :-1]], axis=-1)
    if reverse:
        acc = acc[..., ::-1]
    acc = np.moveaxis(acc, -1, axis)
    if out_dt == g.F32:
        return g.to_f32(acc)
    if out_dt == g.BOOL:
        return acc.astype(np.bool_)
    return g.wrap(acc, out_dt)


def scan_cases(g):
    nan, inf = g.NAN, g.INF
    # (tag, input, axis, reverse, inclusive): shapes shared by every op; values chosen per op
    layouts = [
        ("axis1", (3, 5), 1, False, True),
        ("axis0", (4, 3), 0, False, True),
        ("axis_m1_reverse", (2, 3, 4), -1, True, True),
        ("axis_m2_exclusive", (2, 3, 4), -2, False, False),
        ("axis1_reverse_exclusive", (3, 5), 1, True, False),
        ("flat", (3, 4), None, False, True),
        ("flat_reverse_exclusive", (2, 3), None, True, False),
        ("rank4_axis2", (2, 2, 3, 2), 2, False, True),
        ("long_row", (300,), 0, False, True),
        ("long_row_reverse_exclusive", (1, 300), -1, True, False),
        ("long_column", (100, 2), 0, False, True),
        ("scalar_flat", (), None, False, True),
        ("empty_axis0", (0, 3), 0, False, True),
        ("empty_other_axis", (2, 0), 1, True, False),
        ("empty_flat", (0, 4), None, False, True),
    ]

    def add(op, name, x, axis, reverse, inclusive, tol):
        g.add_case(name, op, [x], {"axis": axis, "reverse": reverse, "inclusive": inclusive},
                   lambda a, op=op, axis=axis, reverse=reverse, inclusive=inclusive:
                   getattr(mx, op)(a, axis=axis, reverse=reverse, inclusive=inclusive),
                   lambda a, op=op, axis=axis, reverse=reverse, inclusive=inclusive:
                   _scan_ref(g, op, a, axis, reverse, inclusive), tol)

    seed = 8400
    for op in ("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"):
        tol = g.EXACT if op in ("cummax", "cummin") else g.TRANS
        for tag, shape, axis, reverse, inclusive in layouts:
            seed += 1
            if op == "cumprod":
                # magnitudes near 1 keep 300-long products finite; random signs
                r = g.rng(seed)
                x = (r.uniform(0.9, 1.1, shape) * np.where(r.random(shape) < 0.3, -1.0, 1.0)).astype(np.float32)
            elif op == "logcumsumexp":
                x = g.randn(seed, shape, 3.0)
            else:
                x = g.randn(seed, shape)
            case_tol = tol
            if op == "cumsum" and tag.startswith("long"):
                # A running sum of 300 normals reaches ~20 and crosses 0: a GPU adding in a tree
                # and MLX adding in order round apart by a few ULPs of the running magnitude.
                case_tol = dict(rtol=1e-5, atol=1e-5)
            add(op, f"{op}_{tag}_float32", x, axis, reverse, inclusive, case_tol)
        # non-finite values
        special = {
            "cumsum": g.f32([1.0, inf, 2.0, -inf, 3.0, nan, 1.0, -0.0]),
            "cumprod": g.f32([2.0, -0.0, inf, 1.0, -inf, 0.5, nan, 3.0]),
            "cummax": g.f32([-inf, -2.0, inf, 1.0, nan, 5.0, -0.0, 7.0]),
            "cummin": g.f32([inf, 3.0, -0.0, -inf, 1.0, nan, -2.0, 0.5]),
            "logcumsumexp": g.f32([-inf, -inf, 1.0, -inf, 88.0, 100.0, inf, 2.0]),
        }[op]
        add(op, f"{op}_nan_inf_float32", special, None, False, True, tol)
        add(op, f"{op}_nan_inf_reverse_exclusive_float32", special, 0, True, False, tol)
        if op in ("cummax", "cummin", "logcumsumexp"):
            add(op, f"{op}_nan_first_float32", g.f32([[nan, 1.0, 2.0], [1.0, -inf, nan]]), 1, False, True, tol)
    # -0.0 in cummax/cummin without a tie against +0.0
    add("cummax", "cummax_negative_zero_float32", g.f32([-1.0, -0.0, -0.5, 2.0]), 0, False, True, g.EXACT)
    add("cummin", "cummin_negative_zero_float32", g.f32([1.0, -0.0, 0.5, -2.0]), 0, False, True, g.EXACT)
    add("logcumsumexp", "logcumsumexp_large_float32", g.f32([80.0, 85.0, 88.5, 89.0, -50.0]), 0, False, True, g.TRANS)
    add("logcumsumexp", "logcumsumexp_int32", g.i32([1, -3, 0, 5, 2]), 0, False, True, g.TRANS)

    # integer and bool inputs
    imin, imax, umax = -2147483648, 2147483647, 4294967295
    for n, op in enumerate(("cumsum", "cumprod", "cummax", "cummin")):
        for tag, x, axis, reverse, inclusive in [
            ("axis1", g.randi(8500 + n, (3, 5), -9, 9), 1, False, True),
            ("flat_exclusive", g.randi(8541, (2, 4), -9, 9), None, False, False),
            ("axis0_reverse_exclusive", g.randi(8542, (3, 3), -9, 9), 0, True, False),
            ("long_row", g.randi(8543, (300,), -3, 4), 0, False, True),
            ("wrap", g.i32([3, 65537, 65537, -7, 100003, 1, 2] if op == "cumprod"
                           else [imax, 1, imin, -1, 65536, 65536, 3, -7]), 0, False, True),
            ("extremes_exclusive", g.i32([5, imin, imax, 0]), 0, True, False),
            ("empty", np.zeros((0, 3), np.int32), 0, False, True),
        ]:
            add(op, f"{op}_{tag}_int32", x, axis, reverse, inclusive, g.EXACT)
        for tag, x, axis, reverse, inclusive in [
            ("axis1", g.randui(8544, (3, 5), 0, 20), 1, False, True),
            ("flat_reverse_exclusive", g.randui(8545, (2, 4), 0, 20), None, True, False),
            ("long_row", g.randui(8546, (300,), 1, 3), 0, True, True),
            ("wrap", g.u32([umax, 3, 65537, 65537, 7, 0, 3] if op == "cumprod"
                           else [umax, 2, 65536, 65536, 7, 0, 3]), 0, False, True),
            ("extremes_exclusive", g.u32([umax, 0, 5, umax]), 0, False, False),
        ]:
            add(op, f"{op}_{tag}_uint32", x, axis, reverse, inclusive, g.EXACT)
        for tag, x, axis, reverse, inclusive in [
            ("axis1", g.randb(8547, (3, 5)), 1, False, True),
            ("flat_exclusive", g.randb(8548, (2, 4)), None, False, False),
            ("reverse_exclusive", g.bools([True, True, False, True, True]), 0, True, False),
            ("long_row", g.randb(8549, (300,)), 0, False, True),
            ("empty", np.zeros((2, 0), np.bool_), 1, False, True),
        ]:
            add(op, f"{op}_{tag}_bool", x, axis, reverse, inclusive, g.EXACT)


# ---- sort / argsort ------------------------------------------------------------------------------
# MLX's sort and argsort are stable (checked on rows of 7 to 5000 with many ties, along either
# axis) and put NaN last; argsort returns uint32; axis null sorts the flattened array (a 0-d input
# then gives shape [1]). -0.0 and 0.0 compare equal in MLX (a stable sort keeps their input order);
# the inputs here put every -0.0 before every 0.0, so a sort that orders -0.0 below 0.0 gives the
# same values and indices.

def _sort_ref(a, axis):
    return np.sort(a.reshape(-1), kind="stable") if axis is None else np.sort(a, axis=axis, kind="stable")


def _argsort_ref(a, axis):
    r = np.argsort(a.reshape(-1), kind="stable") if axis is None else np.argsort(a, axis=axis, kind="stable")
    return r.astype(np.uint32)


def sort_cases(g):
    nan, inf = g.NAN, g.INF
    special = g.f32([3.0, nan, -inf, -0.0, 1.0, inf, -0.0, -1.0, 0.0, nan, 2.5, 0.0, -3.0e38, 1e-45])
    ties7 = g.randi(8601, (4, 7), 0, 4).astype(np.float32)
    x300 = g.randn(8602, (300,))
    x300[[5, 77, 150]] = nan
    x300[[9, 200]] = [inf, -inf]
    x300[[20, 40]] = -0.0  # both before the +0.0 at 260
    x300[260] = 0.0
    imin, imax, umax = -2147483648, 2147483647, 4294967295
    inputs = [
        ("len1_float32", g.randn(8603, (3, 1)), -1),
        ("len7_float32", g.randn(8604, (4, 7)), -1),
        ("len7_ties_float32", ties7, 1),
        ("len300_nan_inf_float32", x300, 0),
        ("len1000_float32", g.randn(8605, (1000,)), -1),
        ("axis0_float32", g.randn(8606, (7, 3)), 0),
        ("axis0_ties_long_column_float32", g.randi(8607, (60, 3), 0, 5).astype(np.float32), 0),
        ("axis_m2_rank3_float32", g.randn(8608, (2, 5, 3)), -2),
        ("rank4_axis1_float32", g.randn(8609, (2, 3, 2, 2)), 1),
        ("flat_float32", g.randn(8610, (3, 4)), None),
        ("special_values_float32", special, -1),
        ("scalar_flat_float32", g.f32(1.5, ()), None),
        ("len7_int32", g.i32([5, imin, imax, -1, 0, 5, -7] * 2, (2, 7)), -1),
        ("len300_ties_int32", g.randi(8611, (300,), -10, 10), 0),
        ("len1000_ties_int32", g.randi(8612, (1000,), 0, 50), 0),
        ("axis0_uint32", g.u32([7, umax, 0, 2147483648, 2147483647, 1, 7, 3, umax], (3, 3)), 0),
        ("len7_uint32", g.randui(8613, (3, 7), 0, 5), 1),
        ("bool", g.randb(8614, (2, 7)), -1),
        ("flat_bool", g.randb(8615, (3, 3)), None),
        ("empty_axis_float32", np.zeros((2, 0), np.float32), -1),
        ("empty_other_axis_float32", np.zeros((0, 5), np.float32), 1),
        ("empty_flat_int32", np.zeros((0, 3), np.int32), None),
    ]
    for tag, x, axis in inputs:
        g.add_case(f"sort_{tag}", "sort", [x], {"axis": axis}, lambda a, axis=axis: mx.sort(a, axis=axis),
                   lambda a, axis=axis: _sort_ref(a, axis), g.EXACT)
        g.add_case(f"argsort_{tag}", "argsort", [x], {"axis": axis}, lambda a, axis=axis: mx.argsort(a, axis=axis),
                   lambda a, axis=axis: _argsort_ref(a, axis), g.EXACT)


# ---- topk ----------------------------------------------------------------------------------------
# MLX's topk returns the k largest along the axis in no promised order (a partition: for [1, 5, 3,
# 2, 4], k=2 it gives [4, 5]). tandem returns them in descending order, so the golden is MLX's
# topk sorted descending along the axis (ascending sort, then reversed). NaN counts as the largest
# value (sort puts it last), so a NaN is among the top k and comes first in descending order.
# axis null: of the flattened array. k = 0 gives an empty axis. Ties of -0.0 with 0.0 are avoided
# (MLX's partition may pick either).

def _desc_mx(x, axis):
    ax = -1 if axis is None else axis
    s = mx.sort(x, axis=ax)
    sl = [slice(None)] * s.ndim
    sl[ax] = slice(None, None, -1)
    return s[tuple(sl)]


def _topk_ref(a, k, axis):
    if axis is None:
        a, axis = a.reshape(-1), 0
    s = np.sort(a, axis=axis, kind="stable")
    n = s.shape[axis]
    return np.take(s, np.arange(n - 1, n - 1 - k, -1, dtype=np.int64), axis=axis)


def topk_cases(g):
    nan, inf = g.NAN, g.INF
    for name, x, k, axis in [
        ("topk_k3_axis_m1_float32", g.randn(8700, (3, 8)), 3, -1),
        ("topk_k2_axis0_float32", g.randn(8701, (5, 3)), 2, 0),
        ("topk_k4_flat_float32", g.randn(8702, (3, 4)), 4, None),
        ("topk_k1_len7_float32", g.randn(8703, (4, 7)), 1, 1),
        ("topk_k_all_float32", g.randn(8704, (2, 5)), 5, -1),
        ("topk_k0_float32", g.randn(8705, (2, 5)), 0, -1),
        ("topk_len1_float32", g.randn(8706, (3, 1)), 1, -1),
        ("topk_k2_axis1_rank3_float32", g.randn(8707, (2, 6, 3)), 2, 1),
        ("topk_k10_len300_float32", g.randn(8708, (300,)), 10, 0),
        ("topk_k20_len1000_float32", g.randn(8709, (1000,)), 20, -1),
        ("topk_nan_inf_float32", g.f32([1.0, nan, -inf, 3.0, inf, 2.0, nan, -1.0, -0.0]), 4, 0),
        ("topk_ties_float32", g.f32([[1.0, 3.0, 3.0, 2.0, 3.0], [0.0, 0.0, 0.0, 1.0, -1.0]]), 2, -1),
        ("topk_int32", g.i32([[5, -2147483648, 2147483647, 0, -1, 5], [1, 2, 3, 4, 5, 6]]), 2, -1),
        ("topk_uint32", g.u32([7, 4294967295, 0, 2147483648, 2147483647, 1, 7, 3]), 3, 0),
        ("topk_bool", g.randb(8710, (2, 5)), 2, -1),
        ("topk_empty_other_axis_float32", np.zeros((0, 5), np.float32), 2, 1),
    ]:
        g.add_case(name, "topk", [x], {"k": k, "axis": axis},
                   lambda a, k=k, axis=axis: _desc_mx(mx.topk(a, k, axis=axis), axis),
                   lambda a, k=k, axis=axis: _topk_ref(a, k, axis), g.EXACT)


# ---- layerNorm / rmsNorm -------------------------------------------------------------------------
# Over the last axis. Inputs: x, then weight if hasWeight, then bias if hasBias (layerNorm also
# takes a bias without a weight). The variance is the biased one (divided by the row's length).

def _norm_inputs(arrs, has):
    it = iter(arrs)
    x = next(it)
    return [x] + [next(it) if h else None for h in has]


def layer_norm_cases(g):
    def ref(eps, hw, hb):
        def f(*arrs):
            x, w, b = _norm_inputs(arrs, (hw, hb))
            x = g.as_f64(x)
            mu = x.mean(axis=-1, keepdims=True)
            var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
            y = (x - mu) / np.sqrt(var + eps)
            if w is not None:
                y = y * g.as_f64(w)
            if b is not None:
                y = y + g.as_f64(b)
            return g.to_f32(y)
        return f

    def mfn(eps, hw, hb):
        def f(*arrs):
            x, w, b = _norm_inputs(arrs, (hw, hb))
            return mx.fast.layer_norm(x, w, b, eps)
        return f

    seed = 8800
    for name, shape, hw, hb, eps, x in [
        ("layer_norm_rank3_float32", (2, 3, 7), True, True, 1e-5, None),
        ("layer_norm_no_affine_float32", (4, 7), False, False, 1e-5, None),
        ("layer_norm_weight_only_float32", (3, 7), True, False, 1e-6, None),
        ("layer_norm_bias_only_float32", (3, 7), False, True, 1e-5, None),
        ("layer_norm_len1_float32", (4, 1), True, True, 1e-5, None),
        ("layer_norm_len768_float32", (1, 768), True, True, 1e-5, None),
        ("layer_norm_1d_float32", (7,), True, True, 1e-5, None),
        ("layer_norm_big_eps_float32", (2, 7), True, True, 0.5, None),
        ("layer_norm_offset_rows_float32", (2, 7), False, False, 1e-5, g.randn(8850, (2, 7)) + np.float32(100.0)),
        # constant rows of 8: MLX takes the mean as sum * (1 / n), exact for n = 8 (for n = 7 the
        # float32 mean of seven 3.25s is off by one ulp, which eps = 1e-5 amplifies to ~1e-4)
        ("layer_norm_constant_rows_float32", (2, 8), True, True, 1e-5, np.full((2, 8), 3.25, np.float32)),
        ("layer_norm_empty_float32", (0, 7), True, True, 1e-5, np.zeros((0, 7), np.float32)),
    ]:
        seed += 3
        x = g.randn(seed, shape, 2.0) if x is None else x
        inputs = [x] + ([g.randn(seed + 1, shape[-1:], 0.5) + np.float32(1.0)] if hw else []) + \
            ([g.randn(seed + 2, shape[-1:], 0.5)] if hb else [])
        # rows around 100: subtracting the mean in float32 already costs ~100 * 2**-24 absolute
        # (MLX is off by 1e-5 here), so that case gets rtol = atol = 1e-4; a one-pass variance
        # (E[x^2] - E[x]^2) would still be off by ~1e-3 and fail it
        tol = dict(rtol=1e-4, atol=1e-4) if "offset_rows" in name else g.TRANS
        g.add_case(name, "layerNorm", inputs, {"hasWeight": hw, "hasBias": hb, "eps": eps},
                   mfn(eps, hw, hb), ref(eps, hw, hb), tol)


def rms_norm_cases(g):
    def ref(eps, hw):
        def f(*arrs):
            x, w = _norm_inputs(arrs, (hw,))
            x = g.as_f64(x)
            y = x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps)
            return g.to_f32(y * g.as_f64(w) if w is not None else y)
        return f

    def mfn(eps, hw):
        def f(*arrs):
            x, w = _norm_inputs(arrs, (hw,))
            return mx.fast.rms_norm(x, w, eps)
        return f

    seed = 8870
    for name, shape, hw, eps, x in [
        ("rms_norm_rank3_float32", (2, 3, 7), True, 1e-5, None),
        ("rms_norm_no_weight_float32", (4, 7), False, 1e-6, None),
        ("rms_norm_len1_float32", (4, 1), True, 1e-5, None),
        ("rms_norm_len768_float32", (1, 768), True, 1e-5, None),
        ("rms_norm_1d_float32", (7,), True, 1e-5, None),
        ("rms_norm_big_eps_float32", (2, 7), True, 0.5, None),
        ("rms_norm_zero_rows_float32", (2, 7), True, 1e-5, np.zeros((2, 7), np.float32)),
        ("rms_norm_large_values_float32", (2, 7), False, 1e-5, g.randn(8898, (2, 7), 1e4)),
        ("rms_norm_empty_float32", (0, 7), True, 1e-5, np.zeros((0, 7), np.float32)),
    ]:
        seed += 2
        x = g.randn(seed, shape, 2.0) if x is None else x
        inputs = [x] + ([g.randn(seed + 1, shape[-1:], 0.5) + np.float32(1.0)] if hw else [])
        g.add_case(name, "rmsNorm", inputs, {"hasWeight": hw, "eps": eps}, mfn(eps, hw), ref(eps, hw), g.TRANS)


# ---- rope ----------------------------------------------------------------------------------------
# MLX's fast.rope on the last two axes [..., seq, dim] (x needs rank >= 3): position p = (offset +
# t) * scale for row t, angle_i = p * base ** (-2i / dims) for i < dims / 2. traditional rotates
# the pairs (x[2i], x[2i + 1]); otherwise (x[i], x[i + dims / 2]). Features past dims pass through.

def _rope_ref(g, x, dims, traditional, base, scale, offset):
    x = g.as_f64(x)
    L = x.shape[-2]
    half = dims // 2
    pos = (offset + np.arange(L, dtype=np.float64)) * scale
    inv = base ** (-(2.0 * np.arange(half)) / dims)
    th = pos[:, None] * inv[None, :]
    c, s = np.cos(th), np.sin(th)
    out = x.copy()
    if traditional:
        x1, x2 = x[..., 0:dims:2], x[..., 1:dims:2]
        out[..., 0:dims:2] = x1 * c - x2 * s
        out[..., 1:dims:2] = x1 * s + x2 * c
    else:
        x1, x2 = x[..., :half], x[..., half:dims]
        out[..., :half] = x1 * c - x2 * s
        out[..., half:dims] = x1 * s + x2 * c
    return g.to_f32(out)


def rope_cases(g):
    for n, (name, shape, dims, trad, base, scale, offset) in enumerate([
        ("rope_default_float32", (1, 5, 8), 8, False, 10000.0, 1.0, 0),
        ("rope_traditional_float32", (2, 5, 8), 8, True, 10000.0, 1.0, 0),
        ("rope_partial_dims_float32", (1, 4, 12), 8, False, 10000.0, 1.0, 0),
        ("rope_partial_dims_traditional_float32", (1, 4, 12), 4, True, 10000.0, 1.0, 2),
        ("rope_offset_float32", (1, 3, 16), 16, False, 10000.0, 1.0, 3),
        ("rope_scale_base_float32", (2, 4, 8), 8, True, 500.0, 0.5, 0),
        ("rope_heads_float32", (1, 2, 6, 16), 16, False, 10000.0, 1.0, 0),
        ("rope_heads_traditional_offset_float32", (2, 2, 3, 8), 8, True, 10000.0, 1.0, 7),
        ("rope_decode_step_float32", (1, 2, 1, 32), 32, False, 10000.0, 1.0, 42),
        ("rope_seq16_float32", (1, 16, 8), 8, False, 10000.0, 2.0, 1),
    ]):
        x = g.randn(8900 + n, shape)
        g.add_case(name, "rope", [x],
                   {"dims": dims, "traditional": trad, "base": base, "scale": scale, "offset": offset},
                   lambda a, dims=dims, trad=trad, base=base, scale=scale, offset=offset:
                   mx.fast.rope(a, dims, traditional=trad, base=base, scale=scale, offset=offset),
                   lambda a, dims=dims, trad=trad, base=base, scale=scale, offset=offset:
                   _rope_ref(g, a, dims, trad, base, scale, offset), g.TRANS)


# ---- scaledDotProductAttention -------------------------------------------------------------------
# q [B, Hq, L, D], k and v [B, Hkv, S, D] with Hq a multiple of Hkv (grouped-query: q head h reads
# kv head h // (Hq / Hkv)). mask: null; "causal" (MLX aligns it to the bottom right: query i sees
# keys j <= i + S - L); "array" (4th input, float32, added to the scaled scores, broadcast to
# [B, Hq, L, S]); "boolArray" (4th input, bool, true = attend). No row is fully masked.

def _sdpa_ref(g, q, k, v, mask, scale, kind):
    q, k, v = g.as_f64(q), g.as_f64(k), g.as_f64(v)
    rep = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
    s = scale * (q @ np.swapaxes(k, -1, -2))
    L, S = s.shape[-2:]
    if kind == "causal":
        s = np.where(np.arange(L)[:, None] + (S - L) >= np.arange(S)[None, :], s, -np.inf)
    elif kind == "array":
        s = s + g.as_f64(mask)
    elif kind == "boolArray":
        s = np.where(mask, s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return g.to_f32((p / p.sum(axis=-1, keepdims=True)) @ v)


def sdpa_cases(g):
    def bool_mask(seed, shape):
        m = g.randb(seed, shape)
        m[..., 0] = True  # every query attends to something
        return m

    seed = 9000
    for name, qs, ks, kind, scale, mask in [
        ("sdpa_l1_d8_float32", (1, 2, 1, 8), (1, 2, 1, 8), None, 8 ** -0.5, None),
        ("sdpa_l5_d8_float32", (2, 2, 5, 8), (2, 2, 5, 8), None, 8 ** -0.5, None),
        ("sdpa_l16_d8_causal_float32", (1, 1, 16, 8), (1, 1, 16, 8), "causal", 8 ** -0.5, None),
        ("sdpa_l5_d64_causal_float32", (1, 1, 5, 64), (1, 1, 5, 64), "causal", 0.125, None),
        ("sdpa_decode_l1_s5_d64_float32", (1, 2, 1, 64), (1, 1, 5, 64), None, 0.125, None),
        ("sdpa_causal_l3_s5_float32", (1, 2, 3, 8), (1, 2, 5, 8), "causal", 0.5, None),
        ("sdpa_causal_decode_l1_s6_float32", (2, 1, 1, 8), (2, 1, 6, 8), "causal", 0.5, None),
        ("sdpa_array_mask_2d_float32", (1, 2, 5, 8), (1, 2, 5, 8), "array", 8 ** -0.5,
         g.randn(9090, (5, 5))),
        ("sdpa_array_mask_neg_inf_float32", (2, 1, 4, 8), (2, 1, 6, 8), "array", 1.0,
         np.where(bool_mask(9091, (2, 1, 4, 6)), g.randn(9092, (2, 1, 4, 6)), np.float32(-np.inf)).astype(np.float32)),
        ("sdpa_bool_mask_float32", (1, 2, 5, 8), (1, 2, 5, 8), "boolArray", 8 ** -0.5, bool_mask(9093, (1, 2, 5, 5))),
        ("sdpa_bool_mask_broadcast_float32", (2, 2, 3, 8), (2, 2, 4, 8), "boolArray", 0.3, bool_mask(9094, (3, 4))),
        ("sdpa_gqa_float32", (1, 4, 5, 8), (1, 2, 5, 8), None, 8 ** -0.5, None),
        ("sdpa_gqa_causal_float32", (1, 4, 6, 8), (1, 1, 6, 8), "causal", 8 ** -0.5, None),
        ("sdpa_gqa_array_mask_float32", (1, 4, 3, 8), (1, 2, 5, 8), "array", 0.5, g.randn(9095, (1, 1, 3, 5))),
    ]:
        seed += 3
        q, k, v = g.randn(seed, qs), g.randn(seed + 1, ks), g.randn(seed + 2, ks)
        inputs = [q, k, v] + ([mask] if mask is not None else [])

        def mfn(*arrs, scale=scale, kind=kind):
            m = arrs[3] if len(arrs) > 3 else ("causal" if kind == "causal" else None)
            return mx.fast.scaled_dot_product_attention(arrs[0], arrs[1], arrs[2], scale=scale, mask=m)

        def ref(*arrs, scale=scale, kind=kind):
            return _sdpa_ref(g, arrs[0], arrs[1], arrs[2], arrs[3] if len(arrs) > 3 else None, scale, kind)
        g.add_case(name, "scaledDotProductAttention", inputs, {"scale": float(scale), "mask": kind}, mfn, ref,
                   g.MATMUL)


# ---- conv1d / conv2d / convTranspose1d / convTranspose2d -----------------------------------------
# Channels last. conv: input [N, *spatial, C], weight [O, *kernel, C / groups]; output channel o
# belongs to group o // (O / groups). padding is symmetric (both sides). convTranspose: weight
# [O, *kernel, C / groups] too; it is the transpose (gradient) of conv: input position t adds
# x[t] * w[k] to full position t * stride + k * dilation, the output drops `padding` positions at
# the start and has length (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + 1 +
# outputPadding. MLX also accepts outputPadding >= stride (PyTorch does not); no case has one.
# conv1d/convTranspose1d params are ints (MLX's Python API takes only ints there); conv2d ones an
# int or a list of 2.

def _pair(v, nd):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * nd


def _conv_ref(g, x, w, stride, padding, dilation, groups):
    x, w = g.as_f64(x), g.as_f64(w)
    nd = x.ndim - 2
    s, p, d = _pair(stride, nd), _pair(padding, nd), _pair(dilation, nd)
    xp = np.pad(x, [(0, 0)] + [(pi, pi) for pi in p] + [(0, 0)])
    ksz = w.shape[1:-1]
    osz = [(xp.shape[1 + i] - d[i] * (ksz[i] - 1) - 1) // s[i] + 1 for i in range(nd)]
    O, cg = w.shape[0], w.shape[-1]
    og = O // groups
    out = np.zeros((x.shape[0], *osz, O))
    for kidx in np.ndindex(*ksz):
        sl = tuple(slice(kidx[i] * d[i], kidx[i] * d[i] + (osz[i] - 1) * s[i] + 1, s[i]) for i in range(nd))
        patch = xp[(slice(None),) + sl + (slice(None),)]
        for gi in range(groups):
            wk = w[(slice(gi * og, (gi + 1) * og),) + kidx + (slice(None),)]  # [og, cg]
            out[..., gi * og:(gi + 1) * og] += patch[..., gi * cg:(gi + 1) * cg] @ wk.T
    return g.to_f32(out)


def _conv_t_ref(g, x, w, stride, padding, dilation, output_padding, groups):
    x, w = g.as_f64(x), g.as_f64(w)
    nd = x.ndim - 2
    s, p, d, op = _pair(stride, nd), _pair(padding, nd), _pair(dilation, nd), _pair(output_padding, nd)
    isz, ksz = x.shape[1:-1], w.shape[1:-1]
    osz = [(isz[i] - 1) * s[i] - 2 * p[i] + d[i] * (ksz[i] - 1) + 1 + op[i] for i in range(nd)]
    full = [max((isz[i] - 1) * s[i] + d[i] * (ksz[i] - 1) + 1, p[i] + osz[i]) for i in range(nd)]
    O, cg = w.shape[0], w.shape[-1]
    og = O // groups
    buf = np.zeros((x.shape[0], *full, O))
    for kidx in np.ndindex(*ksz):
        sl = tuple(slice(kidx[i] * d[i], kidx[i] * d[i] + (isz[i] - 1) * s[i] + 1, s[i]) for i in range(nd))
        for gi in range(groups):
            wk = w[(slice(gi * og, (gi + 1) * og),) + kidx + (slice(None),)]
            buf[(slice(None),) + sl + (slice(gi * og, (gi + 1) * og),)] += x[..., gi * cg:(gi + 1) * cg] @ wk.T
    out = buf[(slice(None),) + tuple(slice(p[i], p[i] + osz[i]) for i in range(nd)) + (slice(None),)]
    return g.to_f32(out)


def conv_cases(g):
    seed = 9100
    for op, name, xs, ws, st, pd, dl, gr in [
        ("conv1d", "conv1d_basic_float32", (2, 8, 3), (4, 3, 3), 1, 0, 1, 1),
        ("conv1d", "conv1d_stride2_float32", (1, 9, 2), (3, 3, 2), 2, 0, 1, 1),
        ("conv1d", "conv1d_padding1_float32", (1, 6, 3), (2, 3, 3), 1, 1, 1, 1),
        ("conv1d", "conv1d_dilation2_float32", (1, 10, 2), (2, 3, 2), 1, 0, 2, 1),
        ("conv1d", "conv1d_groups2_float32", (2, 7, 4), (6, 3, 2), 1, 0, 1, 2),
        ("conv1d", "conv1d_depthwise_float32", (1, 8, 4), (4, 3, 1), 1, 1, 1, 4),
        ("conv1d", "conv1d_all_params_float32", (2, 11, 4), (4, 3, 2), 2, 1, 2, 2),
        ("conv1d", "conv1d_pointwise_float32", (1, 5, 3), (4, 1, 3), 1, 0, 1, 1),
        ("conv1d", "conv1d_stride_over_kernel_float32", (1, 10, 2), (2, 2, 2), 3, 0, 1, 1),
        ("conv1d", "conv1d_kernel_over_input_float32", (1, 3, 2), (2, 5, 2), 1, 2, 1, 1),
        ("conv2d", "conv2d_basic_float32", (1, 5, 5, 2), (3, 3, 3, 2), 1, 0, 1, 1),
        ("conv2d", "conv2d_stride_list_float32", (1, 6, 5, 2), (2, 3, 3, 2), [2, 1], 0, 1, 1),
        ("conv2d", "conv2d_padding_list_float32", (1, 4, 5, 2), (2, 3, 3, 2), 1, [1, 0], 1, 1),
        ("conv2d", "conv2d_stride2_padding1_float32", (2, 5, 5, 2), (2, 3, 3, 2), 2, 1, 1, 1),
        ("conv2d", "conv2d_dilation2_float32", (1, 7, 7, 1), (2, 3, 3, 1), 1, 0, 2, 1),
        ("conv2d", "conv2d_dilation_list_float32", (1, 5, 7, 2), (2, 2, 3, 2), 1, [0, 1], [1, 2], 1),
        ("conv2d", "conv2d_groups2_float32", (1, 5, 5, 4), (4, 3, 3, 2), 1, 0, 1, 2),
        ("conv2d", "conv2d_depthwise_float32", (1, 5, 4, 3), (3, 3, 3, 1), 1, 1, 1, 3),
        ("conv2d", "conv2d_rect_kernel_float32", (1, 4, 6, 2), (2, 2, 3, 2), [1, 2], [1, 1], 1, 1),
        ("conv2d", "conv2d_1x1_float32", (2, 3, 3, 3), (2, 1, 1, 3), 1, 0, 1, 1),
        ("conv2d", "conv2d_all_params_float32", (1, 7, 7, 4), (2, 3, 3, 2), [2, 2], [1, 1], [2, 2], 2),
    ]:
        seed += 2
        x, w = g.randn(seed, xs), g.randn(seed + 1, ws)
        mfn = {"conv1d": mx.conv1d, "conv2d": mx.conv2d}[op]
        g.add_case(name, op, [x, w], {"stride": st, "padding": pd, "dilation": dl, "groups": gr},
                   lambda a, b, mfn=mfn, st=st, pd=pd, dl=dl, gr=gr: mfn(
                       a, b, stride=_pair(st, 2) if isinstance(st, list) else st,
                       padding=_pair(pd, 2) if isinstance(pd, list) else pd,
                       dilation=_pair(dl, 2) if isinstance(dl, list) else dl, groups=gr),
                   lambda a, b, st=st, pd=pd, dl=dl, gr=gr: _conv_ref(g, a, b, st, pd, dl, gr), g.MATMUL)


def conv_transpose_cases(g):
    seed = 9200
    for op, name, xs, ws, st, pd, dl, opd, gr in [
        ("convTranspose1d", "conv_transpose1d_basic_float32", (1, 5, 3), (2, 3, 3), 1, 0, 1, 0, 1),
        ("convTranspose1d", "conv_transpose1d_stride2_float32", (1, 4, 2), (3, 3, 2), 2, 0, 1, 0, 1),
        ("convTranspose1d", "conv_transpose1d_stride2_padding1_float32", (2, 4, 2), (2, 3, 2), 2, 1, 1, 0, 1),
        ("convTranspose1d", "conv_transpose1d_output_padding_float32", (1, 4, 2), (2, 3, 2), 2, 1, 1, 1, 1),
        ("convTranspose1d", "conv_transpose1d_dilation2_float32", (1, 5, 2), (2, 3, 2), 1, 0, 2, 0, 1),
        ("convTranspose1d", "conv_transpose1d_groups2_float32", (1, 5, 4), (6, 3, 2), 1, 0, 1, 0, 2),
        ("convTranspose1d", "conv_transpose1d_all_params_float32", (2, 4, 4), (4, 3, 2), 3, 1, 2, 2, 2),
        ("convTranspose1d", "conv_transpose1d_stride_over_kernel_float32", (1, 3, 2), (2, 2, 2), 3, 0, 1, 0, 1),
        ("convTranspose2d", "conv_transpose2d_basic_float32", (1, 3, 3, 2), (2, 3, 3, 2), 1, 0, 1, 0, 1),
        ("convTranspose2d", "conv_transpose2d_stride2_padding1_output_padding_float32", (1, 3, 4, 2), (3, 3, 3, 2),
         [2, 2], [1, 1], 1, [1, 0], 1),
        ("convTranspose2d", "conv_transpose2d_groups2_float32", (1, 3, 3, 4), (4, 2, 2, 2), 2, 0, 1, 0, 2),
        ("convTranspose2d", "conv_transpose2d_dilation_list_float32", (1, 4, 3, 2), (2, 2, 3, 2), 1, 0, [1, 2], 0, 1),
        ("convTranspose2d", "conv_transpose2d_mixed_stride_padding_float32", (2, 3, 3, 1), (2, 3, 2, 1),
         [1, 2], [0, 1], 1, 0, 1),
    ]:
        seed += 2
        x, w = g.randn(seed, xs), g.randn(seed + 1, ws)
        mfn = {"convTranspose1d": mx.conv_transpose1d, "convTranspose2d": mx.conv_transpose2d}[op]
        g.add_case(name, op, [x, w],
                   {"stride": st, "padding": pd, "dilation": dl, "outputPadding": opd, "groups": gr},
                   lambda a, b, mfn=mfn, st=st, pd=pd, dl=dl, opd=opd, gr=gr: mfn(
                       a, b, stride=_pair(st, 2) if isinstance(st, list) else st,
                       padding=_pair(pd, 2) if isinstance(pd, list) else pd,
                       dilation=_pair(dl, 2) if isinstance(dl, list) else dl,
                       output_padding=_pair(opd, 2) if isinstance(opd, list) else opd, groups=gr),
                   lambda a, b, st=st, pd=pd, dl=dl, opd=opd, gr=gr: _conv_t_ref(g, a, b, st, pd, dl, opd, gr),
                   g.MATMUL)


# ---- pad / tile / repeat / roll ------------------------------------------------------------------
# pad: padWidth is one [before, after] pair per axis (non-negative; MLX rejects negative ones),
# constantValues is cast to the array's dtype (MLX truncates 2.7 to 2 for int32; for bool, 1 ->
# true), so int and bool cases use integral values. "edge" needs a non-empty axis to copy from
# wherever that axis is padded (MLX and NumPy both reject it otherwise).

def pad_cases(g):
    seed = 9300
    for name, x, pw, mode, cv in [
        ("pad_constant_2d_float32", g.randn(seed, (2, 3)), [[1, 2], [0, 1]], "constant", 0),
        ("pad_constant_value_rank3_float32", g.randn(seed + 1, (2, 2, 3)), [[0, 0], [1, 0], [2, 1]], "constant", -1.5),
        ("pad_constant_rank4_float32", g.randn(seed + 2, (1, 2, 2, 3)), [[0, 0], [1, 1], [1, 1], [0, 0]], "constant", 0),
        ("pad_edge_2d_float32", g.randn(seed + 3, (3, 2)), [[2, 1], [1, 3]], "edge", 0),
        ("pad_edge_rank3_float32", g.randn(seed + 4, (2, 1, 3)), [[1, 0], [2, 2], [0, 1]], "edge", 0),
        ("pad_edge_1d_len1_float32", g.f32([4.5]), [[3, 2]], "edge", 0),
        ("pad_zero_width_float32", g.randn(seed + 5, (2, 3)), [[0, 0], [0, 0]], "constant", 5),
        ("pad_constant_int32", g.randi(seed + 6, (2, 3)), [[1, 1], [1, 1]], "constant", 7),
        ("pad_constant_negative_int32", g.randi(seed + 7, (3,)), [[2, 0]], "constant", -3),
        ("pad_edge_int32", g.randi(seed + 8, (2, 2)), [[1, 1], [0, 2]], "edge", 0),
        ("pad_constant_uint32", g.randui(seed + 9, (2, 2)), [[0, 1], [2, 0]], "constant", 4000000000),
        ("pad_edge_uint32", g.randui(seed + 10, (2, 2)), [[0, 2], [1, 0]], "edge", 0),
        ("pad_constant_bool", g.randb(seed + 11, (2, 3)), [[1, 0], [0, 2]], "constant", 1),
        ("pad_edge_bool", g.randb(seed + 12, (2, 3)), [[1, 1], [1, 1]], "edge", 0),
        ("pad_empty_constant_float32", np.zeros((0, 3), np.float32), [[1, 1], [0, 2]], "constant", 2.5),
        ("pad_empty_edge_other_axis_float32", np.zeros((0, 3), np.float32), [[0, 0], [1, 1]], "edge", 0),
        ("pad_scalar_float32", g.f32(1.25, ()), [], "constant", 0),
    ]:
        def ref(a, pw=pw, mode=mode, cv=cv):
            if a.ndim == 0:
                return a.copy()
            if mode == "edge":
                return np.pad(a, pw, mode="edge")
            return np.pad(a, pw, mode="constant", constant_values=np.array(cv).astype(a.dtype))
        g.add_case(name, "pad", [x], {"padWidth": pw, "mode": mode, "constantValues": cv},
                   lambda a, pw=pw, mode=mode, cv=cv: mx.pad(a, [tuple(p) for p in pw], mode=mode, constant_values=cv),
                   ref, g.EXACT)


def tile_cases(g):
    seed = 9330
    for name, x, reps in [
        ("tile_2d_float32", g.randn(seed, (2, 3)), [2, 2]),
        ("tile_short_reps_float32", g.randn(seed + 1, (2, 3)), [3]),
        ("tile_long_reps_float32", g.randn(seed + 2, (2, 3)), [2, 1, 2]),
        ("tile_rank3_float32", g.randn(seed + 3, (2, 1, 3)), [1, 3, 2]),
        ("tile_ones_float32", g.randn(seed + 4, (2, 2)), [1, 1]),
        ("tile_zero_rep_float32", g.randn(seed + 5, (2, 3)), [0, 2]),
        ("tile_scalar_float32", g.f32(2.5, ()), [3]),
        ("tile_scalar_2d_reps_int32", g.i32(-4, ()), [2, 3]),
        ("tile_1d_int32", g.randi(seed + 6, (3,)), [4]),
        ("tile_uint32", g.randui(seed + 7, (2, 2)), [1, 3]),
        ("tile_bool", g.randb(seed + 8, (1, 3)), [2, 2]),
        ("tile_empty_float32", np.zeros((0, 2), np.float32), [3, 2]),
    ]:
        g.add_case(name, "tile", [x], {"reps": reps}, lambda a, reps=reps: mx.tile(a, reps),
                   lambda a, reps=reps: np.tile(a, reps), g.EXACT)


def repeat_cases(g):
    seed = 9350
    for name, x, r, axis in [
        ("repeat_flat_float32", g.randn(seed, (2, 3)), 2, None),
        ("repeat_axis0_float32", g.randn(seed + 1, (2, 3)), 3, 0),
        ("repeat_axis_m1_rank3_float32", g.randn(seed + 2, (2, 2, 3)), 2, -1),
        ("repeat_axis1_rank3_int32", g.randi(seed + 3, (2, 3, 2)), 2, 1),
        ("repeat_once_float32", g.randn(seed + 4, (2, 3)), 1, 0),
        ("repeat_zero_float32", g.randn(seed + 5, (2, 3)), 0, 1),
        ("repeat_zero_flat_float32", g.randn(seed + 6, (2, 3)), 0, None),
        ("repeat_scalar_float32", g.f32(1.5, ()), 3, None),
        ("repeat_uint32", g.randui(seed + 7, (4,)), 3, 0),
        ("repeat_bool", g.randb(seed + 8, (2, 2)), 2, None),
        ("repeat_empty_float32", np.zeros((0, 2), np.float32), 3, 1),
    ]:
        g.add_case(name, "repeat", [x], {"repeats": r, "axis": axis},
                   lambda a, r=r, axis=axis: mx.repeat(a, r, axis=axis),
                   lambda a, r=r, axis=axis: np.repeat(a, r, axis=axis), g.EXACT)


# roll: a shift list pairs with an axis list (one shift per axis); an int shift with an axis list
# rolls each of those axes by it; axis null rolls the flattened array (shape kept).

def roll_cases(g):
    seed = 9370
    for name, x, shift, axis in [
        ("roll_flat_float32", g.randn(seed, (3, 4)), 5, None),
        ("roll_flat_negative_float32", g.randn(seed + 1, (3, 4)), -5, None),
        ("roll_flat_full_turn_float32", g.randn(seed + 2, (3, 4)), 12, None),
        ("roll_axis0_float32", g.randn(seed + 3, (3, 4)), 1, 0),
        ("roll_axis_m1_big_shift_float32", g.randn(seed + 4, (3, 4)), 7, -1),
        ("roll_axis_m1_negative_big_shift_float32", g.randn(seed + 5, (3, 4)), -9, -1),
        ("roll_multi_axis_float32", g.randn(seed + 6, (2, 3, 4)), [1, -2], [0, 2]),
        ("roll_int_shift_axis_list_float32", g.randn(seed + 7, (3, 4)), 1, [0, 1]),
        ("roll_zero_float32", g.randn(seed + 8, (2, 3)), 0, None),
        ("roll_int32", g.randi(seed + 9, (6,)), 2, 0),
        ("roll_uint32", g.randui(seed + 10, (2, 3)), -1, 1),
        ("roll_bool", g.randb(seed + 11, (2, 3)), 4, None),
        ("roll_empty_float32", np.zeros((0, 3), np.float32), 2, 0),
        ("roll_empty_flat_float32", np.zeros((0, 3), np.float32), 2, None),
        ("roll_scalar_float32", g.f32(3.0, ()), 2, None),
    ]:
        tup = lambda v: tuple(v) if isinstance(v, list) else v
        g.add_case(name, "roll", [x], {"shift": shift, "axis": axis},
                   lambda a, shift=shift, axis=axis: mx.roll(a, tup(shift), tup(axis)),
                   lambda a, shift=shift, axis=axis: np.roll(a, tup(shift), tup(axis)), g.EXACT)


# ---- diag / diagonal -----------------------------------------------------------------------------
# diag: 1-D in -> 2-D out (the vector on diagonal k of an (n + |k|)-square zero matrix), 2-D in ->
# 1-D out (diagonal k; empty when k is past the matrix). diagonal: the (axis1, axis2) diagonal,
# appended as the last axis after the remaining axes; axis1 > axis2 reads the transposed plane.

def diag_cases(g):
    seed = 9400
    for name, x, k in [
        ("diag_1d_float32", g.randn(seed, (4,)), 0),
        ("diag_1d_k1_float32", g.randn(seed + 1, (3,)), 1),
        ("diag_1d_km2_int32", g.randi(seed + 2, (3,)), -2),
        ("diag_1d_bool", g.bools([True, False, True]), 1),
        ("diag_1d_empty_k2_float32", np.zeros((0,), np.float32), 2),
        ("diag_2d_float32", g.randn(seed + 3, (4, 4)), 0),
        ("diag_2d_k2_rect_float32", g.randn(seed + 4, (3, 5)), 2),
        ("diag_2d_km1_rect_float32", g.randn(seed + 5, (3, 5)), -1),
        ("diag_2d_km2_tall_float32", g.randn(seed + 6, (5, 3)), -2),
        ("diag_2d_k_past_end_float32", g.randn(seed + 7, (3, 5)), 7),
        ("diag_2d_km_past_end_float32", g.randn(seed + 8, (3, 5)), -3),
        ("diag_2d_uint32", g.randui(seed + 9, (3, 3)), 1),
        ("diag_2d_bool", g.randb(seed + 10, (3, 3)), 0),
    ]:
        g.add_case(name, "diag", [x], {"k": k}, lambda a, k=k: mx.diag(a, k=k),
                   lambda a, k=k: np.diag(a, k=k).copy(), g.EXACT)


def diagonal_cases(g):
    seed = 9420
    for name, x, off, a1, a2 in [
        ("diagonal_2d_float32", g.randn(seed, (4, 4)), 0, 0, 1),
        ("diagonal_2d_offset_float32", g.randn(seed + 1, (3, 5)), 2, 0, 1),
        ("diagonal_2d_negative_offset_float32", g.randn(seed + 2, (5, 3)), -2, 0, 1),
        ("diagonal_2d_swapped_axes_float32", g.randn(seed + 3, (3, 5)), 1, 1, 0),
        ("diagonal_rank3_axes12_float32", g.randn(seed + 4, (2, 3, 4)), 0, 1, 2),
        ("diagonal_rank3_axes02_float32", g.randn(seed + 5, (3, 2, 4)), 1, 0, 2),
        ("diagonal_rank3_swapped_axes_float32", g.randn(seed + 6, (2, 3, 4)), 1, 2, 0),
        ("diagonal_negative_axes_int32", g.randi(seed + 7, (2, 3, 4)), -1, -1, -2),
        ("diagonal_offset_past_end_float32", g.randn(seed + 8, (2, 3, 4)), 5, 1, 2),
        ("diagonal_rank4_float32", g.randn(seed + 9, (2, 3, 2, 3)), 0, 1, 3),
        ("diagonal_uint32", g.randui(seed + 10, (3, 4)), -1, 0, 1),
        ("diagonal_bool", g.randb(seed + 11, (3, 3)), 0, 1, 0),
        ("diagonal_empty_float32", np.zeros((0, 3, 3), np.float32), 0, 1, 2),
    ]:
        g.add_case(name, "diagonal", [x], {"offset": off, "axis1": a1, "axis2": a2},
                   lambda a, off=off, a1=a1, a2=a2: mx.diagonal(a, off, a1, a2),
                   lambda a, off=off, a1=a1, a2=a2: np.diagonal(a, off, a1, a2).copy(), g.EXACT)


# ---- tensordot / einsum --------------------------------------------------------------------------
# float32 only: MLX's CPU matmul rejects int32 ("Only inexact types are supported"), and both ops
# go through it. tensordot axes: an int n (last n of a with first n of b; 0 = outer product) or
# [[a axes], [b axes]] (negative axes allowed). einsum: explicit "->" subscripts, no repeated
# index within one operand.

def tensordot_cases(g):
    seed = 9450
    for n, (name, sa, sb, axes) in enumerate([
        ("tensordot_axes1_float32", (3, 4), (4, 5), 1),
        ("tensordot_axes2_float32", (2, 3, 4), (3, 4, 5), 2),
        ("tensordot_axes0_outer_float32", (2, 3), (3,), 0),
        ("tensordot_axes_lists_float32", (3, 4, 5), (5, 3, 2), [[0, 2], [1, 0]]),
        ("tensordot_negative_axes_float32", (2, 3, 4), (4, 3), [[-1, -2], [0, 1]]),
        ("tensordot_single_axis_list_float32", (4, 3), (2, 4), [[0], [1]]),
        ("tensordot_full_contraction_float32", (3, 4), (3, 4), 2),
        ("tensordot_empty_contraction_float32", (2, 0), (0, 3), 1),
    ]):
        a = g.randn(seed + 2 * n, sa) if 0 not in sa else np.zeros(sa, np.float32)
        b = g.randn(seed + 2 * n + 1, sb) if 0 not in sb else np.zeros(sb, np.float32)
        g.add_case(name, "tensordot", [a, b], {"axes": axes},
                   lambda x, y, axes=axes: mx.tensordot(x, y, axes=axes),
                   lambda x, y, axes=axes: g.to_f32(np.tensordot(g.as_f64(x), g.as_f64(y), axes=axes)), g.MATMUL)


def einsum_cases(g):
    seed = 9480
    for n, (name, sub, shapes) in enumerate([
        ("einsum_matmul_float32", "ij,jk->ik", [(3, 4), (4, 5)]),
        ("einsum_batch_matmul_float32", "bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
        ("einsum_transpose_float32", "ij->ji", [(3, 4)]),
        ("einsum_permute_rank3_float32", "abc->cab", [(2, 3, 4)]),
        ("einsum_row_sum_float32", "ij->i", [(3, 4)]),
        ("einsum_column_sum_float32", "ij->j", [(3, 4)]),
        ("einsum_total_sum_float32", "ij->", [(3, 4)]),
        ("einsum_outer_float32", "i,j->ij", [(3,), (4,)]),
        ("einsum_dot_float32", "i,i->", [(5,), (5,)]),
        ("einsum_matvec_float32", "ij,j->i", [(3, 4), (4,)]),
        ("einsum_hadamard_float32", "ij,ij->ij", [(2, 3), (2, 3)]),
        ("einsum_attention_scores_float32", "bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]),
        ("einsum_attention_values_float32", "bhqk,bhkd->bhqd", [(1, 2, 3, 5), (1, 2, 5, 4)]),
        ("einsum_three_operands_float32", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
        ("einsum_bilinear_float32", "bi,ij,bj->b", [(2, 3), (3, 4), (2, 4)]),
    ]):
        ops = [g.randn(seed + 4 * n + i, s) for i, s in enumerate(shapes)]
        g.add_case(name, "einsum", ops, {"subscripts": sub},
                   lambda *a, sub=sub: mx.einsum(sub, *a),
                   lambda *a, sub=sub: g.to_f32(np.einsum(sub, *[g.as_f64(x) for x in a])), g.MATMUL)


# ----------------------------------------------------------------------------------------------
# Pending families: key -> generator (ops per key in the comment). Not part of cases(g).
# ----------------------------------------------------------------------------------------------

PENDING = {}  # none now: every family above ships in cases(g)


def check_pending(g, keys=None):
    """Runs the pending families (all, or those in `keys`) through g.add_case, so each case's MLX
    result is checked against its NumPy reference; the cases land in g.CASES, no file is written.
    Returns {op: number of cases}."""
    counts = {}
    for key, fn in PENDING.items():
        if keys is not None and key not in keys:
            continue
        start = len(g.CASES)
        fn(g)
        for c in g.CASES[start:]:
            counts[c["op"]] = counts.get(c["op"], 0) + 1
    return counts
