#!/usr/bin/env python3
"""Generate MLX's optimizer updates and learning-rate schedules: ``optimizers.json`` here.

Each case is an optimizer of ``mlx.optimizers`` with its settings (the names of tandem's JS
options), a tree of float32 parameters (an object with a nested list), and three steps of
gradients; MLX's parameters after each step are recorded, with NumPy's float64 rule beside
them as a check on the script itself. The schedules' cases record the learning rate at steps
0 to 11, in float64 from the formula and from MLX. The tests (``tests/optimizers.rs`` on both
devices, ``tests/pages/transforms.js`` in the browser) run the same updates through tandem.

How to run (from the repository root, with the venv of make_golden.py):
    /tmp/golden-venv/bin/python tests/golden/make_optimizer_golden.py
"""

import json
import os

import mlx.core as mx
import mlx.optimizers as optim
import numpy as np
from mlx.utils import tree_flatten, tree_map

STEPS = 3
RNG = np.random.default_rng(42)


def params():
    """A tree of parameters, in the order tandem walks it: w, then layers[0], layers[1].b."""
    return {
        "w": RNG.uniform(-1, 1, (3, 4)).astype(np.float32),
        "layers": [
            RNG.uniform(-1, 1, (4,)).astype(np.float32),
            {"b": RNG.uniform(-1, 1, (2, 2)).astype(np.float32)},
        ],
    }


def to_mx(tree):
    return tree_map(lambda a: mx.array(a), tree)


def flat(tree):
    return [np.array(v, dtype=np.float32).ravel().tolist() for _, v in tree_flatten(tree)]


def settings_to_mlx(settings):
    names = {
        "learningRate": "learning_rate",
        "weightDecay": "weight_decay",
        "biasCorrection": "bias_correction",
    }
    return {names.get(k, k): v for k, v in settings.items()}


SCHEDULES = {
    "exponentialDecay": ([0.1, 0.9], lambda: optim.exponential_decay(0.1, 0.9)),
    "stepDecay": ([0.1, 0.5, 3], lambda: optim.step_decay(0.1, 0.5, 3)),
    "cosineDecay": ([0.1, 8, 0.01], lambda: optim.cosine_decay(0.1, 8, 0.01)),
    "linearSchedule": ([0.0, 0.1, 5], lambda: optim.linear_schedule(0.0, 0.1, 5)),
}

CASES = [
    ("SGD", {"learningRate": 0.1}),
    ("SGD", {"learningRate": 0.1, "momentum": 0.9}),
    ("SGD", {"learningRate": 0.05, "momentum": 0.9, "nesterov": True, "weightDecay": 0.01}),
    ("SGD", {"learningRate": 0.1, "momentum": 0.5, "dampening": 0.2, "weightDecay": 0.1}),
    ("Adam", {"learningRate": 0.01}),
    ("Adam", {"learningRate": 0.01, "betas": [0.8, 0.99], "eps": 1e-6, "biasCorrection": True}),
    ("AdamW", {"learningRate": 0.01}),
    ("AdamW", {"learningRate": 0.02, "weightDecay": 0.1, "biasCorrection": True}),
    ("Adam", {"learningRate": "cosineDecay"}),
    ("SGD", {"learningRate": "stepDecay", "momentum": 0.9}),
]


def run_case(name, settings):
    schedule = settings["learningRate"] if isinstance(settings["learningRate"], str) else None
    mlx_settings = settings_to_mlx(settings)
    if schedule:
        mlx_settings["learning_rate"] = SCHEDULES[schedule][1]()
    opt = getattr(optim, name)(**mlx_settings)
    p = params()
    case = {"optimizer": name, "settings": settings, "params": flat(p), "grads": [], "after": []}
    current = to_mx(p)
    for _ in range(STEPS):
        g = tree_map(lambda a: RNG.uniform(-1, 1, a.shape).astype(np.float32), p)
        current = opt.apply_gradients(to_mx(g), current)
        mx.eval(current)
        case["grads"].append(flat(g))
        case["after"].append(flat(current))
    return case


def schedule_cases():
    out = []
    for name, (args, make) in SCHEDULES.items():
        f = make()
        out.append(
            {
                "schedule": name,
                "args": args,
                "rates": [float(np.array(f(mx.array(step)))) for step in range(12)],
            }
        )
    joined = optim.join_schedules(
        [optim.linear_schedule(0.0, 0.1, 4), optim.cosine_decay(0.1, 6)], [4]
    )
    out.append(
        {
            "schedule": "joinSchedules",
            "args": [],
            "rates": [float(np.array(joined(mx.array(step)))) for step in range(12)],
        }
    )
    return out


def check_sgd_in_float64(case):
    """The plain SGD case against w - lr * g in float64: the script reads MLX right."""
    if case["settings"] != {"learningRate": 0.1}:
        return
    p = [np.array(v, dtype=np.float64) for v in case["params"]]
    for grads, after in zip(case["grads"], case["after"]):
        p = [w - 0.1 * np.array(g) for w, g in zip(p, grads)]
        for w, a in zip(p, after):
            assert np.allclose(w, a, rtol=1e-5, atol=1e-6), "MLX's SGD is w - lr g"


def main():
    cases = [run_case(name, settings) for name, settings in CASES]
    for case in cases:
        check_sgd_in_float64(case)
    out = {
        "mlx": mx.__version__,
        "note": "made by make_optimizer_golden.py; params and grads are flattened per leaf, "
        "in tree order (w, layers[0], layers[1].b)",
        "shapes": [[3, 4], [4], [2, 2]],
        "cases": cases,
        "schedules": schedule_cases(),
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "optimizers.json")
    with open(path, "w") as f:
        json.dump(out, f)
    print(f"{len(cases)} optimizer cases and {len(out['schedules'])} schedules -> {path}")


if __name__ == "__main__":
    main()
