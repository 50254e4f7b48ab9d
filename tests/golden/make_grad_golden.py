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
    CAPTURED.append((name, op, inputs, params, mlx_fn))


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


def gradient_case(name, op, inputs, params, mlx_fn):
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
    return {
        "name": name,
        "op": op,
        "inputs": [golden.encode(a) for a in inputs],
        "params": params,
        "wrt": floats,
        "grads": [golden.encode(a) for a in arrays],
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
    print(f"wrote {len(cases)} gradient cases to {path} ({os.path.getsize(path)} bytes); "
          f"left out: {skipped}")


if __name__ == "__main__":
    main()
