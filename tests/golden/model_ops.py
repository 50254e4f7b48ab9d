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


def cases(g):
    nan_to_num_cases(g)
