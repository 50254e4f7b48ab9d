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
