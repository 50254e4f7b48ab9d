#!/usr/bin/env python3
"""Check the weight files tandem wrote (tests/weights/tandem/) against python/expected.json.

tandem's Rust test writes them when run with TANDEM_WRITE_FIXTURES=1:
- `all.safetensors`: every tensor of python/numpy.safetensors named "np_<name>" and every tensor
  of python/mlx.safetensors named "mlx_<name>", metadata {"written_by": "tandem"};
- `<name>.npy` for every valid .npy fixture but mlx_bf16.npy, same name, little-endian, C order.

Each file is read three ways, and each read must give the expected dtype, shape and exact bits:
- by hand (the safetensors header JSON and data offsets, with no holes or overlaps; the .npy
  header's descr, fortran_order False and shape, and exactly the data's size after it);
- by safetensors (`safe_open(..., framework="np")`: its metadata() and get_tensor for every
  non-bfloat16 tensor, which is what `safetensors.numpy.load_file` does per tensor;
  load_file itself refuses the whole file because numpy has no bfloat16) or `numpy.load`;
- by MLX (`mx.load`, the only reader here of bfloat16).

How to run (from the repository root):
    /tmp/golden-venv/bin/python tests/weights/check_tandem.py [DIR]
DIR defaults to tests/weights/tandem. Exit status: 0 all good, 1 a mismatch, 2 no DIR yet.
"""

import json
import os
import sys

import mlx.core as mx
import numpy as np
from safetensors import safe_open

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from make_fixtures import DT, MX_NAME, NP_NAME, bits_of, le_bytes, npy_header, parse_safetensors  # noqa: E402

PREFIX = {"numpy.safetensors": "np_", "mlx.safetensors": "mlx_"}
METADATA = {"written_by": "tandem"}

failures, notes, checked = [], [], [0]


def check(ok, what):
    checked[0] += 1
    if not ok:
        failures.append(what)
    return ok


def compare(where, a, want):
    """a: a numpy or mlx array as a reader returned it; want: the expected.json entry."""
    if isinstance(a, mx.array):
        dtype = MX_NAME.get(a.dtype, str(a.dtype))
        shape = list(a.shape)
        a = np.array(a.view(mx.uint16)) if dtype == "bfloat16" else np.array(a)
    else:
        dtype, shape = NP_NAME.get(a.dtype.type, str(a.dtype)), list(a.shape)
    if not check(dtype == want["dtype"], f"{where}: dtype {dtype}, expected {want['dtype']}"):
        return
    if not check(shape == want["shape"], f"{where}: shape {shape}, expected {want['shape']}"):
        return
    bits = bits_of(a, dtype)
    bad = [i for i, (x, y) in enumerate(zip(bits, want["bits"])) if x != y]
    check(not bad, f"{where}: bits differ at flat index {bad[:8]}: got "
          f"{[hex(bits[i]) for i in bad[:8]]}, expected {[hex(want['bits'][i]) for i in bad[:8]]}")


def check_safetensors(path, want):
    """want: tensor name -> expected entry."""
    name = os.path.basename(path)
    raw = open(path, "rb").read()
    try:
        header, data, n = parse_safetensors(raw)
    except Exception as e:
        check(False, f"{name}: header does not parse: {type(e).__name__}: {e}")
        return
    if n % 8:
        notes.append(f"{name}: header is {n} bytes, not padded to a multiple of 8 (allowed; "
                     "safetensors' Python writer pads, MLX's does not)")
    check(header.get("__metadata__") == METADATA,
          f"{name}: __metadata__ {header.get('__metadata__')}, expected {METADATA}")
    names = set(header) - {"__metadata__"}
    check(names == set(want), f"{name}: tensors missing {sorted(set(want) - names)}, "
          f"unexpected {sorted(names - set(want))}")
    spans = sorted((tuple(v["data_offsets"]), k) for k, v in header.items() if k != "__metadata__")
    ends = [0] + [e for (_, e), _ in spans]
    check(all(s == e for ((s, _), _), e in zip(spans, ends)) and ends[-1] == len(data),
          f"{name}: data offsets {[(k, list(o)) for o, k in spans]} do not tile the "
          f"{len(data)}-byte data buffer (holes, overlaps or trailing bytes)")
    for t, w in sorted(want.items()):
        h = header.get(t)
        if h is None:
            continue
        where = f"{name}:{t} (by hand)"
        ok = check(h["dtype"] == DT[w["dtype"]][1], f"{where}: dtype {h['dtype']}, expected {DT[w['dtype']][1]}")
        ok = check(h["shape"] == w["shape"], f"{where}: shape {h['shape']}, expected {w['shape']}") and ok
        s, e = h["data_offsets"]
        if ok:
            check(data[s:e] == le_bytes(w["bits"], w["dtype"]),
                  f"{where}: data bytes {data[s:e].hex()}, expected {le_bytes(w['bits'], w['dtype']).hex()}")
    try:
        with safe_open(path, framework="np") as f:
            check(f.metadata() == METADATA, f"{name}: safe_open metadata {f.metadata()}, expected {METADATA}")
            for t, w in sorted(want.items()):
                if w["dtype"] != "bfloat16" and t in names:
                    compare(f"{name}:{t} (safetensors)", f.get_tensor(t), w)
    except Exception as e:
        check(False, f"{name}: safetensors refuses it: {type(e).__name__}: {e}")
    try:
        arrays, meta = mx.load(path, return_metadata=True)
        check(meta == METADATA, f"{name}: mx.load metadata {meta}, expected {METADATA}")
        for t, w in sorted(want.items()):
            if t in arrays:
                compare(f"{name}:{t} (mx.load)", arrays[t], w)
    except Exception as e:
        check(False, f"{name}: mx.load refuses it: {type(e).__name__}: {e}")


def check_npy(path, w):
    name = os.path.basename(path)
    raw = open(path, "rb").read()
    try:
        version, shape, fortran, descr, off = npy_header(raw)
    except Exception as e:
        check(False, f"{name}: header does not parse: {type(e).__name__}: {e}")
        return
    if off % 64 or raw[off - 1:off] != b"\n":
        notes.append(f"{name}: header ends at byte {off} (the format asks for a multiple of 64, "
                     "ending in '\\n'; numpy.load does not insist)")
    check(descr == DT[w["dtype"]][2], f"{name}: descr {descr!r}, expected {DT[w['dtype']][2]!r}")
    check(fortran is False, f"{name}: fortran_order {fortran}, expected False")
    check(list(shape) == w["shape"], f"{name}: header shape {shape}, expected {tuple(w['shape'])}")
    size = int(np.prod(w["shape"])) * np.dtype(DT[w["dtype"]][0]).itemsize
    check(len(raw) - off == size, f"{name}: {len(raw) - off} data bytes after the header, expected {size}")
    for reader, read in (("numpy.load", lambda p: np.load(p, allow_pickle=False)), ("mx.load", mx.load)):
        try:
            compare(f"{name} ({reader})", read(path), w)
        except Exception as e:
            check(False, f"{name}: {reader} refuses it: {type(e).__name__}: {e}")


def main():
    tandem = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(HERE, "tandem")
    if not os.path.isdir(tandem):
        print(f"{tandem} does not exist yet: tandem writes it when its Rust test runs with "
              "TANDEM_WRITE_FIXTURES=1 (see tests/weights/README.md)")
        return 2
    expected = json.load(open(os.path.join(HERE, "python", "expected.json")))
    st_want, npy_want = {}, {}
    for t in expected["tensors"]:
        if t["file"] in PREFIX:
            st_want[PREFIX[t["file"]] + t["name"]] = t
        elif t["dtype"] != "bfloat16":
            npy_want[t["file"]] = t
    present = set(os.listdir(tandem))
    for f in sorted(present - {"all.safetensors"} - set(npy_want)):
        notes.append(f"{f}: not a file tandem is expected to write; not checked")
    if check("all.safetensors" in present, "all.safetensors: missing"):
        check_safetensors(os.path.join(tandem, "all.safetensors"), st_want)
    for f, w in npy_want.items():
        if check(f in present, f"{f}: missing"):
            check_npy(os.path.join(tandem, f), w)

    for n in notes:
        print(f"note: {n}")
    for f in failures:
        print(f"FAIL: {f}")
    print(f"{tandem}: {checked[0] - len(failures)} of {checked[0]} checks passed "
          f"({len(st_want)} tensors in all.safetensors, {len(npy_want)} .npy files)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
