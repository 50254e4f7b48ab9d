#!/usr/bin/env python3
"""Generate golden test values for tandem's ops from MLX (CPU), checked against NumPy.

What it does
------------
Builds a list of test cases, one per (op, inputs, params), covering every op in the "Ops"
section of the API (docs/reference.md) plus the non-random creation ops (zeros, ones, full, arange,
linspace, eye). For each case it

1. computes the expected output with ``mlx.core`` on the CPU device (MLX is the semantic
   reference: dtype promotion, NaN handling, integer wrap-around, ...);
2. computes an independent NumPy reference (float ops in float64, then rounded once to the
   result's float dtype; integer ops in int64/uint64 or Python ints, then wrapped to 32 or 8
   bits; MLX-specific semantics such as ``sign(nan) == 0`` or ``bool - bool == xor`` are
   spelled out explicitly in the reference);
3. asserts that MLX and the reference agree within the case's tolerance
   ``|actual - expected| <= atol + rtol * |expected|`` (NaN matches NaN, infinities must
   match exactly, and for exact cases (rtol = atol = 0) the sign of zero must match too);
   any disagreement stops the script with an error; for the packed dtypes' reductions, scans,
   softmax, matmul and norms it also asserts that a model of tandem's own computation (float32
   inside each kernel, rounded once at each kernel's store) lies within the tolerance of MLX;
4. asserts that every input and output dtype is one of tandem's dtypes (float32, int32,
   uint32, bool, and the packed float16, bfloat16, int8, uint8), and that no bfloat16 value
   is subnormal unless the case also holds a float32 subnormal (see check_subnormals).

The packed dtypes' cases (``half_cases``, after all the others) take their inputs as MLX arrays
of the dtype, so every value is exact in it; NumPy holds bfloat16 as uint16 bit patterns. Their
tolerances, and the inputs left out where MLX's half-precision result is off, are described
where they are made ("packed dtypes" below).

Deliberate exceptions (see KNOWN_MLX_CPU_DEVIATIONS below), where MLX's CPU result is a bug
or contradicts tandem's accuracy promise, and the golden value is the float64 reference instead:
- MLX's CPU ``exp`` returns +inf for every x > 88.0, although exp(x) is finite up to
  x ~= 88.72 (tandem promises transcendentals accurate over the whole float32 range).
For those cases the script asserts that MLX really does deviate (so the exception is noticed
if MLX changes).

The result is written to ``golden.json`` next to this file (format: see README.md).
Inputs are generated deterministically with ``numpy.random.default_rng(seed)``.

How to run (from the repository root)
-------------------------------------
    python3 -m venv /tmp/golden-venv
    /tmp/golden-venv/bin/pip install "mlx[cpu]" numpy
    /tmp/golden-venv/bin/python tests/golden/make_golden.py
"""

import json
import math
import os
import sys
import warnings

import mlx.core as mx
import mlx.nn as nn
import numpy as np

mx.set_default_device(mx.cpu)

F32, I32, U32, BOOL = "float32", "int32", "uint32", "bool"
F16, BF16, I8, U8 = "float16", "bfloat16", "int8", "uint8"  # tandem's packed dtypes
# NumPy has no bfloat16: a bfloat16 array is held here as a uint16 array of its bit patterns
# (tandem has no uint16 dtype, so the two cannot be confused); see bf16_bits / widen.
NP_DT = {F32: np.float32, I32: np.int32, U32: np.uint32, BOOL: np.bool_,
         F16: np.float16, BF16: np.uint16, I8: np.int8, U8: np.uint8}
MX_DT = {F32: mx.float32, I32: mx.int32, U32: mx.uint32, BOOL: mx.bool_,
         F16: mx.float16, BF16: mx.bfloat16, I8: mx.int8, U8: mx.uint8}
MX_TO_NAME = {v: k for k, v in MX_DT.items()}
NP_TO_NAME = {np.dtype(v): k for k, v in NP_DT.items()}
FLOATS = (F32, F16, BF16)

EXACT = dict(rtol=0.0, atol=0.0)
TRANS = dict(rtol=1e-5, atol=1e-6)  # transcendentals, float reductions
MATMUL = dict(rtol=1e-5, atol=1e-5)
CREATE = dict(rtol=1e-6, atol=1e-6)  # float arange/linspace: MLX accumulates in float32

NAN, INF = float("nan"), float("inf")

# Case names whose golden output is the float64 reference because MLX's CPU result is wrong
# there (it contradicts tandem's accuracy promise). The script asserts MLX still deviates.
KNOWN_MLX_CPU_DEVIATIONS = {
    "exp_near_overflow_float32": "MLX CPU exp() returns inf for all x > 88.0 "
    "(mlx/backend/cpu/simd/math.h); the true exp(x) is finite up to x ~= 88.72",
}

CASES = []
NAMES = set()


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------

def rng(seed):
    return np.random.default_rng(seed)


def f32(values, shape=None):
    a = np.array(values, dtype=np.float32)
    return a.reshape(shape) if shape is not None else a


def i32(values, shape=None):
    a = np.array(values, dtype=np.int64).astype(np.int32)
    return a.reshape(shape) if shape is not None else a


def u32(values, shape=None):
    a = np.array(values, dtype=np.int64).astype(np.uint32)
    return a.reshape(shape) if shape is not None else a


def bools(values, shape=None):
    a = np.array(values, dtype=np.bool_)
    return a.reshape(shape) if shape is not None else a


def randn(seed, shape, scale=1.0):
    return (rng(seed).standard_normal(shape) * scale).astype(np.float32)


def randu(seed, shape, lo, hi):
    return rng(seed).uniform(lo, hi, shape).astype(np.float32)


def randi(seed, shape, lo=-100, hi=100):
    return rng(seed).integers(lo, hi, shape).astype(np.int32)


def randui(seed, shape, lo=0, hi=200):
    return rng(seed).integers(lo, hi, shape).astype(np.uint32)


def randb(seed, shape):
    return rng(seed).random(shape) < 0.5


def gen(dtype, seed, shape):
    """Random input of a dtype, small values."""
    return {F32: lambda: randn(seed, shape), I32: lambda: randi(seed, shape),
            U32: lambda: randui(seed, shape), BOOL: lambda: randb(seed, shape)}[dtype]()


def dtype_name(a):
    if isinstance(a, mx.array):
        return MX_TO_NAME.get(a.dtype)
    return NP_TO_NAME[a.dtype]


def bf16_to_f32(bits):
    """bfloat16 bit patterns (uint16) -> their float32 values (exact)."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def bf16_bits(x):
    """float64 values -> bfloat16 bit patterns, rounded to nearest even once (no double rounding
    through float32: a float32 that lands exactly on a bfloat16 tie is nudged the way the float64
    value lies). NaN -> quiet NaN of the same sign."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        f = x.astype(np.float32)
    b = f.view(np.uint32).astype(np.uint64)
    tie = ((b & 0xFFFF) == 0x8000) & np.isfinite(x) & (f.astype(np.float64) != x)
    away = tie & (np.abs(x) > np.abs(f.astype(np.float64)))  # true value beyond the tie: round up
    toward = tie & ~away
    r = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
    r = np.where(away, (b >> 16) + 1, np.where(toward, b >> 16, r))
    r = np.where(np.isnan(x), (b >> 16) | 0x40, r)
    return r.astype(np.uint16)


def widen(a):
    """Any array of a tandem dtype (bfloat16 as bit patterns) -> float64 values."""
    if dtype_name(a) == BF16:
        return bf16_to_f32(a).astype(np.float64)
    return np.asarray(a).astype(np.float64)


def round_to(dt, x):
    """float64 values -> the array of float dtype `dt`, rounded to nearest even once."""
    with np.errstate(all="ignore"):
        x = np.asarray(x, dtype=np.float64)
        if dt == F32:
            return x.astype(np.float32)
        if dt == F16:
            return x.astype(np.float16)  # NumPy rounds double -> half directly (no float32 step)
    assert dt == BF16, dt
    return bf16_bits(x)


def to_mx(a):
    """A NumPy input array (bfloat16 as bit patterns) -> the MLX array of its dtype."""
    dt = dtype_name(a)
    # Empty inputs are made with mx.zeros: in MLX 0.32.4 (CPU) a reduction over the zero-length
    # axis of an empty array made by mx.array(numpy_array) sometimes deadlocks in mx.eval, and
    # prod over all axes of such an array returns 0 instead of 1. Arrays from mx.zeros behave.
    if a.size == 0:
        return mx.zeros(a.shape, dtype=MX_DT[dt])
    if dt == BF16:
        return mx.array(a).view(mx.bfloat16)
    return mx.array(a)


def from_mx(o):
    """An MLX result -> NumPy (bfloat16 as bit patterns), or None for a dtype tandem lacks."""
    dt = MX_TO_NAME.get(o.dtype)
    if dt is None:
        return None
    if dt == BF16:
        o = o.view(mx.uint16)
    return np.array(o, copy=True).astype(NP_DT[dt]).reshape(tuple(o.shape))


def promote(*dts):
    """MLX's type promotion restricted to tandem's dtypes (None = leaves them, e.g. int64)."""
    dts = set(dts)
    if F32 in dts:
        return F32
    dts.discard(BOOL) if len(dts) > 1 else None
    if dts == {BOOL}:
        return BOOL
    if len(dts) == 1:
        return dts.pop()
    return None  # int32 with uint32 -> int64 in MLX


def wrap(v, dt):
    """Wrap int64/uint64/object values to a 32-bit integer dtype, like C."""
    v = np.asarray(v, dtype=object)
    flat = [int(x) % (1 << 32) for x in v.reshape(-1)]
    if dt == I32:
        flat = [x - (1 << 32) if x >= (1 << 31) else x for x in flat]
        return np.array(flat, dtype=np.int64).astype(np.int32).reshape(v.shape)
    return np.array(flat, dtype=np.uint64).astype(np.uint32).reshape(v.shape)


def as_f64(a):
    """Input converted as MLX converts it to float32 first, then widened to float64."""
    return np.asarray(a).astype(np.float32).astype(np.float64)


def as_i64(a):
    return np.asarray(a).astype(np.int64)


def to_f32(x):
    with np.errstate(all="ignore"):
        return np.asarray(x, dtype=np.float64).astype(np.float32)


def encode(a):
    """numpy array -> {"dtype", "shape", "data"} with the JSON conventions of README.md."""
    dt = dtype_name(a)
    flat = a.reshape(-1)
    if dt in FLOATS:
        data = []
        # float16 and bfloat16 values are exact in float32, and float() of a float32 is exact
        for x in (flat if dt == F32 else widen(flat).astype(np.float32)):
            x = np.float32(x)
            if np.isnan(x):
                data.append("nan")
            elif np.isinf(x):
                data.append("inf" if x > 0 else "-inf")
            else:
                data.append(float(x))
    elif dt == BOOL:
        data = [bool(x) for x in flat]
    else:
        data = [int(x) for x in flat]
    return {"dtype": dt, "shape": [int(s) for s in a.shape], "data": data}


def check_close(name, got, ref, rtol, atol):
    """Assert MLX output `got` (numpy) matches reference `ref` (numpy, same dtype)."""
    if got.shape != ref.shape:
        raise AssertionError(f"{name}: shape {got.shape} != reference {ref.shape}")
    if got.dtype != ref.dtype:
        raise AssertionError(f"{name}: dtype {got.dtype} != reference {ref.dtype}")
    if dtype_name(got) not in FLOATS:
        bad = got != ref
        if bad.any():
            raise AssertionError(f"{name}: exact mismatch\n got {got[bad][:8]}\n ref {ref[bad][:8]}")
        return
    g, r = widen(got), widen(ref)
    gn, rn = np.isnan(g), np.isnan(r)
    bad = gn != rn
    fin = ~(gn | rn)
    gi, ri = np.isinf(g) & fin, np.isinf(r) & fin
    bad |= fin & (gi | ri) & (g != r)
    both = fin & ~gi & ~ri
    with np.errstate(all="ignore"):
        bad |= both & (np.abs(g - r) > atol + rtol * np.abs(r))
    if rtol == 0 and atol == 0:
        bad |= both & (np.signbit(g) != np.signbit(r))
    if bad.any():
        raise AssertionError(
            f"{name}: MLX and NumPy reference disagree (rtol={rtol}, atol={atol})\n"
            f"  inputs idx {np.argwhere(bad)[:8].tolist()}\n  mlx {g[bad][:8]}\n  ref {r[bad][:8]}")


def check_subnormals(name, inputs, outputs):
    """bfloat16 shares float32's exponent range, so its subnormals are float32 subnormals, which
    a GPU may flush. The runner handles flushing only for cases with a float32 subnormal; a
    bfloat16 subnormal is allowed only in such a case."""
    def subnormal(a, dt):
        v = np.abs(widen(a))
        return bool(((v > 0) & (v < 2.0 ** -126)).any())
    specs = [(a, dtype_name(a)) for a in list(inputs) + list(outputs)]
    if any(subnormal(a, dt) for a, dt in specs if dt == BF16) and \
            not any(subnormal(a, dt) for a, dt in specs if dt == F32):
        raise AssertionError(f"{name}: a bfloat16 subnormal without a float32 one")


def add_case(name, op, inputs, params, mlx_fn, ref_fn, tol, multi=False, model_fn=None):
    """Run one case: MLX result, NumPy reference, comparison, JSON record.

    `model_fn`, where given (packed-dtype cases), models tandem's own computation (float32
    inside each kernel, one rounding to the packed dtype at each kernel's store); its result
    must also lie within the case's tolerance of MLX's, so that the tolerance covers both."""
    if name in NAMES:
        raise AssertionError(f"duplicate case name {name}")
    NAMES.add(name)
    for a in inputs:
        assert dtype_name(a) is not None, name
    mx_inputs = [to_mx(a) for a in inputs]
    for a, m in zip(inputs, mx_inputs):
        assert m.dtype == MX_DT[dtype_name(a)] and tuple(m.shape) == a.shape, name
    out = mlx_fn(*mx_inputs)
    outs = list(out) if multi else [out]
    mx.eval(*outs)
    got = []
    for o in outs:
        g = from_mx(o)
        if g is None:
            raise AssertionError(f"{name}: MLX result dtype {o.dtype} is not a tandem dtype")
        got.append(g)
    with np.errstate(all="ignore"):
        refs = ref_fn(*inputs)
    refs = list(refs) if multi else [refs]
    if len(refs) != len(got):
        raise AssertionError(f"{name}: {len(got)} outputs vs {len(refs)} reference outputs")
    final = []
    for g, r in zip(got, refs):
        r = np.asarray(r)
        if r.dtype != g.dtype:
            # the reference decides its own dtype; a mismatch is a semantic disagreement
            raise AssertionError(f"{name}: MLX dtype {g.dtype} != reference dtype {r.dtype}")
        if name in KNOWN_MLX_CPU_DEVIATIONS:
            try:
                check_close(name, g, r, **tol)
            except AssertionError:
                print(f"note: {name}: golden = float64 reference, not MLX: "
                      f"{KNOWN_MLX_CPU_DEVIATIONS[name]}", file=sys.stderr)
                final.append(r)
                continue
            raise AssertionError(f"{name}: expected MLX to deviate here, but it agrees; "
                                 "remove it from KNOWN_MLX_CPU_DEVIATIONS")
        check_close(name, g, r, **tol)
        final.append(g)
    if model_fn is not None:
        with np.errstate(all="ignore"):
            models = model_fn(*inputs)
        for g, m in zip(final, list(models) if multi else [models]):
            m = np.asarray(m)
            assert dtype_name(m) == dtype_name(g), (name, m.dtype, g.dtype)
            check_close(name + " (tandem model vs MLX)", m, g, **tol)
    check_subnormals(name, inputs, final)
    CASES.append({
        "name": name,
        "op": op,
        "inputs": [encode(a) for a in inputs],
        "params": params,
        "outputs": [encode(o) for o in final],
        "rtol": tol["rtol"],
        "atol": tol["atol"],
    })


# --------------------------------------------------------------------------------------
# unary ops
# --------------------------------------------------------------------------------------

def erf64(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x) if x.size else x


def erfinv64(x):
    """erfinv in float64: Newton's method on math.erf from a bisection start (exact to ~1e-15)."""
    def one(v):
        if math.isnan(v) or abs(v) > 1:
            return math.nan
        if abs(v) == 1:
            return math.copysign(math.inf, v)
        lo, hi = -6.0, 6.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if math.erf(mid) < v else (lo, mid)
        y = (lo + hi) / 2
        for _ in range(3):
            d = 2 / math.sqrt(math.pi) * math.exp(-y * y)
            if d == 0:
                break
            y -= (math.erf(y) - v) / d
        return y
    return np.vectorize(one, otypes=[np.float64])(x) if x.size else x


def sign_ref(x):
    # MLX: x > 0 ? 1 : (x < 0 ? -1 : 0), so sign(nan) == 0 and sign(-0) == 0 (positive zero)
    return np.where(x > 0, 1.0, np.where(x < 0, -1.0, 0.0))


def round_half_even(x):
    return np.round(x)  # numpy rounds half to even


# name -> (mlx fn, float64 reference on float64 input, tolerance, accepted int/bool inputs)
FLOAT_UNARY = {
    "sqrt": (mx.sqrt, np.sqrt, EXACT),
    "rsqrt": (mx.rsqrt, lambda x: 1.0 / np.sqrt(x), TRANS),
    "exp": (mx.exp, np.exp, TRANS),
    "expm1": (mx.expm1, np.expm1, TRANS),
    "log": (mx.log, np.log, TRANS),
    "log1p": (mx.log1p, np.log1p, TRANS),
    "sin": (mx.sin, np.sin, TRANS),
    "cos": (mx.cos, np.cos, TRANS),
    "tan": (mx.tan, np.tan, TRANS),
    "tanh": (mx.tanh, np.tanh, TRANS),
    "sigmoid": (mx.sigmoid, lambda x: 1.0 / (1.0 + np.exp(-x)), TRANS),
    "gelu": (nn.gelu, lambda x: x * (1.0 + erf64(x / math.sqrt(2.0))) / 2.0, TRANS),
    "erf": (mx.erf, erf64, TRANS),
    "reciprocal": (mx.reciprocal, lambda x: 1.0 / x, EXACT),
    "log2": (mx.log2, np.log2, TRANS),
    "log10": (mx.log10, np.log10, TRANS),
    "sinh": (mx.sinh, np.sinh, TRANS),
    "cosh": (mx.cosh, np.cosh, TRANS),
    "arcsin": (mx.arcsin, np.arcsin, TRANS),
    "arccos": (mx.arccos, np.arccos, TRANS),
    "arctan": (mx.arctan, np.arctan, TRANS),
    "arcsinh": (mx.arcsinh, np.arcsinh, TRANS),
    "arccosh": (mx.arccosh, np.arccosh, TRANS),
    "arctanh": (mx.arctanh, np.arctanh, TRANS),
    "erfinv": (mx.erfinv, erfinv64, TRANS),
}

# float class tests: name -> (mlx fn, numpy fn); every dtype in, bool out, exact
FLOAT_TESTS = {"isnan": (mx.isnan, np.isnan), "isinf": (mx.isinf, np.isinf),
               "isfinite": (mx.isfinite, np.isfinite)}

# ops that keep the integer dtype: name -> (mlx fn, float ref, int ref(int64 -> python ints), tol,
#                                           bool ref or None if MLX rejects bool)
SAME_DTYPE_UNARY = {
    "abs": (mx.abs, np.abs, np.abs, EXACT, lambda b: b),
    "neg": (mx.negative, np.negative, np.negative, EXACT, None),
    "sign": (mx.sign, sign_ref, lambda v: np.sign(v), EXACT, lambda b: b),
    "square": (mx.square, np.square, lambda v: v.astype(object) * v.astype(object), EXACT, lambda b: b),
    "floor": (mx.floor, np.floor, lambda v: v, EXACT, lambda b: b),
    "ceil": (mx.ceil, np.ceil, lambda v: v, EXACT, lambda b: b),
    "round": (mx.round, round_half_even, lambda v: v, EXACT, lambda b: b),
}

# generic edge values for float unary ops
EDGE = [0.0, -0.0, 1e-30, -1e-30, 1e-45, -1e-45, 1e-8, 0.5, -0.5, 1.0, -1.0, 2.5, -3.75,
        10.0, -10.0, 1e4, -1e4, 1e30, -1e30, 3.4e38, -3.4e38, NAN, INF, -INF]

EXTRA_EDGE = {
    "sin": ("large_args", [12345.678, -12345.678, 1e4, 2e4, 3e4, 5e4, 7.5e4, 1e5, -1e5, 3.14159265,
                           1.5707964, 6.2831855, 1e6, 8388607.0, 8388609.0, 1e7, 1e9]),
    "cos": ("large_args", [12345.678, -12345.678, 1e4, 2e4, 3e4, 5e4, 7.5e4, 1e5, -1e5, 3.14159265,
                           1.5707964, 6.2831855, 1e6, 8388607.0, 8388609.0, 1e7, 1e9]),
    "tan": ("large_args", [12345.678, -12345.678, 1e4, 2e4, 3e4, 5e4, 7.5e4, 1e5, -1e5, 3.14159265,
                           0.785398, 1.0, 1e6, 1e7, 1e9]),
    "exp": ("overflow_underflow", [80.0, 85.0, 87.9, 88.0, -87.3, -87.9, -88.0, -88.5, -89.0, -100.0,
                                   -103.0, -104.0, -110.0, -1e4]),
    "expm1": ("small_and_large", [1e-10, -1e-10, 1e-5, -1e-3, 0.1, -0.1, 20.0, -20.0, 80.0, 88.0,
                                  88.5, 88.7, -88.7, -100.0]),
    "log": ("zero_negative_tiny", [0.0, -0.0, -1.0, -1e-30, -INF, 1e-45, 1.1754944e-38, 1e-38, 1.0,
                                   0.999999, 1.000001, 2.0, 3.4e38]),
    "log1p": ("near_minus_one", [-1.0, -2.0, -0.999999, -0.5, 1e-10, -1e-10, 1e-7, 0.0, -0.0,
                                 1e10, 3.4e38]),
    "sigmoid": ("saturation", [-88.0, -88.5, -90.0, -100.0, 30.0, 88.0, 100.0, -1e-7, 1e-7]),
    "tanh": ("saturation", [1e-7, -1e-7, 0.01, 5.0, 9.0, 10.0, 15.0, 50.0, -50.0]),
    "erf": ("tails", [1e-7, 0.1, -0.1, 0.5, 1.5, 2.5, 3.0, 3.9, 4.5, 6.0, -6.0]),
    "gelu": ("range", [-6.0, -3.0, -1.5, -0.5, -1e-3, 1e-3, 0.5, 1.5, 3.0, 6.0]),
    "rsqrt": ("tiny_huge", [1e-45, 1e-38, 1e-20, 4.0, 1e20, 3.4e38, -1.0, 0.0, -0.0]),
    "sqrt": ("tiny_huge", [1e-45, 1e-38, 1e-20, 4.0, 2.0, 1e20, 3.4e38, -1.0, -0.0]),
    "reciprocal": ("tiny_huge", [1e-45, 1e-38, 3.0, 7.0, 1e38, 3.4e38, -0.0, 0.0]),
    "round": ("halves", [0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, -3.5, 0.49999997, -0.49999997,
                         1.4999999, 0.4, -0.4, 8388607.5, 8388609.0, 2.5e9, -2.5e9]),
    "floor": ("fractions", [0.5, -0.5, 0.4, -0.4, 1.9999999, -1.9999999, 8388607.5, -8388607.5, 2.5e9]),
    "ceil": ("fractions", [0.5, -0.5, 0.4, -0.4, 1.0000001, -1.0000001, 8388607.5, -8388607.5, 2.5e9]),
    "sign": ("zeros_nan", [0.0, -0.0, NAN, 1e-45, -1e-45, INF, -INF, 3.0, -3.0]),
    "abs": ("zeros_nan", [0.0, -0.0, NAN, -INF, -1e-45, -3.4e38]),
    "neg": ("zeros_nan", [0.0, -0.0, NAN, INF, 1e-45, 3.4e38]),
    "square": ("overflow", [1.8446743e19, 1.9e19, -1.9e19, 1e-23, -1e-23, 3.0]),
    "log2": ("powers", [1.0, 2.0, 8.0, 0.125, 1024.0, 1e-45, 3.4e38, 0.9999999, 1.0000001, 3.0]),
    "log10": ("powers", [1.0, 10.0, 1000.0, 0.001, 1e-45, 3.4e38, 0.9999999, 1.0000001]),
    "sinh": ("small_and_large", [1e-7, -1e-7, 1e-3, 0.5, 8.9, 9.1, 20.0, 88.0, 89.0, 89.4, 89.5, -89.4]),
    "cosh": ("small_and_large", [1e-7, -1e-3, 0.5, 8.9, 9.1, 20.0, 88.0, 89.0, 89.4, -89.4, 89.5]),
    "arcsin": ("domain", [1.0, -1.0, 0.5, 0.50000006, 0.49999997, 0.9999999, -0.9999999, 1.0000001,
                          -1.5, 1e-30, 1e-7]),
    "arccos": ("domain", [1.0, -1.0, 0.5, 0.50000006, 0.49999997, 0.9999999, -0.9999999, 1.0000001,
                          -1.5, 1e-30, -0.50000006]),
    "arctan": ("reductions", [0.41421354, 0.41421357, 2.4142134, 2.4142137, 1.0, -1.0, 1e7, 1e30]),
    "arcsinh": ("small_and_large", [1e-7, 5.9604645e-8, -1e-3, 0.5, 4095.0, 4097.0, 1e10, -1e30]),
    "arccosh": ("domain", [1.0, 1.0000001, 1.5, 2.0, 4095.0, 4097.0, 1e10, 0.9999999, -1.0]),
    "arctanh": ("domain", [1.0, -1.0, 0.9999999, -0.9999999, 0.5, 0.50000006, 1e-7, 1.0000001]),
    "erfinv": ("tails", [1.0, -1.0, 0.9999999, -0.9999999, 0.999, 0.9966, 0.9967, 0.5, 1e-7, 1.0000001]),
}

# random-input domain per float op (lo, hi) for uniform inputs, or None for normal
DOMAIN = {"log2": (0.01, 10.0), "log10": (0.01, 10.0), "arcsin": (-0.99, 0.99),
          "arccos": (-0.99, 0.99), "arctanh": (-0.99, 0.99), "erfinv": (-0.99, 0.99),
          "arccosh": (1.0, 10.0), "sqrt": (0.01, 10.0), "rsqrt": (0.01, 10.0), "log": (0.01, 10.0), "log1p": (-0.9, 10.0),
          "tan": (-1.4, 1.4), "exp": (-10.0, 10.0), "expm1": (-10.0, 10.0),
          "reciprocal": (0.1, 5.0)}


def float_input(op, seed, shape):
    if op in DOMAIN:
        lo, hi = DOMAIN[op]
        x = randu(seed, shape, lo, hi)
        if op == "reciprocal":
            x = x * np.where(randb(seed + 1, shape), 1, -1).astype(np.float32)
        return x
    return randn(seed, shape, 2.0)


def unary_cases():
    seed = 1000
    names = list(FLOAT_UNARY) + list(SAME_DTYPE_UNARY)
    for op in names + ["relu", "logicalNot"]:
        seed += 10
        snake = {"logicalNot": "logical_not"}.get(op, op)
        if op in FLOAT_UNARY:
            mfn, fref, tol = FLOAT_UNARY[op]

            def ref(x, fref=fref):
                return to_f32(fref(as_f64(x)))
            int_ref = bool_ref = ref
        elif op in SAME_DTYPE_UNARY:
            mfn, fref, iref, tol, bref = SAME_DTYPE_UNARY[op]

            def ref(x, fref=fref, iref=iref, bref=bref):
                dt = dtype_name(x)
                if dt == F32:
                    return to_f32(fref(x.astype(np.float64)))
                if dt == BOOL:
                    return bref(x)
                return wrap(iref(as_i64(x)), dt)
            int_ref = ref
            bool_ref = ref if bref is not None else None
        elif op == "relu":
            mfn, tol = nn.relu, EXACT

            def ref(x):
                dt = dtype_name(x)
                if dt == F32:
                    # maximum(x, 0) propagating nan
                    return to_f32(np.where(np.isnan(x), x, np.maximum(x.astype(np.float64), 0.0)))
                if dt == BOOL:  # MLX: maximum(bool, weak int 0) -> int32
                    return x.astype(np.int32)
                return np.maximum(x, 0).astype(x.dtype)
            int_ref = bool_ref = ref
        else:  # logicalNot
            mfn, tol = mx.logical_not, EXACT

            def ref(x):
                return np.logical_not(x.astype(np.bool_))  # nan is truthy
            int_ref = bool_ref = ref

        # float32 random, rank 2
        add_case(f"{snake}_float32", op, [float_input(op, seed, (3, 5))], {}, mfn, ref, tol)
        # rank 4
        add_case(f"{snake}_rank4_float32", op, [float_input(op, seed + 1, (2, 3, 2, 2))], {}, mfn, ref, tol)
        # scalar
        add_case(f"{snake}_scalar_float32", op, [float_input(op, seed + 2, ())], {}, mfn, ref, tol)
        # empty
        add_case(f"{snake}_empty_float32", op, [np.zeros((0, 3), np.float32)], {}, mfn, ref, tol)
        # generic edge values
        if op == "gelu":
            # MLX computes x * (1 + erf(x / sqrt(2))) / 2, so gelu(-inf) = -inf * 0 = nan and
            # gelu(3.4e38) overflows to inf in the intermediate x * 2; both are artifacts of that
            # formula, not a contract, so those two inputs are left out
            edge = [v for v in EDGE if v != -INF and v != 3.4e38]
        else:
            edge = EDGE
        add_case(f"{snake}_edge_float32", op, [f32(edge)], {}, mfn, ref, tol)
        if op in EXTRA_EDGE:
            tag, vals = EXTRA_EDGE[op]
            add_case(f"{snake}_{tag}_float32", op, [f32(vals)], {}, mfn, ref, tol)
        # integer and bool inputs
        if op in FLOAT_UNARY or op in ("relu", "logicalNot"):
            iv = {"sqrt": [0, 1, 4, 9, 2, 100000], "rsqrt": [1, 4, 9, 2, 100000, 0],
                  "log": [1, 2, 10, 100000, 0, -3], "log1p": [0, 1, 2, 10, -1, -5],
                  "reciprocal": [1, -2, 3, 8, 0, -7]}.get(op)
            ivals = i32(iv) if iv else randi(seed + 3, (2, 3), -5, 6)
            uvals = u32([abs(v) for v in iv]) if iv else randui(seed + 4, (2, 3), 0, 7)
        else:
            ivals = i32([0, 1, -1, 7, -8, 123456, -2147483648, 2147483647])
            uvals = u32([0, 1, 7, 123456, 2147483648, 4294967295])
            if op == "square":
                ivals = i32([0, 3, -3, 46340, 46341, -70000, 65536, 2147483647])
                uvals = u32([0, 3, 65535, 65536, 70000, 4294967295])
        add_case(f"{snake}_int32", op, [ivals], {}, mfn, int_ref, tol)
        add_case(f"{snake}_uint32", op, [uvals], {}, mfn, int_ref, tol)
        if bool_ref is not None:
            add_case(f"{snake}_bool", op, [bools([True, False, True])], {}, mfn, bool_ref, tol)

    for op, (mfn, npfn) in FLOAT_TESTS.items():
        seed += 10

        def ref(x, npfn=npfn):
            return npfn(as_f64(x))
        add_case(f"{op}_edge_float32", op, [f32(EDGE)], {}, mfn, ref, EXACT)
        add_case(f"{op}_rank3_float32", op, [randn(seed, (2, 3, 2))], {}, mfn, ref, EXACT)
        add_case(f"{op}_empty_float32", op, [np.zeros((0, 2), np.float32)], {}, mfn, ref, EXACT)
        add_case(f"{op}_int32", op, [i32([0, -1, 2147483647, -2147483648])], {}, mfn, ref, EXACT)
        add_case(f"{op}_uint32", op, [u32([0, 4294967295])], {}, mfn, ref, EXACT)
        add_case(f"{op}_bool", op, [bools([True, False])], {}, mfn, ref, EXACT)

    # exp near overflow: MLX CPU deviates, golden from the float64 reference (see docstring)
    add_case("exp_near_overflow_float32", "exp", [f32([88.0, 88.3, 88.5, 88.7, 88.72, 88.73, 89.0])],
             {}, mx.exp, lambda x: to_f32(np.exp(as_f64(x))), TRANS)


# --------------------------------------------------------------------------------------
# binary ops
# --------------------------------------------------------------------------------------

def arith_ref(opname):
    """Reference for add/subtract/multiply/maximum/minimum/power following MLX promotion."""

    def ref(a, b):
        dt = promote(dtype_name(a), dtype_name(b))
        assert dt is not None
        if dt == F32:
            x, y = as_f64(a), as_f64(b)
            r = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
                 "power": np.power,
                 "maximum": lambda x, y: np.where(np.isnan(x) | np.isnan(y), np.nan, np.maximum(x, y)),
                 "minimum": lambda x, y: np.where(np.isnan(x) | np.isnan(y), np.nan, np.minimum(x, y)),
                 }[opname](x, y)
            return to_f32(r)
        if dt == BOOL:
            x, y = np.broadcast_arrays(a, b)
            return {"add": x | y, "subtract": x ^ y, "multiply": x & y,
                    "power": x | ~y,  # MLX integer pow loop: b ? a : 1
                    "maximum": x | y, "minimum": x & y}[opname]
        x, y = np.broadcast_arrays(as_i64(a).astype(object), as_i64(b).astype(object))
        if opname == "power":
            r = np.frompyfunc(lambda p, q: 0 if q < 0 else pow(int(p), int(q), 1 << 32), 2, 1)(x, y)
        else:
            r = {"add": x + y, "subtract": x - y, "multiply": x * y,
                 "maximum": np.maximum(x, y), "minimum": np.minimum(x, y)}[opname]
        return wrap(r, dt)
    return ref


def divide_ref(a, b):
    # MLX: integer/bool inputs are cast to float32, then divided
    return to_f32(as_f64(a) / as_f64(b))


def float_ref(fn):
    """Reference of an op that computes in float32 whatever its operands."""
    return lambda a, b: to_f32(fn(as_f64(a), as_f64(b)))


def division_ref(opname):
    """floorDivide and remainder following MLX: floats take the float32 quotient rounded down
    (floorDivide) or the exact fmod moved to the divisor's sign (remainder); integers divide
    exactly, rounding down. Cases never divide an integer by zero (undefined in MLX)."""

    def ref(a, b):
        dt = promote(dtype_name(a), dtype_name(b))
        if dt == F32:
            x, y = np.broadcast_arrays(np.asarray(a, np.float32), np.asarray(b, np.float32))
            if opname == "floorDivide":
                with np.errstate(all="ignore"):
                    return np.floor(x / y).astype(np.float32)
            r = np.fmod(x.astype(np.float64), y.astype(np.float64))
            r = np.where((r != 0) & ((r < 0) != (y < 0)), r + y, r)
            return to_f32(r)
        x, y = np.broadcast_arrays(as_i64(a).astype(object), as_i64(b).astype(object))
        r = x // y if opname == "floorDivide" else x % y
        if dt == BOOL:
            return (r != 0).astype(np.bool_)
        return wrap(r, dt)
    return ref


def compare_ref(opname):
    fn = {"equal": np.equal, "notEqual": np.not_equal, "less": np.less,
          "lessEqual": np.less_equal, "greater": np.greater, "greaterEqual": np.greater_equal}[opname]

    def ref(a, b):
        dts = {dtype_name(a), dtype_name(b)}
        if F32 in dts:
            return fn(as_f64(a), as_f64(b))
        return fn(as_i64(a), as_i64(b))  # int32 vs uint32 compares as int64 in MLX
    return ref


def logical_ref(opname):
    fn = {"logicalAnd": np.logical_and, "logicalOr": np.logical_or}[opname]
    return lambda a, b: fn(a.astype(np.bool_), b.astype(np.bool_))


BINARY = {
    "add": (mx.add, arith_ref("add"), EXACT),
    "subtract": (mx.subtract, arith_ref("subtract"), EXACT),
    "multiply": (mx.multiply, arith_ref("multiply"), EXACT),
    "divide": (mx.divide, divide_ref, EXACT),
    "power": (mx.power, arith_ref("power"), TRANS),
    "maximum": (mx.maximum, arith_ref("maximum"), EXACT),
    "minimum": (mx.minimum, arith_ref("minimum"), EXACT),
    "equal": (mx.equal, compare_ref("equal"), EXACT),
    "notEqual": (mx.not_equal, compare_ref("notEqual"), EXACT),
    "less": (mx.less, compare_ref("less"), EXACT),
    "lessEqual": (mx.less_equal, compare_ref("lessEqual"), EXACT),
    "greater": (mx.greater, compare_ref("greater"), EXACT),
    "greaterEqual": (mx.greater_equal, compare_ref("greaterEqual"), EXACT),
    "logicalAnd": (mx.logical_and, logical_ref("logicalAnd"), EXACT),
    "logicalOr": (mx.logical_or, logical_ref("logicalOr"), EXACT),
    "logaddexp": (mx.logaddexp, float_ref(np.logaddexp), TRANS),
    "arctan2": (mx.arctan2, float_ref(np.arctan2), TRANS),
    "floorDivide": (mx.floor_divide, division_ref("floorDivide"), EXACT),
    "remainder": (mx.remainder, division_ref("remainder"), EXACT),
}

SNAKE = {"notEqual": "not_equal", "lessEqual": "less_equal", "greaterEqual": "greater_equal",
         "logicalAnd": "logical_and", "logicalOr": "logical_or", "expandDims": "expand_dims",
         "broadcastTo": "broadcast_to", "logicalNot": "logical_not", "floorDivide": "floor_divide"}


def binary_cases():
    seed = 2000
    for op, (mfn, ref, tol) in BINARY.items():
        seed += 20
        s = SNAKE.get(op, op)
        is_pow = op == "power"

        def fin(sd, shape):
            # positive bases for float power so random cases stay real-valued
            return randu(sd, shape, 0.1, 3.0) if is_pow else randn(sd, shape, 2.0)

        add_case(f"{s}_float32", op, [fin(seed, (3, 4)), fin(seed + 1, (3, 4))], {}, mfn, ref, tol)
        add_case(f"{s}_broadcast_row_float32", op, [fin(seed + 2, (2, 3)), fin(seed + 3, (3,))], {}, mfn, ref, tol)
        add_case(f"{s}_broadcast_col_float32", op, [fin(seed + 4, (3, 1)), fin(seed + 5, (1, 4))], {}, mfn, ref, tol)
        add_case(f"{s}_broadcast_rank4_float32", op, [fin(seed + 6, (2, 1, 3, 1)), fin(seed + 7, (4, 1, 2))], {},
                 mfn, ref, tol)
        add_case(f"{s}_scalar_float32", op, [fin(seed + 8, ()), fin(seed + 9, (2, 3))], {}, mfn, ref, tol)
        add_case(f"{s}_scalars_float32", op, [fin(seed + 10, ()), fin(seed + 11, ())], {}, mfn, ref, tol)
        add_case(f"{s}_empty_float32", op, [np.zeros((0, 3), np.float32), fin(seed + 12, (3,))], {}, mfn, ref, tol)

        # integer / bool / mixed dtypes
        if is_pow:
            ia, ib = i32([2, 3, -2, -3, 0, 1, -1, 7, 5, 10]), i32([3, 2, 3, 3, 0, 5, 7, 2, 0, 9])
            ua, ub = u32([2, 3, 0, 1, 7, 5, 10, 65535]), u32([3, 2, 0, 9, 2, 0, 9, 2])
        elif op == "divide":
            ia, ib = i32([7, -7, 7, -7, 1, 0, -1, 6, 2147483647, -2147483648]), i32([2, 2, -2, -2, 0, 0, 0, 3, 1, -1])
            ua, ub = u32([7, 1, 0, 6, 4294967295, 16777217]), u32([2, 0, 0, 3, 1, 1])
        else:
            ia, ib = randi(seed + 13, (2, 3)), randi(seed + 14, (2, 3))
            ua, ub = randui(seed + 15, (2, 3)), randui(seed + 16, (2, 3))
            if op in ("equal", "notEqual", "lessEqual", "greaterEqual"):
                ib[0, :2] = ia[0, :2]  # some ties
                ub[0, :2] = ua[0, :2]
        ba, bb = bools([True, True, False, False]), bools([True, False, True, False])
        ubool = bools([True, False])
        if op in ("floorDivide", "remainder"):
            # integer division by zero is undefined in MLX (and MIN // -1 traps): none here
            ia = i32([7, -7, 7, -7, 0, 5, -2147483648, 2147483647, -1, 6])
            ib = i32([2, 2, -2, -2, 3, 7, 3, -5, 2147483647, -3])
            ua, ub = u32([7, 0, 5, 4294967295, 1]), u32([2, 3, 7, 10, 4294967295])
            bb, ubool = bools([True, True, True, True]), bools([True, True])
        add_case(f"{s}_int32", op, [ia, ib], {}, mfn, ref, tol)
        add_case(f"{s}_uint32", op, [ua, ub], {}, mfn, ref, tol)
        add_case(f"{s}_bool", op, [ba, bb], {}, mfn, ref, tol)
        add_case(f"{s}_int32_float32", op, [randi(seed + 17, (2, 3), -5, 6),
                                            (randu(seed + 18, (3,), 0.5, 2.0) if is_pow else randn(seed + 18, (3,)))],
                 {}, mfn, ref, tol)
        add_case(f"{s}_bool_int32", op, [bools([True, False, True]), i32([-5, 6, 2])], {}, mfn, ref, tol)
        add_case(f"{s}_uint32_bool", op, [u32([3, 0, 7, 4294967295], (2, 2)), ubool], {}, mfn, ref, tol)
        add_case(f"{s}_uint32_float32", op, [u32([0, 3, 7, 4000000000]), f32([1.5, 2.0, 0.5, 1.0])], {}, mfn, ref, tol)
        # int32 with uint32 promotes to int64 in MLX: only ops whose result is bool/float32
        if op in ("divide", "equal", "notEqual", "less", "lessEqual", "greater", "greaterEqual",
                  "logicalAnd", "logicalOr"):
            add_case(f"{s}_int32_uint32", op, [i32([-1, 0, 5, -2147483648, 7, 2147483647]),
                                               u32([4294967295, 0, 5, 2147483648, 3, 2147483647])],
                     {}, mfn, ref, tol)

    # ---- op-specific edge cases ----
    nanv = f32([NAN, 1.0, NAN, -INF, INF, 2.0, NAN, -1.0])
    nanw = f32([1.0, NAN, NAN, 3.0, -INF, INF, INF, -2.0])
    for op in ("add", "subtract", "multiply", "divide", "maximum", "minimum", "equal", "notEqual",
               "less", "lessEqual", "greater", "greaterEqual", "logicalAnd", "logicalOr",
               "logaddexp", "arctan2", "floorDivide", "remainder"):
        mfn, ref, tol = BINARY[op]
        add_case(f"{SNAKE.get(op, op)}_nan_inf_float32", op, [nanv, nanw], {}, mfn, ref, tol)

    # signed zeros and infinities
    za = f32([0.0, -0.0, 0.0, -0.0, INF, -INF, INF, 1e38, -1e38, 1e-45])
    zb = f32([0.0, 0.0, -0.0, -0.0, INF, INF, -INF, 1e38, 1e38, 0.5])
    for op in ("add", "subtract", "multiply", "equal", "less", "lessEqual", "logaddexp", "arctan2",
               "floorDivide", "remainder"):
        mfn, ref, tol = BINARY[op]
        add_case(f"{SNAKE.get(op, op)}_zeros_inf_float32", op, [za, zb], {}, mfn, ref, tol)
    add_case("divide_by_zero_float32", "divide", [f32([1.0, -1.0, 0.0, -0.0, INF, 1.0, -1.0, NAN]),
                                                  f32([0.0, 0.0, 0.0, 0.0, 0.0, -0.0, -0.0, 0.0])],
             {}, mx.divide, divide_ref, EXACT)
    add_case("divide_tiny_huge_float32", "divide", [f32([1e-45, 3.4e38, 1.0, 1e30, 7.0]),
                                                    f32([2.0, 0.5, 3.4e38, 1e-30, 3.0])],
             {}, mx.divide, divide_ref, EXACT)

    # integer overflow wrap
    for op in ("add", "subtract", "multiply"):
        mfn, ref, tol = BINARY[op]
        add_case(f"{op}_wrap_int32", op,
                 [i32([2147483647, -2147483648, 65536, -65536, 2147483647, 46341, -1, 123456789]),
                  i32([1, 1, 65536, 65536, 2147483647, 46341, -2147483648, 987654321])], {}, mfn, ref, tol)
        add_case(f"{op}_wrap_uint32", op,
                 [u32([4294967295, 0, 65536, 65537, 4294967295, 3000000000, 1, 123456789]),
                  u32([1, 1, 65536, 65537, 4294967295, 3000000000, 2, 987654321])], {}, mfn, ref, tol)

    # power specials
    add_case("power_negative_base_float32", "power",
             [f32([-2.0, -2.0, -2.0, -0.5, -3.0, -1.0, -1.0, -8.0, -2.0, -2.0]),
              f32([3.0, 2.0, 0.0, -3.0, 4.0, 1e10, 1e10 + 1024, 1.0 / 3.0, 0.5, -1.0])],
             {}, mx.power, BINARY["power"][1], TRANS)
    add_case("power_special_float32", "power",
             [f32([0.0, 0.0, -0.0, -0.0, 0.0, INF, INF, -INF, -INF, NAN, 1.0, 2.0, 2.0, 0.5, 10.0]),
              f32([0.0, -1.0, -1.0, 3.0, 0.5, 0.0, -0.5, 3.0, 2.0, 0.0, NAN, 128.0, -150.0, -200.0, 38.0])],
             {}, mx.power, BINARY["power"][1], TRANS)
    add_case("power_wrap_int32", "power",
             [i32([3, -3, 7, 2, 2, -2, 10, 46341]), i32([21, 21, 13, 31, 32, 31, 10, 2])],
             {}, mx.power, BINARY["power"][1], EXACT)
    add_case("power_wrap_uint32", "power",
             [u32([3, 7, 2, 2, 10, 65536, 4294967295]), u32([21, 13, 31, 32, 10, 2, 3])],
             {}, mx.power, BINARY["power"][1], EXACT)
    add_case("power_negative_exponent_int32", "power",
             [i32([2, 1, -1, -1, 0, 5]), i32([-1, -1, -1, -2, -1, -3])],
             {}, mx.power, BINARY["power"][1], EXACT)
    # maximum/minimum vs -0: avoid ties between 0 and -0 (which one wins is an implementation detail)
    add_case("maximum_inf_float32", "maximum", [f32([-INF, INF, -INF, 3.4e38, -1e-45]),
                                                f32([-3.4e38, 3.4e38, -INF, INF, 1e-45])],
             {}, mx.maximum, BINARY["maximum"][1], EXACT)
    add_case("minimum_inf_float32", "minimum", [f32([-INF, INF, -INF, 3.4e38, -1e-45]),
                                                f32([-3.4e38, 3.4e38, -INF, INF, 1e-45])],
             {}, mx.minimum, BINARY["minimum"][1], EXACT)
    add_case("equal_int_float_rounding", "equal", [f32([16777216.0, 16777216.0, 2147483648.0]),
                                                   i32([16777216, 16777217, 2147483647])],
             {}, mx.equal, BINARY["equal"][1], EXACT)
    add_case("logical_and_float32_int32", "logicalAnd", [f32([0.0, -0.0, NAN, 0.5, 2.0, INF]),
                                                         i32([1, 1, 1, 0, -3, 2])],
             {}, mx.logical_and, BINARY["logicalAnd"][1], EXACT)
    add_case("logical_or_float32_int32", "logicalOr", [f32([0.0, -0.0, NAN, 0.5, 0.0, INF]),
                                                       i32([0, 0, 0, 0, -3, 0])],
             {}, mx.logical_or, BINARY["logicalOr"][1], EXACT)
    add_case("add_large_float32", "add", [randn(2900, (40, 25), 100.0), randn(2901, (25,), 100.0)],
             {}, mx.add, BINARY["add"][1], EXACT)


# --------------------------------------------------------------------------------------
# where, clip, astype
# --------------------------------------------------------------------------------------

def where_ref(c, x, y):
    dt = promote(dtype_name(x), dtype_name(y))
    return np.where(c.astype(np.bool_), x.astype(NP_DT[dt]), y.astype(NP_DT[dt]))


def where_cases():
    w = mx.where
    add_case("where_float32", "where", [randb(3000, (3, 4)), randn(3001, (3, 4)), randn(3002, (3, 4))],
             {}, w, where_ref, EXACT)
    add_case("where_broadcast_float32", "where", [randb(3003, (3, 1)), randn(3004, (1, 4)), f32(-1.5)],
             {}, w, where_ref, EXACT)
    add_case("where_broadcast_rank4_float32", "where",
             [randb(3005, (2, 1, 3, 1)), randn(3006, (4, 1, 2)), randn(3007, (2, 1, 1, 1))],
             {}, w, where_ref, EXACT)
    add_case("where_nan_float32", "where", [bools([True, False, True, False]),
                                            f32([NAN, NAN, INF, -0.0]), f32([1.0, -INF, NAN, NAN])],
             {}, w, where_ref, EXACT)
    add_case("where_int32", "where", [randb(3008, (2, 3)), randi(3009, (2, 3)), randi(3010, (2, 3))],
             {}, w, where_ref, EXACT)
    add_case("where_uint32", "where", [randb(3011, (5,)), randui(3012, (5,)), u32(4294967295)],
             {}, w, where_ref, EXACT)
    add_case("where_bool", "where", [bools([True, False, True, False]), bools([True, True, False, False]),
                                     bools([False, False, True, True])], {}, w, where_ref, EXACT)
    add_case("where_int32_float32", "where", [bools([True, False, True]), i32([1, 2, 3]), f32([0.5, 1.5, 2.5])],
             {}, w, where_ref, EXACT)
    add_case("where_uint32_bool", "where", [bools([True, False]), u32([7, 8]), bools([True, False])],
             {}, w, where_ref, EXACT)
    add_case("where_int32_cond", "where", [i32([0, 1, -2, 0]), f32([1.0, 2.0, 3.0, 4.0]), f32([-1.0, -2.0, -3.0, -4.0])],
             {}, w, where_ref, EXACT)
    add_case("where_float32_cond", "where", [f32([0.0, -0.0, NAN, 0.25]), i32([1, 2, 3, 4]), i32([-1, -2, -3, -4])],
             {}, w, where_ref, EXACT)
    add_case("where_scalar_float32", "where", [bools(True), f32(2.0), f32(3.0)], {}, w, where_ref, EXACT)
    add_case("where_empty_float32", "where", [np.zeros((0, 2), np.bool_), f32([1.0, 2.0]), f32(0.0)],
             {}, w, where_ref, EXACT)


def clip_cases():
    def mk(lo, hi):
        return (lambda x: mx.clip(x, lo, hi)), {"lo": lo, "hi": hi}

    def ref_for(lo, hi):
        def ref(x):
            dt = dtype_name(x)
            if dt == F32:
                v = x.astype(np.float64)
                r = np.minimum(np.maximum(v, lo), hi)
                return to_f32(np.where(np.isnan(v), np.nan, r))
            return np.minimum(np.maximum(as_i64(x), lo), hi).astype(NP_DT[dt])
        return ref

    cases = [
        ("clip_float32", randn(3100, (3, 5), 2.0), -1.0, 1.25),
        ("clip_rank4_float32", randn(3101, (2, 3, 2, 2), 2.0), -0.5, 0.5),
        ("clip_scalar_float32", f32(7.5), -1.0, 1.0),
        ("clip_empty_float32", np.zeros((0, 4), np.float32), 0.0, 1.0),
        ("clip_nan_inf_float32", f32([NAN, INF, -INF, -0.0, 0.0, 0.5, -2.0, 3.0]), -1.0, 1.0),
        ("clip_lo_above_hi_float32", f32([-5.0, 0.0, 2.0, 5.0, 10.0]), 3.0, 1.0),
        ("clip_int32", i32([-100, -5, -1, 0, 3, 7, 2147483647, -2147483648]), -3, 5),
        ("clip_uint32", u32([0, 1, 5, 9, 100, 4294967295]), 2, 50),
    ]
    for name, x, lo, hi in cases:
        fn, params = mk(lo, hi)
        add_case(name, "clip", [x], params, fn, ref_for(lo, hi), EXACT)


def astype_cases():
    def mk(dt):
        return lambda x: x.astype(MX_DT[dt])

    def ref_for(dt):
        def ref(x):
            src = dtype_name(x)
            if dt == BOOL:
                return x != 0  # nan != 0 -> true
            if src == F32 and dt in (I32, U32):
                return np.trunc(x.astype(np.float64)).astype(np.int64).astype(NP_DT[dt])
            if dt in (I32, U32):
                return wrap(as_i64(x), dt)
            return x.astype(np.float64).astype(np.float32)  # round-to-nearest-even to float32
        return ref

    fvals = f32([0.0, -0.0, 1.7, -1.7, 2.5, -2.5, 0.9999999, -0.9999999, 1e5, -123456.79,
                 2147483520.0, -2147483648.0, 16777217.0])
    fpos = f32([0.0, -0.0, 0.5, 1.7, 2.5, 0.9999999, 123456.79, 2147483648.0, 4294967040.0])
    fb = f32([0.0, -0.0, NAN, INF, -INF, 1e-45, -1e-45, 0.1, -2.0])
    ivals = i32([0, 1, -1, 7, 16777217, 16777219, -16777217, 2147483647, -2147483648, 100000001])
    uvals = u32([0, 1, 7, 16777217, 2147483647, 2147483648, 4294967295, 100000001])
    bvals = bools([True, False, True, True, False])
    cases = [
        ("astype_float32_to_int32", fvals, I32), ("astype_float32_to_uint32", fpos, U32),
        ("astype_float32_to_bool", fb, BOOL), ("astype_float32_to_float32", fb, F32),
        ("astype_int32_to_float32", ivals, F32), ("astype_int32_to_uint32", ivals, U32),
        ("astype_int32_to_bool", ivals, BOOL), ("astype_int32_to_int32", ivals, I32),
        ("astype_uint32_to_float32", uvals, F32), ("astype_uint32_to_int32", uvals, I32),
        ("astype_uint32_to_bool", uvals, BOOL), ("astype_uint32_to_uint32", uvals, U32),
        ("astype_bool_to_float32", bvals, F32), ("astype_bool_to_int32", bvals, I32),
        ("astype_bool_to_uint32", bvals, U32), ("astype_bool_to_bool", bvals, BOOL),
        ("astype_rank4_float32_to_int32", randn(3200, (2, 2, 3, 2), 50.0), I32),
        ("astype_scalar_int32_to_float32", i32(-42), F32),
        ("astype_empty_float32_to_int32", np.zeros((3, 0), np.float32), I32),
    ]
    for name, x, dt in cases:
        add_case(name, "astype", [x], {"dtype": dt}, mk(dt), ref_for(dt), EXACT)


# --------------------------------------------------------------------------------------
# reductions
# --------------------------------------------------------------------------------------

def norm_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, list) else [axis]
    return tuple(sorted(a % ndim for a in axes))


def reduce_ref(op):
    def ref_with(axis, keepdims):
        def ref(x):
            dt = dtype_name(x)
            ax = norm_axes(axis, x.ndim)
            kd = dict(axis=ax, keepdims=keepdims)
            if op in ("sum", "prod"):
                if dt == F32:
                    return to_f32((np.sum if op == "sum" else np.prod)(x.astype(np.float64), **kd))
                out_dt = I32 if dt == BOOL else dt
                v = as_i64(x).astype(object)
                r = np.sum(v, **kd) if op == "sum" else np.prod(v, **kd)
                if x.size == 0 or np.ndim(r) == 0:
                    r = np.asarray(r, dtype=object)
                    if r.size and x.size == 0:
                        r = np.full(r.shape, 0 if op == "sum" else 1, dtype=object)
                return wrap(r, out_dt)
            if op == "mean":
                return to_f32(np.mean(as_f64(x), **kd))
            if op in ("max", "min"):
                return (np.max if op == "max" else np.min)(x, **kd)  # numpy propagates nan
            if op == "logsumexp":
                v = as_f64(x)
                m = np.max(v, **{"axis": ax, "keepdims": True})
                ms = np.where(np.isfinite(m), m, 0.0)
                r = np.log(np.sum(np.exp(v - ms), axis=ax, keepdims=True)) + ms
                r = np.where(np.isfinite(m), r, m)  # all -inf -> -inf, any +inf -> inf, nan -> nan
                if not keepdims:
                    r = np.squeeze(r, axis=ax)
                return to_f32(r)
            raise KeyError(op)
        return ref
    return ref_with


def arg_ref(op):
    def ref_with(axis, keepdims):
        def ref(x):
            v = x.astype(np.float64) if dtype_name(x) != BOOL else x.astype(np.int64)
            # first occurrence wins ties; nan counts as the extreme (numpy and MLX agree)
            r = (np.argmax if op == "argmax" else np.argmin)(v, axis=axis, keepdims=keepdims)
            if axis is None and keepdims:
                r = np.reshape(r, (1,) * x.ndim)
            return np.asarray(r).astype(np.uint32)
        return ref
    return ref_with


MX_REDUCE = {"sum": mx.sum, "mean": mx.mean, "max": mx.max, "min": mx.min, "prod": mx.prod,
             "logsumexp": mx.logsumexp, "argmax": mx.argmax, "argmin": mx.argmin}


def reduce_case(name, op, x, axis, keepdims, tol):
    mfn = MX_REDUCE[op]
    ref = (arg_ref(op) if op.startswith("arg") else reduce_ref(op))(axis, keepdims)
    add_case(name, op, [x], {"axis": axis, "keepdims": keepdims},
             lambda a: mfn(a, axis=axis, keepdims=keepdims), ref, tol)


def reduction_cases():
    seed = 4000
    for op in ("sum", "mean", "max", "min", "prod", "logsumexp"):
        seed += 20
        ftol = EXACT if op in ("max", "min") else TRANS
        itol = TRANS if op in ("mean", "logsumexp") else EXACT
        x3 = randn(seed, (2, 3, 4)) if op != "prod" else randu(seed, (2, 3, 4), 0.5, 1.5)
        reduce_case(f"{op}_all_float32", op, x3, None, False, ftol)
        reduce_case(f"{op}_all_keepdims_float32", op, x3, None, True, ftol)
        reduce_case(f"{op}_axis1_float32", op, x3, 1, False, ftol)
        reduce_case(f"{op}_axis_neg1_keepdims_float32", op, x3, -1, True, ftol)
        reduce_case(f"{op}_axes_0_2_float32", op, x3, [0, 2], False, ftol)
        reduce_case(f"{op}_rank4_axes_1_3_keepdims_float32", op,
                    randn(seed + 1, (2, 3, 2, 4)) if op != "prod" else randu(seed + 1, (2, 3, 2, 4), 0.5, 1.5),
                    [1, 3], True, ftol)
        reduce_case(f"{op}_scalar_float32", op, f32(2.5), None, False, ftol)
        if op in ("sum", "mean", "logsumexp"):
            reduce_case(f"{op}_large_float32", op, randn(seed + 2, (8, 125)), 1, False,
                        dict(rtol=1e-5, atol=1e-5))
        if op == "prod":
            reduce_case("prod_large_float32", op, randu(seed + 2, (8, 125), 0.9, 1.1), 1, False, TRANS)
        if op != "logsumexp":
            ia = randi(seed + 3, (3, 4), -9, 10)
            reduce_case(f"{op}_axis0_int32", op, ia, 0, False, itol)
            reduce_case(f"{op}_all_int32", op, ia, None, False, itol)
            reduce_case(f"{op}_axis1_uint32", op, randui(seed + 4, (3, 4), 0, 20), 1, False, itol)
            reduce_case(f"{op}_axis1_bool", op, randb(seed + 5, (3, 4)), 1, False, itol)
            reduce_case(f"{op}_all_bool", op, bools([True, True, False]), None, False, itol)
        else:
            reduce_case("logsumexp_axis1_int32", op, randi(seed + 3, (3, 4), -9, 10), 1, False, TRANS)
            reduce_case("logsumexp_axis1_bool", op, randb(seed + 5, (3, 4)), 1, False, TRANS)
        # empty: reducing over a non-empty axis of an empty array is fine for every op except
        # argmax/argmin/logsumexp (MLX rejects any empty input there)
        if op != "logsumexp":
            reduce_case(f"{op}_empty_keep_axis_float32", op, np.zeros((0, 3), np.float32), 1, False, ftol)
        if op in ("sum", "prod", "mean"):
            reduce_case(f"{op}_empty_axis_float32", op, np.zeros((0, 3), np.float32), 0, False, ftol)
            reduce_case(f"{op}_empty_all_float32", op, np.zeros((2, 0), np.float32), None, False, ftol)
        if op in ("sum", "prod"):
            reduce_case(f"{op}_empty_axis_int32", op, np.zeros((0, 3), np.int32), 0, False, EXACT)
    # nan / inf / overflow specifics
    nanx = f32([[1.0, NAN, 3.0, -INF], [2.0, 5.0, -1.0, 0.5], [-INF, -INF, -INF, -INF], [INF, 1.0, INF, NAN]])
    for op in ("sum", "mean", "max", "min", "prod", "logsumexp"):
        reduce_case(f"{op}_nan_inf_float32", op, nanx, 1, False, EXACT if op in ("max", "min") else TRANS)
    reduce_case("max_neg_inf_float32", "max", f32([-INF, -INF, -3.4e38]), None, False, EXACT)
    reduce_case("min_inf_float32", "min", f32([INF, INF, 3.4e38]), None, False, EXACT)
    reduce_case("sum_wrap_int32", "sum", i32([2147483647, 1, 5, -2147483648, -1, -1]), None, False, EXACT)
    reduce_case("sum_wrap_uint32", "sum", u32([4294967295, 2, 3000000000, 3000000000]), None, False, EXACT)
    reduce_case("prod_wrap_int32", "prod", i32([[65536, 65536, 3], [46341, 46341, 1], [-2, 1073741824, 1]]),
                1, False, EXACT)
    reduce_case("prod_wrap_uint32", "prod", u32([65536, 65537, 3]), None, False, EXACT)
    reduce_case("max_int32_extremes", "max", i32([-2147483648, -2147483647, -5]), None, False, EXACT)
    reduce_case("min_uint32_extremes", "min", u32([4294967295, 2147483648, 4294967294]), None, False, EXACT)
    reduce_case("logsumexp_extreme_float32", "logsumexp",
                f32([[1e30, 1e30, 0.0], [88.0, 89.0, 90.0], [-100.0, -200.0, -300.0], [3.4e38, 3.4e38, 1.0]]),
                1, False, TRANS)
    reduce_case("mean_all_bool_three_quarters", "mean", bools([True, False, True, True]), None, False, TRANS)

    # argmax / argmin
    seed = 4500
    for op in ("argmax", "argmin"):
        seed += 20
        x3 = randn(seed, (2, 3, 4))
        reduce_case(f"{op}_all_float32", op, x3, None, False, EXACT)
        reduce_case(f"{op}_all_keepdims_float32", op, x3, None, True, EXACT)
        reduce_case(f"{op}_axis1_float32", op, x3, 1, False, EXACT)
        reduce_case(f"{op}_axis_neg1_keepdims_float32", op, x3, -1, True, EXACT)
        reduce_case(f"{op}_rank4_axis2_float32", op, randn(seed + 1, (2, 3, 4, 2)), 2, False, EXACT)
        reduce_case(f"{op}_scalar_float32", op, f32(1.5), None, False, EXACT)
        reduce_case(f"{op}_ties_float32", op, f32([[1.0, 3.0, 3.0, 2.0], [0.0, 0.0, 0.0, 0.0],
                                                   [-1.0, -5.0, 7.0, -5.0]]), 1, False, EXACT)
        reduce_case(f"{op}_nan_float32", op, f32([[1.0, NAN, 3.0, NAN], [NAN, 5.0, -9.0, 2.0],
                                                  [INF, -INF, 0.0, INF]]), 1, False, EXACT)
        reduce_case(f"{op}_axis0_int32", op, i32([[3, -7, 2], [3, 8, -2], [-1, 8, 5]]), 0, False, EXACT)
        reduce_case(f"{op}_uint32", op, u32([7, 4294967295, 0, 4294967295, 0]), None, False, EXACT)
        reduce_case(f"{op}_axis1_bool", op, bools([[False, True, True], [False, False, False], [True, False, True]]),
                    1, False, EXACT)

    # softmax
    def softmax_ref(axis):
        def ref(x):
            v = as_f64(x)
            m = np.max(v, axis=axis, keepdims=True)
            e = np.exp(v - m)
            return to_f32(e / np.sum(e, axis=axis, keepdims=True))
        return ref

    def sm(name, x, axis):
        add_case(name, "softmax", [x], {"axis": axis}, lambda a: mx.softmax(a, axis=axis), softmax_ref(axis), TRANS)

    sm("softmax_axis_neg1_float32", randn(4700, (3, 5), 3.0), -1)
    sm("softmax_axis0_float32", randn(4701, (3, 5), 3.0), 0)
    sm("softmax_rank4_axis1_float32", randn(4702, (2, 3, 2, 2)), 1)
    sm("softmax_large_values_float32", f32([[1000.0, 1001.0, 999.0], [-1e30, 0.0, 1e30], [88.0, 89.0, 90.0]]), 1)
    sm("softmax_masked_float32", f32([[0.0, -INF, 1.0, -INF], [-INF, -INF, -INF, -INF], [NAN, 0.0, 1.0, 2.0],
                                      [INF, 0.0, 1.0, 2.0]]), 1)
    sm("softmax_int32", i32([[1, 2, 3], [0, 0, 0]]), 1)
    sm("softmax_bool", bools([[True, False], [False, False]]), 1)
    sm("softmax_empty_float32", np.zeros((0, 3), np.float32), 1)
    sm("softmax_wide_float32", randn(4703, (4, 200), 2.0), 1)


# --------------------------------------------------------------------------------------
# matmul
# --------------------------------------------------------------------------------------

def matmul_cases():
    def ref(a, b):
        return to_f32(np.matmul(as_f64(a), as_f64(b)))
    for name, sa, sb, sd in [
        ("matmul_2d_float32", (3, 4), (4, 5), 5000),
        ("matmul_batch_broadcast_float32", (2, 1, 3, 4), (5, 4, 2), 5002),
        ("matmul_batch_float32", (3, 2, 5), (3, 5, 2), 5004),
        ("matmul_vector_vector_float32", (4,), (4,), 5006),
        ("matmul_vector_matrix_float32", (4,), (4, 3), 5008),
        ("matmul_matrix_vector_float32", (3, 4), (4,), 5010),
        ("matmul_vector_batch_float32", (4,), (2, 4, 3), 5012),
        ("matmul_empty_m_float32", (0, 3), (3, 2), 5014),
        ("matmul_empty_k_float32", (2, 0), (0, 3), 5016),
        ("matmul_large_float32", (16, 32), (32, 24), 5018),
    ]:
        add_case(name, "matmul", [randn(sd, sa), randn(sd + 1, sb)], {}, mx.matmul, ref, MATMUL)
    add_case("matmul_nan_inf_float32", "matmul", [f32([[1.0, NAN], [INF, 1.0], [1.0, 2.0]]),
                                                  f32([[1.0, 2.0], [0.0, 3.0]])], {}, mx.matmul, ref, MATMUL)


# --------------------------------------------------------------------------------------
# shape ops
# --------------------------------------------------------------------------------------

def cpp_slice_shape(shape, start, stop, strides):
    """Port of MLX's normalize_slice (mlx/ops.cpp) output-shape rule, as an independent check."""
    out = []
    for n, s, e, k in zip(shape, start, stop, strides):
        s = s + n if s < 0 else s
        e = e + n if e < 0 else e
        if k < 0:
            st = min(s, n - 1)
            ed = e if e > -1 else -1
            ed = st if ed > st else ed
            out.append(max(0, (st - ed + (-k) - 1) // (-k)))
        else:
            st = max(0, min(s, n))
            ed = max(0, min(e, n))
            ed = st if ed < st else ed
            out.append((ed - st + k - 1) // k)
    return tuple(out)


def shape_cases():
    seed = 6000

    def ex(name, op, inputs, params, mfn, ref, multi=False):
        add_case(name, op, inputs, params, mfn, ref, EXACT, multi=multi)

    x234 = randn(seed, (2, 3, 4))
    # reshape
    for name, x, shp in [("reshape_float32", x234, [6, 4]), ("reshape_infer_float32", x234, [-1, 4]),
                         ("reshape_rank4_float32", x234, [2, 1, 3, 4]),
                         ("reshape_to_scalar_float32", f32([5.0]), []),
                         ("reshape_from_scalar_int32", i32(7), [1, 1]),
                         ("reshape_empty_float32", np.zeros((0, 3), np.float32), [3, 0, 1]),
                         ("reshape_uint32", randui(seed + 1, (4, 3)), [2, 6]),
                         ("reshape_bool", randb(seed + 2, (2, 4)), [8])]:
        ex(name, "reshape", [x], {"shape": shp}, lambda a, shp=shp: mx.reshape(a, shp),
           lambda a, shp=shp: np.reshape(a, shp))
    # transpose
    for name, x, axes in [("transpose_default_float32", x234, None), ("transpose_axes_float32", x234, [1, 0, 2]),
                          ("transpose_rank4_float32", randn(seed + 3, (2, 3, 2, 4)), [0, 3, 1, 2]),
                          ("transpose_negative_axes_float32", x234, [-1, 0, -2]),
                          ("transpose_2d_int32", randi(seed + 4, (3, 5)), None),
                          ("transpose_uint32", randui(seed + 5, (2, 3)), [1, 0]),
                          ("transpose_bool", randb(seed + 6, (2, 3)), None),
                          ("transpose_scalar_float32", f32(1.0), None),
                          ("transpose_empty_float32", np.zeros((0, 3), np.float32), [1, 0])]:
        ex(name, "transpose", [x], {"axes": axes},
           lambda a, axes=axes: mx.transpose(a, axes) if axes is not None else mx.transpose(a),
           lambda a, axes=axes: np.transpose(a, axes))
    # expandDims
    for name, x, axis in [("expand_dims_axis0_float32", randn(seed + 7, (2, 3)), 0),
                          ("expand_dims_axis_neg1_float32", randn(seed + 8, (2, 3)), -1),
                          ("expand_dims_axes_list_int32", randi(seed + 9, (2, 3)), [0, 2]),
                          ("expand_dims_axes_neg_list_float32", randn(seed + 10, (2, 3)), [-1, 1]),
                          ("expand_dims_scalar_float32", f32(3.0), 0),
                          ("expand_dims_bool", bools([True, False]), 1),
                          ("expand_dims_empty_float32", np.zeros((0,), np.float32), 0)]:
        ex(name, "expandDims", [x], {"axis": axis}, lambda a, axis=axis: mx.expand_dims(a, axis),
           lambda a, axis=axis: np.expand_dims(a, tuple(axis) if isinstance(axis, list) else axis))
    # squeeze
    for name, x, axis in [("squeeze_all_float32", randn(seed + 11, (1, 3, 1, 2)), None),
                          ("squeeze_axis_float32", randn(seed + 12, (1, 3, 1, 2)), 2),
                          ("squeeze_axes_list_float32", randn(seed + 13, (1, 3, 1, 2)), [0, 2]),
                          ("squeeze_negative_axis_int32", randi(seed + 14, (3, 1)), -1),
                          ("squeeze_to_scalar_uint32", u32([9], (1, 1)), None),
                          ("squeeze_bool", bools([[True], [False]]), 1),
                          ("squeeze_empty_float32", np.zeros((0, 1), np.float32), 1)]:
        ex(name, "squeeze", [x], {"axis": axis},
           lambda a, axis=axis: mx.squeeze(a, axis) if axis is not None else mx.squeeze(a),
           lambda a, axis=axis: np.squeeze(a, tuple(axis) if isinstance(axis, list) else axis))
    # broadcastTo
    for name, x, shp in [("broadcast_to_row_float32", randn(seed + 15, (3,)), [2, 3]),
                         ("broadcast_to_col_float32", randn(seed + 16, (2, 1)), [2, 4]),
                         ("broadcast_to_scalar_float32", f32(1.5), [2, 2]),
                         ("broadcast_to_rank4_int32", randi(seed + 17, (1, 3, 1)), [2, 2, 3, 4]),
                         ("broadcast_to_empty_float32", randn(seed + 18, (1, 3)), [0, 3]),
                         ("broadcast_to_same_uint32", randui(seed + 19, (2, 2)), [2, 2]),
                         ("broadcast_to_bool", bools([True, False]), [3, 2])]:
        ex(name, "broadcastTo", [x], {"shape": shp}, lambda a, shp=shp: mx.broadcast_to(a, shp),
           lambda a, shp=shp: np.broadcast_to(a, shp).copy())
    # slice (MLX C++ slice semantics; Python slicing with explicit ints maps 1:1 onto it)
    a10 = np.arange(10, dtype=np.float32) * 1.5 - 3.0
    a34 = randi(seed + 20, (3, 4))
    a345 = randn(seed + 21, (3, 4, 5))
    for name, x, st, sp, sd in [
        ("slice_basic_float32", a10, [2], [7], [1]),
        ("slice_stride2_float32", a10, [1], [10], [2]),
        ("slice_stride3_float32", a10, [0], [10], [3]),
        ("slice_negative_start_float32", a10, [-4], [10], [1]),
        ("slice_negative_stop_float32", a10, [1], [-2], [1]),
        ("slice_stop_clamped_float32", a10, [3], [100], [1]),
        ("slice_start_clamped_float32", a10, [-100], [3], [1]),
        ("slice_empty_start_after_stop_float32", a10, [7], [2], [1]),
        ("slice_reverse_all_float32", a10, [-1], [-11], [-1]),
        ("slice_reverse_big_stop_float32", a10, [9], [-100], [-1]),
        ("slice_reverse_stride2_float32", a10, [8], [1], [-2]),
        ("slice_reverse_stride3_float32", a10, [100], [-100], [-3]),
        ("slice_reverse_start_clamped_float32", a10, [50], [5], [-1]),
        ("slice_reverse_stop_minus1_float32", a10, [5], [-1], [-1]),
        ("slice_reverse_to_zero_float32", a10, [5], [0], [-1]),
        ("slice_reverse_empty_float32", a10, [2], [7], [-1]),
        ("slice_2d_int32", a34, [1, 0], [3, 4], [1, 2]),
        ("slice_2d_negative_strides_int32", a34, [-1, -1], [-4, -5], [-1, -2]),
        ("slice_3d_mixed_float32", a345, [0, -1, 1], [3, -5, 5], [2, -1, 3]),
        ("slice_rank4_float32", randn(seed + 22, (2, 3, 4, 2)), [1, 0, 3, 0], [2, 3, 0, 2], [1, 2, -2, 1]),
        ("slice_uint32", randui(seed + 23, (6,)), [5], [0], [-2]),
        ("slice_bool", randb(seed + 24, (2, 5)), [0, 4], [2, 0], [1, -1]),
        ("slice_of_empty_float32", np.zeros((0, 4), np.float32), [0, 1], [0, 3], [1, 1]),
    ]:
        sl = tuple(slice(s, e, k) for s, e, k in zip(st, sp, sd))
        expect_shape = cpp_slice_shape(x.shape, st, sp, sd)

        def ref(a, sl=sl, expect_shape=expect_shape):
            r = a[sl].copy()
            assert r.shape == expect_shape, (r.shape, expect_shape)
            return r
        ex(name, "slice", [x], {"start": st, "stop": sp, "strides": sd},
           lambda a, sl=sl: a[sl], ref)
    # concatenate
    for name, xs, axis in [
        ("concatenate_axis0_float32", [randn(seed + 25, (2, 3)), randn(seed + 26, (1, 3))], 0),
        ("concatenate_axis1_three_float32", [randn(seed + 27, (2, 1)), randn(seed + 28, (2, 3)), randn(seed + 29, (2, 2))], 1),
        ("concatenate_axis_neg1_int32", [randi(seed + 30, (2, 2)), randi(seed + 31, (2, 3))], -1),
        ("concatenate_mixed_int32_float32", [randi(seed + 32, (2,)), randn(seed + 33, (3,))], 0),
        ("concatenate_mixed_bool_uint32", [bools([True, False]), randui(seed + 34, (3,))], 0),
        ("concatenate_with_empty_float32", [randn(seed + 35, (2, 3)), np.zeros((2, 0), np.float32)], 1),
        ("concatenate_bool", [bools([[True], [False]]), bools([[False], [False]])], 0),
        ("concatenate_rank4_float32", [randn(seed + 36, (2, 1, 2, 2)), randn(seed + 37, (2, 2, 2, 2))], 1),
        ("concatenate_single_float32", [randn(seed + 38, (3,))], 0),
    ]:
        def ref(*arrs, axis=axis):
            dt = promote(*[dtype_name(a) for a in arrs])
            return np.concatenate([a.astype(NP_DT[dt]) for a in arrs], axis=axis)
        ex(name, "concatenate", xs, {"axis": axis}, lambda *a, axis=axis: mx.concatenate(list(a), axis=axis), ref)
    # stack
    for name, xs, axis in [
        ("stack_axis0_float32", [randn(seed + 39, (2, 3)), randn(seed + 40, (2, 3))], 0),
        ("stack_axis1_float32", [randn(seed + 41, (2, 3)), randn(seed + 42, (2, 3)), randn(seed + 43, (2, 3))], 1),
        ("stack_axis_neg1_int32", [randi(seed + 44, (2, 2)), randi(seed + 45, (2, 2))], -1),
        ("stack_scalars_float32", [f32(1.0), f32(2.0), f32(-3.0)], 0),
        ("stack_mixed_int32_bool", [i32([1, 2]), bools([True, False])], 0),
        ("stack_bool", [bools([True, False]), bools([False, False])], 1),
        ("stack_uint32", [randui(seed + 46, (3,)), randui(seed + 47, (3,))], 0),
        ("stack_empty_float32", [np.zeros((0, 2), np.float32), np.zeros((0, 2), np.float32)], 1),
        ("stack_rank3_to_rank4_float32", [randn(seed + 48, (2, 3, 2)), randn(seed + 49, (2, 3, 2))], 2),
    ]:
        def ref(*arrs, axis=axis):
            dt = promote(*[dtype_name(a) for a in arrs])
            return np.stack([a.astype(NP_DT[dt]) for a in arrs], axis=axis)
        ex(name, "stack", xs, {"axis": axis}, lambda *a, axis=axis: mx.stack(list(a), axis=axis), ref)
    # split
    for name, x, ios, axis in [
        ("split_sections_axis0_float32", randn(seed + 50, (6, 2)), 3, 0),
        ("split_indices_axis1_float32", randn(seed + 51, (2, 7)), [2, 5], 1),
        ("split_indices_clamped_float32", randn(seed + 52, (6,)), [0, 8], 0),
        ("split_indices_decreasing_float32", randn(seed + 53, (6,)), [4, 2], 0),
        ("split_negative_axis_int32", randi(seed + 54, (2, 3, 4)), 2, -1),
        ("split_one_section_uint32", randui(seed + 55, (4,)), 1, 0),
        ("split_bool", randb(seed + 56, (4, 2)), [1], 0),
        ("split_empty_float32", np.zeros((0, 4), np.float32), 2, 1),
        ("split_rank4_float32", randn(seed + 57, (2, 2, 6, 2)), [1, 3], 2),
    ]:
        def ref(a, ios=ios, axis=axis):
            return [p.copy() for p in np.split(a, ios, axis=axis)] if isinstance(ios, int) else \
                [p.copy() for p in np.array_split(a, ios, axis=axis)]
        ex(name, "split", [x], {"indicesOrSections": ios, "axis": axis},
           lambda a, ios=ios, axis=axis: mx.split(a, ios, axis=axis), ref, multi=True)
    # flatten
    for name, x in [("flatten_float32", randn(seed + 58, (2, 3, 2))), ("flatten_rank4_int32", randi(seed + 59, (2, 1, 2, 2))),
                    ("flatten_scalar_float32", f32(4.0)), ("flatten_empty_float32", np.zeros((2, 0, 3), np.float32)),
                    ("flatten_bool", randb(seed + 60, (2, 2))), ("flatten_uint32", randui(seed + 61, (3, 1)))]:
        ex(name, "flatten", [x], {}, mx.flatten, lambda a: a.reshape(-1).copy())


# --------------------------------------------------------------------------------------
# creation ops
# --------------------------------------------------------------------------------------

def creation_cases():
    def arange_ref(start, stop, step, dt):
        n = max(0, math.ceil((stop - start) / step))
        v = start + step * np.arange(n, dtype=np.float64)
        return to_f32(v) if dt == F32 else v.astype(NP_DT[dt])

    for name, start, stop, step, dt in [
        ("arange_float32", 0, 5, 1, F32), ("arange_int32", 0, 5, 1, I32),
        ("arange_step3_int32", 0, 10, 3, I32), ("arange_negative_step_int32", 5, 0, -1, I32),
        ("arange_negative_start_int32", -7, 4, 2, I32), ("arange_uint32", 0, 10, 2, U32),
        ("arange_fraction_float32", 1.5, 4.2, 0.7, F32), ("arange_tenths_float32", 0, 1, 0.1, F32),
        ("arange_negative_fraction_float32", 2, -3.5, -0.5, F32), ("arange_empty_float32", 0, -1, 1, F32),
        ("arange_empty_int32", 5, 5, 1, I32), ("arange_large_float32", 0, 1000, 1, F32),
        ("arange_large_int32", -500, 500, 1, I32),
    ]:
        tol = CREATE if dt == F32 and any(float(v) != int(v) for v in (start, stop, step)) else EXACT
        add_case(name, "arange", [], {"start": start, "stop": stop, "step": step, "dtype": dt},
                 lambda s=start, e=stop, k=step, d=dt: mx.arange(s, e, k, dtype=MX_DT[d]),
                 lambda s=start, e=stop, k=step, d=dt: arange_ref(s, e, k, d), tol)
    for name, start, stop, num in [("linspace_unit", 0, 1, 5), ("linspace_symmetric", -1, 1, 7),
                                   ("linspace_decreasing", 3, -2, 4), ("linspace_one", 2.5, 10, 1),
                                   ("linspace_zero", 0, 10, 0), ("linspace_many", -3, 7, 100)]:
        def lref(s=start, e=stop, n=num):
            return to_f32(np.linspace(s, e, n))
        add_case(f"{name}_float32", "linspace", [], {"start": start, "stop": stop, "num": num},
                 lambda s=start, e=stop, n=num: mx.linspace(s, e, n), lref, CREATE)
    for n in (1, 3, 5):
        add_case(f"eye_{n}_float32", "eye", [], {"n": n}, lambda n=n: mx.eye(n),
                 lambda n=n: np.eye(n, dtype=np.float32), EXACT)
    for dt in (F32, I32, U32, BOOL):
        for shp in ([2, 3], [], [0, 2]):
            tag = {0: "scalar", 2: "2d"}[len(shp)] if 0 not in shp else "empty"
            add_case(f"zeros_{tag}_{dt}", "zeros", [], {"shape": shp, "dtype": dt},
                     lambda s=shp, d=dt: mx.zeros(s, dtype=MX_DT[d]), lambda s=shp, d=dt: np.zeros(s, NP_DT[d]), EXACT)
            add_case(f"ones_{tag}_{dt}", "ones", [], {"shape": shp, "dtype": dt},
                     lambda s=shp, d=dt: mx.ones(s, dtype=MX_DT[d]), lambda s=shp, d=dt: np.ones(s, NP_DT[d]), EXACT)
    for name, shp, val, dt in [("full_float32", [2, 3], 2.5, F32), ("full_int32", [3], -7, I32),
                               ("full_uint32", [2, 2], 4000000000, U32), ("full_bool", [2], True, BOOL),
                               ("full_scalar_float32", [], -0.125, F32), ("full_empty_float32", [0, 3], 1.0, F32),
                               ("full_rank4_int32", [2, 1, 2, 3], 5, I32)]:
        add_case(name, "full", [], {"shape": shp, "value": val, "dtype": dt},
                 lambda s=shp, v=val, d=dt: mx.full(s, v, dtype=MX_DT[d]),
                 lambda s=shp, v=val, d=dt: np.full(s, v, NP_DT[d]), EXACT)


# --------------------------------------------------------------------------------------
# packed dtypes: float16, bfloat16, int8, uint8
# --------------------------------------------------------------------------------------
# Inputs are made in the dtype by MLX (float32 values rounded by astype), so every value is
# exact in it, and written back exactly (encode). tandem widens packed inputs to float32 (int32,
# uint32), computes there and rounds once on store; MLX computes some ops in the half type
# itself. The golden value is MLX's, so each tolerance covers both. Per dtype (p = significand
# bits with the implicit one: 11 for float16, 8 for bfloat16; ulp = 2**(1 - p) relative):
# - elementwise (transcendentals, divide, sqrt, ...): 2 ulps, rtol = 2**(2 - p) (float16 2**-9,
#   bfloat16 2**-6), atol = 2 of the dtype's smallest subnormals (float16 2**-23; bfloat16 2**-132)
#   for results in the subnormal range. MLX is within 1 ulp of the correctly rounded result on
#   every finite float16 and bfloat16 input for the unary ops (and equals the float32 result
#   rounded once for add, subtract, multiply, divide, power, arctan2, remainder), except where
#   noted at the inputs (and for bfloat16 results that are subnormal, which no case has);
# - exact (rtol = atol = 0) where the result is exact in any precision: abs, neg, sign, floor,
#   ceil, round, relu, maximum, minimum, comparisons, class tests, where, clip, max, min,
#   argmax, argmin, cummax, astype, every integer op; and add, subtract, multiply, square of
#   two half operands: float32 holds their exact result (or one rounded past 2p + 2 bits, so the
#   second rounding to the half type is still correct) and MLX rounds them correctly too;
# - reductions and matmul (`red_tol`): rtol = 4 ulps = 2**(3 - p), atol = c * ulp(M) with M the
#   largest magnitude the op accumulates (|x| for sum, mean, logsumexp and the log-sum scan and
#   also their results; the partial products for prod and cumprod; the largest |x - mean|,
#   squared for var; |a_ik * b_kj| for matmul; the outputs of the norms) and c = 2 * sqrt(n)
#   for n terms where MLX accumulates in float32 (sum, prod, mean, var, std, logsumexp, matmul,
#   the norms), c = n where it keeps the running value in the half type (its CPU scans cumsum,
#   cumprod, logcumsumexp: float16 cumsum of ones stalls at 2048, bfloat16 at 256); a mean's
#   atol is its sum's divided by n. softmax: see softmax_tol. Each case asserts MLX within it
#   of a float64 reference, and a model of tandem's computation (float32 inside each kernel,
#   rounded at each kernel's store, as its composite ops mean, var, std and the non-trailing
#   logsumexp/softmax round between kernels) within it of MLX.
# Mixed operands: a result in float32 (float16 with float32 or with bfloat16) keeps the float32
# cases' tolerances. MLX converts an integer operand to a half type before the op, tandem to
# float32: the integers next to a half type stay within its exact range (|v| <= 256).

HALF_P = {F16: 11, BF16: 8}
TINY = {F16: 2.0 ** -24, BF16: 2.0 ** -133}  # smallest subnormal


def half_elem_tol(dt):
    return dict(rtol=2.0 ** (2 - HALF_P[dt]), atol=2 * TINY[dt])


def ulp_of(dt, m):
    """The dtype's ulp at magnitude m (m > 0)."""
    if m <= 0 or not np.isfinite(m):
        return TINY[dt]
    return max(2.0 ** (math.floor(math.log2(m)) + 1 - HALF_P[dt]), TINY[dt])


def red_tol(dt, n, m, half_acc=False, divide=1):
    """Tolerance of a reduction, scan or matmul over n terms of magnitude up to m (see above)."""
    c = n if half_acc else 2 * math.sqrt(max(n, 1))
    atol = c * ulp_of(dt, m) / divide
    return dict(rtol=2.0 ** (3 - HALF_P[dt]), atol=float(np.float32(atol)))


def softmax_tol(dt, n):
    """softmax's errors are relative (an error in x - max or in the row's sum scales every
    output alike), and MLX's half softmax keeps its sum in the half type: rtol = the larger of
    4 ulps and 2 * sqrt(n) unit roundoffs, atol = 2 subnormals."""
    return dict(rtol=max(2.0 ** (3 - HALF_P[dt]), 2 * math.sqrt(n) * 2.0 ** -HALF_P[dt]), atol=2 * TINY[dt])


def mk(dt, values, shape=None):
    """Values as an array of dtype `dt`, rounded by MLX (float32 values -> astype)."""
    a = np.asarray(values, dtype=np.float64)
    if shape is not None:
        a = a.reshape(shape)
    if dt in (I8, U8):
        return a.astype(np.int64).astype(NP_DT[dt])
    with np.errstate(all="ignore"):
        f = a.astype(np.float32)
    return from_mx(mx.array(f).astype(MX_DT[dt]))


def hrandn(dt, seed, shape, scale=1.0):
    return mk(dt, randn(seed, shape, scale))


def hrandu(dt, seed, shape, lo, hi):
    return mk(dt, randu(seed, shape, lo, hi))


def out_of(fn, dt):
    """A reference: float64 function of the inputs' float64 values, rounded to dtype dt."""
    return lambda *xs: round_to(dt, fn(*[widen(x) for x in xs]))


def half_name(dt):
    return {F16: "float16", BF16: "bfloat16"}[dt]


# float16 covers +-65504 and goes subnormal below 2**-14; bfloat16 has float32's range (its
# subnormals are left out, see check_subnormals). Non-finite, signed zeros, tiny and huge values.
HALF_EDGE = {
    F16: [0.0, -0.0, 2.0 ** -24, -(2.0 ** -24), 1e-5, -1e-5, 1e-3, 0.5, -0.5, 1.0, -1.0, 2.5, -3.75,
          10.0, -10.0, 1000.0, -1000.0, 65504.0, -65504.0, NAN, INF, -INF],
    BF16: [0.0, -0.0, 1e-30, -1e-30, 1e-3, 0.5, -0.5, 1.0, -1.0, 2.5, -3.75, 10.0, -10.0, 1e4, -1e4,
           1e30, -1e30, 3.3895314e38, -3.3895314e38, NAN, INF, -INF],
}

# Inputs where MLX's half result is off by more than 2 ulps (checked on every finite input):
# - gelu: MLX computes x * (1 + erf(x / sqrt(2))) / 2 in the half type, so 1 + erf cancels for
#   x < -1.2 (float16: gelu(-3.67) = -0 against -4.45e-4; bfloat16 below -1.4), and an
#   intermediate overflows for x >= 32768 in float16 (near the top of the range in bfloat16, as
#   in float32: the float32 cases leave 3.4e38 out too);
# - sigmoid: MLX's float16 exp(-x) overflows for x < -11.09, giving 0 where the result is a
#   float16 subnormal (>= 1e-7);
# - erf: MLX's erf (float32 too) is inaccurate for |x| < ~1e-4 (float16: 5 ulps; bfloat16: erf of
#   1.8e-7 is 0), so tiny arguments are left out.
def half_edge_for(op, dt):
    vals = HALF_EDGE[dt]
    if op == "gelu":
        vals = [v for v in vals if not (v < -1.0 or v >= 32768.0)]
    if op == "sigmoid" and dt == F16:
        vals = [v for v in vals if not v < -11.0]
    if op == "erf":
        vals = [v for v in vals if not (0 < abs(v) < 1e-3)]
    if op == "reciprocal" and dt == BF16:
        vals = [v for v in vals if abs(v) < 1e38]  # 1 / 3.39e38 is a (flushable) subnormal
    return vals


HALF_DOMAIN = {"gelu": (-1.0, 4.0), "erf": (0.01, 3.0)}


def half_unary_input(op, dt, seed, shape):
    if op in HALF_DOMAIN:
        lo, hi = HALF_DOMAIN[op]
        x = randu(seed, shape, lo, hi)
        if op == "erf":
            x = x * np.where(randb(seed + 1, shape), 1, -1).astype(np.float32)
        return mk(dt, x)
    return mk(dt, float_input(op, seed, shape))


def half_unary_cases():
    seed = 9000
    for op in list(FLOAT_UNARY) + list(SAME_DTYPE_UNARY) + ["relu", "logicalNot"] + list(FLOAT_TESTS):
        seed += 10
        snake = {"logicalNot": "logical_not"}.get(op, op)
        for dt in (F16, BF16):
            if op in FLOAT_UNARY:
                mfn, fref, _ = FLOAT_UNARY[op]
                ref, tol = out_of(fref, dt), half_elem_tol(dt)
            elif op in SAME_DTYPE_UNARY:
                mfn, fref = SAME_DTYPE_UNARY[op][:2]
                ref, tol = out_of(fref, dt), EXACT
            elif op == "relu":
                mfn, tol = nn.relu, EXACT
                ref = out_of(lambda x: np.where(np.isnan(x), x, np.maximum(x, 0.0)), dt)
            elif op == "logicalNot":
                mfn, tol = mx.logical_not, EXACT

                def ref(x):
                    return np.logical_not(widen(x).astype(np.bool_))  # nan is truthy
            else:
                mfn, npfn = FLOAT_TESTS[op]
                tol = EXACT

                def ref(x, npfn=npfn):
                    return npfn(widen(x))
            if op not in FLOAT_TESTS:
                add_case(f"{snake}_{half_name(dt)}", op, [half_unary_input(op, dt, seed, (3, 5))], {},
                         mfn, ref, tol)
            add_case(f"{snake}_edge_{half_name(dt)}", op, [mk(dt, half_edge_for(op, dt))], {}, mfn, ref, tol)
    # int8 / uint8: results wrap (abs(-128) = -128, -uint8 wraps, square wraps)
    for op in ("abs", "neg", "square", "sign"):
        mfn, _, iref, tol, _ = SAME_DTYPE_UNARY[op]
        for dt, vals in ((I8, [0, 1, -1, 7, -8, 12, -12, 127, -128, 100]), (U8, [0, 1, 7, 12, 16, 128, 200, 255])):
            def ref(x, iref=iref, dt=dt):
                return wrap8(iref(as_i64(x)), dt)
            add_case(f"{op}_{dt}", op, [mk(dt, vals)], {}, mfn, ref, EXACT)


def wrap8(v, dt):
    """int64/object values wrapped to int8 / uint8, like C."""
    v = np.asarray(v, dtype=object)
    flat = [int(x) % 256 for x in v.reshape(-1)]
    if dt == I8:
        flat = [x - 256 if x >= 128 else x for x in flat]
    return np.array(flat, dtype=np.int64).astype(NP_DT[dt]).reshape(v.shape)


# --------------------------------------------------------------------------------------

def half_binary_ref(op, out_dt):
    """float64 reference of a float binary op (its operands' float64 values), rounded to out_dt;
    comparisons and logical ops give bool."""
    f = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
         "power": np.power,
         "maximum": lambda x, y: np.where(np.isnan(x) | np.isnan(y), np.nan, np.maximum(x, y)),
         "minimum": lambda x, y: np.where(np.isnan(x) | np.isnan(y), np.nan, np.minimum(x, y)),
         "logaddexp": np.logaddexp, "arctan2": np.arctan2}
    cmp = {"equal": np.equal, "notEqual": np.not_equal, "less": np.less, "lessEqual": np.less_equal,
           "greater": np.greater, "greaterEqual": np.greater_equal,
           "logicalAnd": lambda x, y: np.logical_and(x.astype(np.bool_), y.astype(np.bool_)),
           "logicalOr": lambda x, y: np.logical_or(x.astype(np.bool_), y.astype(np.bool_))}

    def ref(a, b):
        x, y = np.broadcast_arrays(widen(a), widen(b))
        if op in cmp:
            return cmp[op](x, y)
        if op == "floorDivide":
            # MLX: the quotient in the result dtype, rounded down (inputs avoid a quotient that
            # rounds across an integer, where tandem's float32 quotient would floor otherwise)
            return round_to(out_dt, np.floor(widen(round_to(out_dt, x / y))))
        if op == "remainder":
            r = np.fmod(x, y)
            return round_to(out_dt, np.where((r != 0) & ((r < 0) != (y < 0)), r + y, r))
        return round_to(out_dt, f[op](x, y))
    return ref


SIZE = {BOOL: 1, I8: 1, U8: 1, F16: 2, BF16: 2, I32: 4, U32: 4, F32: 4}


def half_promote(da, db):
    """MLX's promotion over all eight dtypes; None where MLX reaches for int16 or int64."""
    if da == db:
        return da
    if BOOL in (da, db):
        return db if da == BOOL else da
    if F32 in (da, db) or {da, db} == {F16, BF16}:
        return F32
    if da in (F16, BF16) or db in (F16, BF16):
        return da if da in (F16, BF16) else db
    signed = {I8: True, I32: True, U8: False, U32: False}
    if signed[da] == signed[db]:
        return da if SIZE[da] >= SIZE[db] else db
    s, u = (da, db) if signed[da] else (db, da)
    return s if SIZE[s] > SIZE[u] else None


def floor_div_safe(a, b, out_dt):
    """Whether floor of the float32 quotient equals floor of the quotient in out_dt everywhere."""
    x, y = np.broadcast_arrays(widen(a), widen(b))
    q = x / y
    return bool(np.all(np.floor(widen(round_to(F32, q))) == np.floor(widen(round_to(out_dt, q)))))


def half_binary_cases():
    seed = 9500
    exact_ops = ("add", "subtract", "multiply", "maximum", "minimum", "equal", "notEqual", "less",
                 "lessEqual", "greater", "greaterEqual", "logicalAnd", "logicalOr")
    for op, (mfn, _, _) in BINARY.items():
        seed += 20
        s = SNAKE.get(op, op)
        is_pow = op == "power"
        # power: positive bases keep random cases real-valued; logaddexp: operands in [0.5, 4] keep
        # the result >= 1.2, away from the cancellation MLX's half-precision logaddexp has near 0
        # (logaddexp(-0.34, -1.25) = 1.6e-4 is 0 in MLX's float16)

        def gen_a(dt, sd, shape):
            if is_pow:
                return mk(dt, randu(sd, shape, 0.1, 3.0))
            if op == "logaddexp":
                return mk(dt, randu(sd, shape, 0.5, 4.0))
            if dt == I32:
                return randi(sd, shape, -5, 6) if op not in ("floorDivide", "remainder") else \
                    np.where(randb(sd + 7, shape), 1, -1).astype(np.int32) * randi(sd, shape, 1, 6)
            return mk(dt, randn(sd, shape, 2.0))

        gen_b = gen_a
        combos = [(F16, F16, (3, 4), (3, 4)), (BF16, BF16, (2, 3), (3,)),
                  (F16, F32, (2, 3), (2, 3)), (BF16, I32, (2, 3), (2, 3)), (F16, BF16, (3, 1), (1, 4))]
        for k, (da, db, sa, sb) in enumerate(combos):
            if op in exact_ops[5:] and k > 2:
                continue  # comparisons and logical ops: one mixed pair is enough
            out = half_promote(da, db)
            sd = seed + 2 * k
            a, b = gen_a(da, sd, sa), gen_b(db, sd + 1, sb)
            if op == "floorDivide":
                tries = 0
                while not floor_div_safe(a, b, out):
                    tries += 1
                    a, b = gen_a(da, sd + 100 * tries, sa), gen_b(db, sd + 100 * tries + 1, sb)
            if op in ("equal", "notEqual", "lessEqual", "greaterEqual") and da == db and sa == sb:
                b = b.copy()
                b[0, :2] = a[0, :2]  # some ties
            if out == F32:
                tol = EXACT if op in exact_ops or op in ("floorDivide", "remainder", "divide") else TRANS
            else:
                tol = EXACT if op in exact_ops else half_elem_tol(out)
            tag = half_name(da) if da == db else f"{da}_{db}"
            add_case(f"{s}_{tag}", op, [a, b], {}, mfn, half_binary_ref(op, out), tol)

    # non-finite and signed zeros
    nanv = [NAN, 1.0, NAN, -INF, INF, 2.0, NAN, -1.0, 0.0, -0.0]
    nanw = [1.0, NAN, NAN, 3.0, -INF, INF, INF, -2.0, -0.0, 0.0]
    for op in ("add", "subtract", "multiply", "divide", "maximum", "minimum", "equal", "less",
               "greaterEqual", "logaddexp", "arctan2", "remainder"):
        mfn = BINARY[op][0]
        a, b = nanv, nanw
        if op in ("maximum", "minimum"):
            a, b = a[:-2], b[:-2]  # which zero wins a tie between 0 and -0 is an implementation detail
        for dt in (F16, BF16):
            tol = EXACT if op in exact_ops else half_elem_tol(dt)
            add_case(f"{SNAKE.get(op, op)}_nan_inf_{half_name(dt)}", op, [mk(dt, a), mk(dt, b)], {}, mfn,
                     half_binary_ref(op, dt if op not in ("equal", "less", "greaterEqual") else BOOL), tol)
    # overflow to infinity and underflow
    for op, fa, fb, ba, bb in (
            ("add", [65504.0, 60000.0, -65504.0, 32768.0], [65504.0, 6000.0, -16.0, 32768.0],
             [3.3895314e38, 3e38, -3.3895314e38, 1e38], [3.3895314e38, 1e38, -1e36, 1e38]),
            ("multiply", [300.0, 256.0, -1000.0, 2.0 ** -12, 1e-4], [300.0, 256.0, 100.0, 2.0 ** -12, 1e-4],
             [1e20, 1e30, -1e25, 1e-20, 3.0], [1e20, 1e10, 1e20, 1e-25, 1e-30]),
            ("divide", [1.0, -1.0, 60000.0, 2.0 ** -14, 1.0], [2.0 ** -24, 1e-4, 0.5, 4096.0, 3.0],
             [1.0, 1e30, -3e38, 1e-30, 1.0], [1e-30, 1e-10, 0.1, 1e5, 3.0])):
        mfn = BINARY[op][0]
        for dt, a, b in ((F16, fa, fb), (BF16, ba, bb)):
            tol = EXACT if op in exact_ops else half_elem_tol(dt)
            add_case(f"{op}_overflow_{half_name(dt)}", op, [mk(dt, a), mk(dt, b)], {}, mfn,
                     half_binary_ref(op, dt), tol)

    # int8 / uint8: wrap-around, and mixed with int32 and the half floats
    def int_ref(op, dt):
        def ref(a, b):
            x, y = np.broadcast_arrays(as_i64(a).astype(object), as_i64(b).astype(object))
            r = {"add": x + y, "subtract": x - y, "multiply": x * y,
                 "maximum": np.maximum(x, y), "minimum": np.minimum(x, y)}[op]
            return wrap8(r, dt) if dt in (I8, U8) else wrap(r, dt)
        return ref
    ia = mk(I8, [100, -100, 127, -128, 50, -1, 0, 7, -128, 64])
    ib = mk(I8, [100, -100, 1, -1, 3, -1, -128, -9, -128, 2])
    ua = mk(U8, [200, 0, 255, 16, 128, 1, 3, 100])
    ub = mk(U8, [100, 1, 255, 16, 2, 255, 250, 3])
    for op in ("add", "subtract", "multiply", "maximum", "minimum"):
        mfn = BINARY[op][0]
        add_case(f"{op}_wrap_int8", op, [ia, ib], {}, mfn, int_ref(op, I8), EXACT)
        add_case(f"{op}_wrap_uint8", op, [ua, ub], {}, mfn, int_ref(op, U8), EXACT)
    add_case("add_int8_int32", "add", [ia, i32([1, 1, 1, -1, 2147483647, 0, 5, 6, 7, 8])], {}, mx.add,
             int_ref("add", I32), EXACT)
    add_case("multiply_uint8_int32", "multiply", [ua, i32([-1, 2, 3, 65536, -7, 0, 1, 2])], {}, mx.multiply,
             int_ref("multiply", I32), EXACT)
    add_case("add_uint8_uint32", "add", [ua, u32([4294967295, 1, 2, 3, 4, 5, 6, 7])], {}, mx.add,
             int_ref("add", U32), EXACT)
    add_case("add_int8_float16", "add", [ia, mk(F16, randn(9990, (10,)))], {}, mx.add,
             half_binary_ref("add", F16), EXACT)
    add_case("multiply_uint8_bfloat16", "multiply", [ua, mk(BF16, randn(9991, (8,)))], {}, mx.multiply,
             half_binary_ref("multiply", BF16), EXACT)
    for op in ("equal", "less", "greaterEqual", "notEqual"):
        mfn, ref = BINARY[op][0], compare_ref(op)
        add_case(f"{SNAKE.get(op, op)}_int8", op, [ia, ib], {}, mfn, ref, EXACT)
        add_case(f"{SNAKE.get(op, op)}_uint8", op, [ua, ub], {}, mfn, ref, EXACT)


# --------------------------------------------------------------------------------------

def half_where_clip_astype_cases():
    w = mx.where

    def where_ref(c, x, y):
        dt = half_promote(dtype_name(x), dtype_name(y))
        cond = c.astype(np.bool_)
        if dt in FLOATS:
            return round_to(dt, np.where(cond, widen(x), widen(y)))
        return np.where(cond, as_i64(x), as_i64(y)).astype(NP_DT[dt])
    for name, ins in [
        ("where_float16", [randb(9700, (3, 4)), hrandn(F16, 9701, (3, 4)), hrandn(F16, 9702, (3, 4))]),
        ("where_nan_bfloat16", [bools([True, False, True, False, True]), mk(BF16, [NAN, NAN, INF, -0.0, 1e30]),
                                mk(BF16, [1.0, -INF, NAN, NAN, -0.0])]),
        ("where_broadcast_bfloat16", [randb(9703, (3, 1)), hrandn(BF16, 9704, (1, 4)), mk(BF16, -1.5)]),
        ("where_float16_float32", [randb(9705, (2, 3)), hrandn(F16, 9706, (2, 3)), randn(9707, (2, 3))]),
        ("where_bfloat16_int32", [randb(9708, (2, 3)), hrandn(BF16, 9709, (2, 3)), i32([1, -2, 3, 256, -7, 0], (2, 3))]),
        ("where_int8", [randb(9710, (5,)), mk(I8, [1, -128, 127, 0, -5]), mk(I8, [-1, 2, -3, 4, -5])]),
        ("where_uint8_int32", [bools([True, False, True]), mk(U8, [255, 0, 7]), i32([-1, 70000, 3])]),
        ("where_float16_cond", [mk(F16, [0.0, -0.0, NAN, 2.0 ** -24]), mk(F16, [1.0, 2.0, 3.0, 4.0]),
                                mk(F16, [-1.0, -2.0, -3.0, -4.0])]),
    ]:
        add_case(name, "where", ins, {}, w, where_ref, EXACT)

    def clip_ref(lo, hi):
        def ref(x):
            dt = dtype_name(x)
            if dt in FLOATS:
                v = widen(x)
                return round_to(dt, np.where(np.isnan(v), np.nan, np.minimum(np.maximum(v, lo), hi)))
            return np.minimum(np.maximum(as_i64(x), lo), hi).astype(NP_DT[dt])
        return ref
    for name, x, lo, hi in [
        ("clip_float16", hrandn(F16, 9720, (3, 5), 2.0), -1.0, 1.25),
        ("clip_integer_bounds_float16", mk(F16, [NAN, INF, -INF, -0.0, 0.5, -2.0, 3.0, 65504.0]), -1.0, 2.0),
        ("clip_bfloat16", hrandn(BF16, 9721, (2, 3, 2), 2.0), -0.5, 0.75),
        ("clip_nan_inf_bfloat16", mk(BF16, [NAN, INF, -INF, -0.0, 0.0, 0.5, -2.0, 3.0, 1e30]), -1.5, 1.0),
        ("clip_int8", mk(I8, [-128, -5, -1, 0, 3, 7, 127]), -3, 5),
        ("clip_uint8", mk(U8, [0, 1, 5, 9, 100, 255]), 2, 50),
    ]:
        add_case(name, "clip", [x], {"lo": lo, "hi": hi}, lambda a, lo=lo, hi=hi: mx.clip(a, lo, hi),
                 clip_ref(lo, hi), EXACT)

    # astype. Floats to integers truncate toward zero into int32, then wrap to int8 / uint8 (300.7
    # gives 44): inputs stay finite and inside int32's range (beyond it, and for NaN, MLX's and
    # tandem's conversions are not specified alike), and non-negative for uint8 (MLX converts a
    # negative float to uint8 through int32, -1.5 -> 255; tandem saturates through uint32, -> 0).
    # Integers to the half types round through float32, as MLX does (int32 16842753 is 16777216 in
    # bfloat16, not the nearer 16908288).
    def astype_ref(dst):
        def ref(x):
            src = dtype_name(x)
            if dst == BOOL:
                return widen(x) != 0
            if src in FLOATS and dst in FLOATS:
                return round_to(dst, widen(x))
            if dst in FLOATS:
                return round_to(dst, widen(round_to(F32, as_i64(x).astype(np.float64))))
            v = np.trunc(widen(x)).astype(np.int64) if src in FLOATS else as_i64(x)
            return wrap8(v, dst) if dst in (I8, U8) else wrap(v, dst)
        return ref
    fvals = {
        F16: [0.0, -0.0, NAN, INF, -INF, 1e-8, 3e-8, 1e-6, -6.1e-5, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 0.1, -2.5,
              2049.0, 2051.0, 65504.0, 65519.0, 65520.0, -1e5, 3.4e38],
        BF16: [0.0, -0.0, NAN, INF, -INF, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -8 + 2 ** -20, 0.1, -2.5, 257.0,
               259.0, 3.3895314e38, 3.4e38, -3.4028235e38, 1e-30, 1.2e-38, 1e-39],
    }
    to_int = {
        I8: [0.0, -0.0, 1.7, -1.7, 2.5, -2.5, 127.9, -128.9, 300.7, -300.7, 1000.0, 65504.0, -65504.0],
        U8: [0.0, -0.0, 0.5, 1.7, 255.9, 256.0, 300.7, 1000.0, 65504.0],
        I32: [0.0, -0.0, 1.7, -1.7, 2.5, -2.5, 300.7, -300.7, 65504.0, -65504.0],
    }
    big = {I8: [1e9, -2e9], U8: [1e9], I32: [1e9, -2e9, 2.1e9]}  # beyond float16
    half_src = {
        F16: HALF_EDGE[F16] + [2.0 ** -14, 6e-5, 1 + 2 ** -10, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 0.1],
        BF16: HALF_EDGE[BF16] + [1e-6, 65504.0, 65280.0, 1e5, 1.0078125, -3.14],
    }
    ints = {
        I8: [-128, -1, 0, 1, 7, 100, 127],
        U8: [0, 1, 7, 127, 128, 200, 255],
        I32: {F16: [0, 1, -1, 2049, 2051, 65504, 65519, 65520, -100000, 2147483647],
              BF16: [0, 1, -1, 257, 259, 16842753, 2147483647, -2147483648],
              I8: [0, 127, 128, 255, 256, -129, 300, -300, 2147483647, -2147483648]},
    }
    cases = []
    cases += [(f"astype_float32_to_{d}", f32(fvals[d]), d) for d in (F16, BF16)]
    cases += [(f"astype_float32_to_{d}", f32(to_int[d] + big[d]), d) for d in (I8, U8)]
    for s in (F16, BF16):
        cases.append((f"astype_{s}_to_float32", mk(s, half_src[s]), F32))
        o = BF16 if s == F16 else F16
        cases.append((f"astype_{s}_to_{o}", mk(s, half_src[s]), o))
        for d in (I8, U8, I32):
            cases.append((f"astype_{s}_to_{d}", mk(s, to_int[d] + (big[d] if s == BF16 else [])), d))
        cases.append((f"astype_{s}_to_bool", mk(s, [0.0, -0.0, NAN, INF, 0.25, -2.0] +
                                                ([2.0 ** -24] if s == F16 else [1e-30])), BOOL))
    for s in (I8, U8):
        for d in (F32, F16, BF16, I32, U8 if s == I8 else I8):
            cases.append((f"astype_{s}_to_{d}", mk(s, ints[s]), d))
    cases += [("astype_int32_to_float16", i32(ints[I32][F16]), F16),
              ("astype_int32_to_bfloat16", i32(ints[I32][BF16]), BF16),
              ("astype_int32_to_int8", i32(ints[I32][I8]), I8),
              ("astype_int32_to_uint8", i32(ints[I32][I8]), U8),
              ("astype_bool_to_float16", bools([True, False, True]), F16),
              ("astype_bool_to_int8", bools([True, False, True]), I8)]
    for name, x, d in cases:
        add_case(name, "astype", [x], {"dtype": d}, lambda a, d=d: a.astype(MX_DT[d]), astype_ref(d), EXACT)


# --------------------------------------------------------------------------------------

def _np_axis(axis):
    return None if axis is None else (tuple(axis) if isinstance(axis, list) else axis)


def half_reduction_cases():
    """Reductions, scans and softmax of float16 / bfloat16 (tolerances: see red_tol), and the
    integer reductions of int8 / uint8."""
    seed = 9800

    def scan64(op, v, axis):
        if axis is None:
            v, axis = v.reshape(-1), 0
        if op == "logcumsumexp":
            return np.logaddexp.accumulate(v, axis=axis)
        return {"cumsum": np.cumsum, "cumprod": np.cumprod,
                "cummax": lambda a, axis: np.maximum.accumulate(a, axis=axis)}[op](v, axis=axis)

    def lse64(v, axis, keepdims):
        m = np.max(v, axis=_np_axis(axis), keepdims=True)
        r = np.log(np.sum(np.exp(v - m), axis=_np_axis(axis), keepdims=True)) + m
        return r if keepdims else np.squeeze(r, axis=_np_axis(axis) if axis is not None else None)

    def sm64(v, axis):
        m = np.max(v, axis=_np_axis(axis), keepdims=True)
        e = np.exp(v - m)
        return e / np.sum(e, axis=_np_axis(axis), keepdims=True)

    def trailing(axis, ndim):
        ax = norm_axes(axis, ndim)
        return ax == tuple(range(ndim - len(ax), ndim))

    for dt in (F16, BF16):
        R = lambda v, dt=dt: round_to(dt, v)  # noqa: E731
        seed += 50
        x = hrandn(dt, seed, (2, 3, 4), 1.5)
        xp = hrandu(dt, seed + 1, (2, 3, 4), 0.6, 1.5)
        xs = hrandn(dt, seed + 2, (3, 5), 1.5)
        xf = hrandn(dt, seed + 3, (2, 4), 1.5)
        xsp = hrandu(dt, seed + 4, (3, 5), 0.6, 1.5)
        xfp = hrandu(dt, seed + 5, (2, 4), 0.6, 1.5)
        nm = half_name(dt)

        def count(a, axis):
            return int(np.prod([a.shape[i] for i in norm_axes(axis, a.ndim)]))

        # ---- reductions: over axis 1 (not trailing: tandem's composite path) and over all
        for op in ("sum", "prod", "max", "min", "mean", "argmax", "argmin", "logsumexp"):
            a = xp if op == "prod" else x
            axes = [1, None] + ([-1] if op == "logsumexp" else [])
            for axis in axes:
                tag = "all" if axis is None else f"axis{axis}".replace("-", "m")
                mfn = MX_REDUCE[op]
                if op in ("argmax", "argmin", "max", "min"):
                    def ref(v, axis=axis, op=op, R=R):
                        f = {"max": np.max, "min": np.min, "argmax": np.argmax, "argmin": np.argmin}[op]
                        r = f(widen(v), axis=_np_axis(axis))
                        return np.asarray(r).astype(np.uint32) if op.startswith("arg") else R(r)
                    add_case(f"{op}_{tag}_{nm}", op, [a], {"axis": axis, "keepdims": False},
                             lambda v, mfn=mfn, axis=axis: mfn(v, axis=axis), ref, EXACT)
                    continue
                n = count(a, axis)
                v = widen(a)
                f64 = {"sum": lambda v, ax: np.sum(v, axis=_np_axis(ax)),
                       "prod": lambda v, ax: np.prod(v, axis=_np_axis(ax)),
                       "mean": lambda v, ax: np.mean(v, axis=_np_axis(ax)),
                       "logsumexp": lambda v, ax: lse64(v, ax, False)}[op]
                if op == "prod":  # the partial products, in the order of the flattened row
                    rows = np.moveaxis(v, norm_axes(axis, v.ndim), list(range(len(norm_axes(axis, v.ndim)))))
                    rows = rows.reshape(n, -1)
                    M = float(np.max(np.abs(np.cumprod(rows, axis=0))))
                else:
                    M = float(max(np.max(np.abs(v)), np.max(np.abs(f64(v, axis)))))

                def model(a, op=op, axis=axis, f64=f64, R=R, n=n):
                    v = widen(a)
                    if op == "mean":  # sum, rounded, divided by the count
                        return R(widen(R(np.sum(v, axis=_np_axis(axis)))) / n)
                    if op == "logsumexp" and not trailing(axis, v.ndim):
                        m = np.max(v, axis=_np_axis(axis), keepdims=True)
                        e = widen(R(np.exp(widen(R(v - m)))))
                        t = widen(R(np.sum(e, axis=_np_axis(axis), keepdims=True)))
                        r = widen(R(np.log(t))) + m
                        return R(np.squeeze(r, axis=_np_axis(axis) if axis is not None else None))
                    return R(f64(v, axis))
                add_case(f"{op}_{tag}_{nm}", op, [a], {"axis": axis, "keepdims": False},
                         lambda v, mfn=mfn, axis=axis: mfn(v, axis=axis),
                         lambda a, f64=f64, axis=axis, R=R: R(f64(widen(a), axis)),
                         red_tol(dt, n, M, divide=n if op == "mean" else 1), model_fn=model)

        # ---- softmax: over axis 1 (composite in tandem), the last axis (one kernel), all
        for axis in (1, -1, None):
            tag = "all" if axis is None else f"axis{axis}".replace("-", "m")
            n = count(x, axis)

            def model(a, axis=axis, R=R):
                v = widen(a)
                if trailing(axis, v.ndim):
                    return R(sm64(v, axis))
                m = np.max(v, axis=_np_axis(axis), keepdims=True)
                e = widen(R(np.exp(widen(R(v - m)))))
                t = widen(R(np.sum(e, axis=_np_axis(axis), keepdims=True)))
                return R(e / t)
            add_case(f"softmax_{tag}_{nm}", "softmax", [x], {"axis": axis},
                     lambda v, axis=axis: mx.softmax(v, axis=axis),
                     lambda a, axis=axis, R=R: R(sm64(widen(a), axis)),
                     softmax_tol(dt, n), model_fn=model)

        # ---- var / std (two passes in tandem: mean, then squared deviations, each rounded)
        for op in ("var", "std"):
            for axis, ddof in ((1, 0), (None, 1)):
                tag = ("all" if axis is None else f"axis{axis}") + f"_ddof{ddof}"
                n = count(x, axis)
                v = widen(x)
                dev = np.abs(v - np.mean(v, axis=_np_axis(axis), keepdims=True))
                M = float(np.max(dev) ** 2 if op == "var" else np.max(dev))

                def model(a, op=op, axis=axis, ddof=ddof, R=R, n=n):
                    v = widen(a)
                    mu = widen(R(widen(R(np.sum(v, axis=_np_axis(axis), keepdims=True))) / n))
                    d = widen(R(v - mu))
                    s = widen(R(d * d))
                    var = widen(R(widen(R(np.sum(s, axis=_np_axis(axis)))) / (n - ddof)))
                    return R(var) if op == "var" else R(np.sqrt(var))
                npfn = np.var if op == "var" else np.std
                add_case(f"{op}_{tag}_{nm}", op, [x], {"axis": axis, "keepdims": False, "ddof": ddof},
                         lambda a, op=op, axis=axis, ddof=ddof: getattr(mx, op)(a, axis=axis, ddof=ddof),
                         lambda a, npfn=npfn, axis=axis, ddof=ddof, R=R: R(npfn(widen(a), axis=_np_axis(axis),
                                                                                ddof=ddof)),
                         red_tol(dt, n, M), model_fn=model)

        # ---- scans over axis 1 (rows of 5) and over all (8 elements); MLX keeps the running
        # sum / product / log-sum in the half type (c = n), tandem in float32
        for op in ("cumsum", "cumprod", "cummax", "logcumsumexp"):
            for axis, a in ((1, xsp if op == "cumprod" else xs), (None, xfp if op == "cumprod" else xf)):
                tag = "all" if axis is None else f"axis{axis}"
                n = a.shape[1] if axis == 1 else a.size
                r64 = scan64(op, widen(a), axis)
                M = float(max(np.max(np.abs(widen(a))), np.max(np.abs(r64))))  # values, partial results
                tol = EXACT if op == "cummax" else red_tol(dt, n, M, half_acc=True)
                params = {"axis": axis, "reverse": False, "inclusive": True}
                add_case(f"{op}_{tag}_{nm}", op, [a], params,
                         lambda v, op=op, axis=axis: getattr(mx, op)(v, axis=axis),
                         lambda v, op=op, axis=axis, R=R: R(scan64(op, widen(v), axis)), tol,
                         model_fn=lambda v, op=op, axis=axis, R=R: R(scan64(op, widen(v), axis)))

    # ---- int8 / uint8: sums and products count in int32 / uint32 (and wrap there); max keeps
    # the dtype; argmax gives uint32
    i8 = mk(I8, randi(9900, (3, 4), -128, 128))
    u8 = mk(U8, randi(9901, (3, 4), 0, 256))
    big8 = mk(I8, [[127, 127, 127, 127, -128, -128], [100, 100, 100, 100, 100, 100]])
    for name, op, a, axis in [("sum_axis1_int8", "sum", i8, 1), ("sum_all_uint8", "sum", u8, None),
                              ("prod_axis1_int8", "prod", big8, 1), ("prod_axis0_uint8", "prod", u8, 0),
                              ("max_axis1_int8", "max", i8, 1), ("min_axis0_uint8", "min", u8, 0),
                              ("argmax_all_int8", "argmax", i8, None), ("argmin_axis1_uint8", "argmin", u8, 1)]:
        def ref(v, op=op, axis=axis):
            f = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min,
                 "argmax": np.argmax, "argmin": np.argmin}[op]
            r = np.asarray(f(as_i64(v).astype(object) if op in ("sum", "prod") else v, axis=axis))
            if op in ("sum", "prod"):
                return wrap(r, I32 if dtype_name(v) == I8 else U32)
            return r.astype(np.uint32) if op.startswith("arg") else r
        add_case(name, op, [a], {"axis": axis, "keepdims": False},
                 lambda v, op=op, axis=axis: MX_REDUCE[op](v, axis=axis), ref, EXACT)


def half_matmul_norm_cases():
    def ref(a, b, R):
        return R(np.matmul(widen(a), widen(b)))
    seed = 9950
    for dt in (F16, BF16):
        R = lambda v, dt=dt: round_to(dt, v)  # noqa: E731
        for tag, sa, sb in (("2d", (3, 5), (5, 4)), ("batch", (2, 3, 8), (8, 5)),
                            ("vector_matrix", (6,), (6, 4)), ("matrix_vector", (4, 7), (7,))):
            seed += 2
            a, b = hrandn(dt, seed, sa), hrandn(dt, seed + 1, sb)
            k = sa[-1]
            terms = np.abs(widen(a))[..., :, None] * np.abs(widen(b)).reshape(
                (k, -1) if len(sb) > 1 else (k, 1))  # |a_ik * b_kj|, for the largest term
            add_case(f"matmul_{tag}_{half_name(dt)}", "matmul", [a, b], {}, mx.matmul,
                     lambda x, y, R=R: ref(x, y, R), red_tol(dt, k, float(np.max(terms))),
                     model_fn=lambda x, y, R=R: ref(x, y, R))

    # fast layerNorm / rmsNorm (MLX's CPU kernels compute them in float32 and round once)
    def ln64(x, w, b, eps):
        mu = x.mean(axis=-1, keepdims=True)
        y = (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + eps)
        return y * (w if w is not None else 1.0) + (b if b is not None else 0.0)

    def rms64(x, w, eps):
        y = x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps)
        return y * (w if w is not None else 1.0)
    seed = 9980
    for dt in (F16, BF16):
        R = lambda v, dt=dt: round_to(dt, v)  # noqa: E731
        for shape, hw, hb in (((2, 7), True, True), ((3, 8), False, False)):
            seed += 3
            x = hrandn(dt, seed, shape, 2.0)
            ins = [x] + ([mk(dt, randn(seed + 1, shape[-1:], 0.5) + np.float32(1.0))] if hw else []) + \
                ([hrandn(dt, seed + 2, shape[-1:], 0.5)] if hb else [])
            eps = 1e-5
            tag = "affine" if hw else "no_affine"

            def lref(*arrs, hw=hw, hb=hb, R=R):
                xx, ww, bb = _norm_inputs_h(arrs, (hw, hb))
                return R(ln64(xx, ww, bb, 1e-5))

            def lmx(*arrs, hw=hw, hb=hb):
                xx, ww, bb = _norm_inputs_h(arrs, (hw, hb), widen_=False)
                return mx.fast.layer_norm(xx, ww, bb, 1e-5)
            y = widen(lref(*ins))
            add_case(f"layer_norm_{tag}_{half_name(dt)}", "layerNorm", ins,
                     {"hasWeight": hw, "hasBias": hb, "eps": eps}, lmx, lref,
                     red_tol(dt, shape[-1], float(np.max(np.abs(y)))), model_fn=lref)

            def rref(*arrs, hw=hw, R=R):
                xx, ww = _norm_inputs_h(arrs, (hw,))
                return R(rms64(xx, ww, 1e-5))

            def rmx(*arrs, hw=hw):
                xx, ww = _norm_inputs_h(arrs, (hw,), widen_=False)
                return mx.fast.rms_norm(xx, ww, 1e-5)
            rins = ins[:2] if hw else ins[:1]
            y = widen(rref(*rins))
            add_case(f"rms_norm_{'weight' if hw else 'no_weight'}_{half_name(dt)}", "rmsNorm", rins,
                     {"hasWeight": hw, "eps": eps}, rmx, rref,
                     red_tol(dt, shape[-1], float(np.max(np.abs(y)))), model_fn=rref)


def _norm_inputs_h(arrs, has, widen_=True):
    it = iter(arrs)
    out = [next(it)] + [next(it) if h else None for h in has]
    return [widen(a) if (widen_ and a is not None) else a for a in out]


def half_cases():
    """The cases of the packed dtypes (float16, bfloat16, int8, uint8)."""
    half_unary_cases()
    half_binary_cases()
    half_where_clip_astype_cases()
    half_reduction_cases()
    half_matmul_norm_cases()


# --------------------------------------------------------------------------------------

def main():
    # NumPy warns about nan/inf/empty-slice results, which the references produce on purpose
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    unary_cases()
    binary_cases()
    where_cases()
    clip_cases()
    astype_cases()
    reduction_cases()
    matmul_cases()
    shape_cases()
    creation_cases()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import model_ops
    model_ops.cases(sys.modules[__name__])
    half_cases()  # the packed dtypes, last so that the cases before them keep their lines

    out = {
        "generator": "tests/golden/make_golden.py",
        "mlx_version": mx.__version__,
        "numpy_version": np.__version__,
        "cases": CASES,
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden.json")
    # one case per line: compact, yet diffs stay readable
    head = json.dumps({k: v for k, v in out.items() if k != "cases"}, allow_nan=False)[:-1]
    body = ",\n".join(json.dumps(c, allow_nan=False) for c in CASES)
    with open(path, "w") as f:
        f.write(head + ', "cases": [\n' + body + "\n]}\n")
    json.loads(open(path).read())  # sanity: valid JSON
    counts = {}
    for c in CASES:
        counts[c["op"]] = counts.get(c["op"], 0) + 1
    print(f"wrote {len(CASES)} cases to {path} ({os.path.getsize(path)} bytes)")
    print(" ".join(f"{k}:{v}" for k, v in counts.items()))


if __name__ == "__main__":
    main()
