#!/usr/bin/env python3
"""Generate MLX's gradients of tandem's ops: ``grad.json`` beside this file.

Every case of ``make_golden.py`` whose inputs and single output are float32 becomes a gradient
case: the function ``sum(op(*inputs) * w)``, for fixed weights ``w`` of the output's shape
(``0.5 + (i % 7) * 0.25`` for element ``i``, so every element's cotangent differs), and its
gradient with respect to every float32 input, computed by ``mx.grad`` on MLX's CPU. Cases with NaN,
infinite or empty float inputs (they test values, not derivatives), and cases whose gradient
MLX cannot take or takes with a non-finite value (a domain edge, such as ``sqrt`` at 0), are
left out; the count of each is printed. The test (``tests/grad_golden.rs``) runs the
same function through tandem's reverse mode on both devices.

Each case also carries central differences of its loss in float64 (``float64_differences``), from make_golden's NumPy reference evaluated in float64: per float input, per element, the slope where the loss is
smooth there and mx.grad agrees with it (1e-3), else null; null for a whole case whose ops have
no float64 reference. The tests check tandem's gradients against these too.

How to run (from the repository root, with the venv of make_golden.py):
    /tmp/golden-venv/bin/python tests/golden/make_grad_golden.py
"""

import json
import os
import sys
import warnings

import mlx.core as mx
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_golden as golden  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5
# The norms of rows far from zero lose digits to the mean's cancellation, in MLX and in tandem
# alike, differently: their cases allow 2e-3.
LOOSE = {"layerNorm": 2e-3, "rmsNorm": 2e-3}
CAPTURED = []

# Cases left out because mx.grad is wrong there: the script asserts that MLX's gradient still
# disagrees with central differences of MLX's own function (so the exception is noticed if MLX
# changes), and tandem's reverse mode is checked against differences instead (tests/grad.rs).
KNOWN_MLX_GRAD_DEVIATIONS = {
    "conv_transpose1d_all_params_float32": "MLX 0.32.4's vjp of conv_transpose1d with "
    "output_padding 2, stride 3, dilation 2 and groups 2 returns a gradient of shape (2, 3, 4) "
    "for an input of shape (2, 4, 4), its values off where they overlap (2.97 at the last "
    "position where differences of MLX's own function give 5.96)",
}


def capture(name, op, inputs, params, mlx_fn, ref_fn, tol, multi=False, model_fn=None):
    """Stands in for make_golden.add_case: keeps the float32, single-output cases."""
    if multi or not inputs:
        return
    if any(golden.dtype_name(a) not in (golden.F32, golden.I32, golden.U32, golden.BOOL) for a in inputs):
        return
    if not any(golden.dtype_name(a) == golden.F32 and a.size > 0 for a in inputs):
        return
    # NaN and infinity test values, not derivatives (and MLX 0.32.4 crashes on cummax's
    # gradient with a NaN first); empty arrays have no gradient to check.
    floats = [a for a in inputs if golden.dtype_name(a) == golden.F32]
    if any(a.size == 0 or not np.isfinite(a).all() for a in floats):
        return
    CAPTURED.append((name, op, inputs, params, mlx_fn, ref_fn))


def weights(shape):
    n = int(np.prod(shape)) if len(shape) else 1
    return np.array([0.5 + (i % 7) * 0.25 for i in range(n)], dtype=np.float32).reshape(shape)


def deviates(inputs, mlx_fn, floats, grads):
    """Whether MLX's gradient of the first float input differs from central differences."""
    x = inputs[floats[0]]
    h = 1e-2

    def at(k, d):
        moved = [a.copy() for a in inputs]
        moved[floats[0]].reshape(-1)[k] += d
        out = mlx_fn(*[golden.to_mx(a) for a in moved])
        return float(mx.sum(out * mx.array(weights(tuple(out.shape)))))

    numeric = np.array([(at(k, h) - at(k, -h)) / (2 * h) for k in range(x.size)])
    if grads[0].shape != x.shape:
        return True
    return not np.allclose(numeric, grads[0].reshape(-1), rtol=1e-2, atol=1e-2)


class Float64References:
    """make_golden's NumPy references, evaluated in float64 throughout: their float32
    conversions of inputs and results are made identities, and float64 arrays count as
    float32 ones for their dtype checks. (MLX's own float64 kernels are no reference: its CPU
    computes transcendentals at float32 precision.)"""

    def __enter__(self):
        self.saved = golden.to_f32, golden.as_f64, dict(golden.NP_TO_NAME)
        golden.to_f32 = lambda x: np.asarray(x, dtype=np.float64)
        golden.as_f64 = lambda a: np.asarray(a, dtype=np.float64)
        golden.NP_TO_NAME[np.dtype(np.float64)] = golden.F32
        return self

    def __exit__(self, *exc):
        golden.to_f32, golden.as_f64 = self.saved[0], self.saved[1]
        golden.NP_TO_NAME.clear()
        golden.NP_TO_NAME.update(self.saved[2])


def float64_differences(inputs, ref_fn, floats, grads):
    """Central differences in float64 of the case's loss, the NumPy reference evaluated in
    float64, for each float input: a list per input, with None where the loss is not smooth
    at the point (differences at h and h / 10 disagree: a kink, a tie, a step of floor) or
    where MLX's gradient is the convention there rather than the slope. None for a whole case
    whose reference cannot run in float64."""
    def loss(xs):
        with np.errstate(all="ignore"):
            out = np.asarray(ref_fn(*xs))
        if out.dtype != np.float64:
            raise TypeError("the reference left float64")
        return float(np.sum(out * weights(out.shape).astype(np.float64)))

    base = [a.astype(np.float64) if k in floats else a for k, a in enumerate(inputs)]
    with Float64References():
        try:
            loss(base)
        except Exception:
            return None
        return [slopes(loss, base, k, g) for g, k in zip(grads, floats)]


def slopes(loss, base, k, g):
    numeric = []
    for i in range(base[k].size):
        def slope(h):
            moved = [a.copy() for a in base]
            moved[k].reshape(-1)[i] += h
            up = loss(moved)
            moved[k].reshape(-1)[i] -= 2 * h
            return (up - loss(moved)) / (2 * h)
        scale = max(1.0, abs(float(base[k].reshape(-1)[i])))
        coarse, fine = slope(1e-4 * scale), slope(1e-5 * scale)
        smooth = abs(coarse - fine) <= 1e-6 * max(1.0, abs(fine))
        agrees = abs(fine - float(g.reshape(-1)[i])) <= 1e-3 * max(1.0, abs(fine))
        numeric.append(fine if smooth and agrees else None)
    return numeric


def gradient_case(name, op, inputs, params, mlx_fn, ref_fn):
    """The case's record, or a reason to leave it out."""
    mx_inputs = [golden.to_mx(a) for a in inputs]
    floats = [k for k, a in enumerate(inputs) if golden.dtype_name(a) == golden.F32]
    try:
        out = mlx_fn(*mx_inputs)
        if out.dtype != mx.float32 or out.size == 0:
            return "not a float32 output"
        w = mx.array(weights(tuple(out.shape)))

        def loss(*xs):
            return mx.sum(mlx_fn(*xs) * w)

        grads = mx.grad(loss, argnums=floats)(*mx_inputs)
        grads = list(grads) if isinstance(grads, (list, tuple)) else [grads]
        mx.eval(*grads)
    except Exception as e:  # MLX has no gradient for it (an integer op, a sort's indices, ...)
        return f"MLX: {type(e).__name__}"
    arrays = [np.array(g, copy=True).astype(np.float32) for g in grads]
    if not all(np.isfinite(a).all() for a in arrays):
        return "non-finite gradient"
    if name in KNOWN_MLX_GRAD_DEVIATIONS:
        assert deviates(inputs, mlx_fn, floats, arrays), f"{name}: MLX now agrees; remove it"
        print(f"note: {name} left out: {KNOWN_MLX_GRAD_DEVIATIONS[name]}", file=sys.stderr)
        return "MLX's gradient is wrong (known)"
    numeric = float64_differences(inputs, ref_fn, floats, arrays)
    return {
        "name": name,
        "op": op,
        "inputs": [golden.encode(a) for a in inputs],
        "params": params,
        "wrt": floats,
        "grads": [golden.encode(a) for a in arrays],
        "float64_differences": numeric,
        "rtol": LOOSE.get(op, RTOL),
        "atol": ATOL,
    }


def main():
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    golden.add_case = capture
    for make in (golden.unary_cases, golden.binary_cases, golden.where_cases, golden.clip_cases,
                 golden.reduction_cases, golden.matmul_cases, golden.shape_cases):
        make()
    import model_ops
    model_ops.cases(golden)
    cases, skipped = [], {}
    for captured in CAPTURED:
        if os.environ.get("GRAD_GOLDEN_TRACE"):
            print(captured[0], file=sys.stderr, flush=True)
        record = gradient_case(*captured)
        if isinstance(record, str):
            skipped[record] = skipped.get(record, 0) + 1
        else:
            cases.append(record)
    out = {"generator": "tests/golden/make_grad_golden.py", "mlx_version": mx.__version__}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "grad.json")
    head = json.dumps(out, allow_nan=False)[:-1]
    body = ",\n".join(json.dumps(c, allow_nan=False) for c in cases)
    with open(path, "w") as f:
        f.write(head + ', "cases": [\n' + body + "\n]}\n")
    json.loads(open(path).read())
    checked = [x for c in cases for per in (c["float64_differences"] or []) for x in per]
    print(f"wrote {len(cases)} gradient cases to {path} ({os.path.getsize(path)} bytes); "
          f"left out: {skipped}; float64 differences: {sum(x is not None for x in checked)} of "
          f"{len(checked)} elements smooth and agreeing with mx.grad, "
          f"{sum(c['float64_differences'] is None for c in cases)} cases without a float64 reference")


if __name__ == "__main__":
    main()
