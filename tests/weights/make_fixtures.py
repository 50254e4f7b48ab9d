#!/usr/bin/env python3
"""Write the weight-file fixtures that tandem's `load` tests read, and their expected contents.

What it makes (in tests/weights/python/, see README.md beside this script)
------------------------------------------------------------------------
- `numpy.safetensors`: written by `safetensors.numpy.save_file`, metadata
  {"format": "np", "source": "tandem fixture"}; float16, float32, int32, uint32, int8, uint8,
  bool, empty and 0-d tensors.
- `mlx.safetensors`: written by MLX's `mx.save_safetensors`, metadata {"format": "mlx"};
  bfloat16 (incl. a 0-d one), float16, uint8, bool.
- `*.npy`: written by `numpy.save` (one per dtype, a 0-d, an empty, a big-endian and a
  Fortran-order one), and by `mx.save`: `mlx_f32_fortran.npy` (a transposed array, which MLX
  writes with fortran_order True) and `mlx_bf16.npy` (MLX writes bfloat16 as descr '<V2').
- Malformed files for the error tests: truncated.safetensors, bad_header.safetensors,
  overlap.safetensors, out_of_range.safetensors, unknown_dtype.safetensors, truncated.npy,
  bad_magic.npy, unknown_dtype.npy (hand-built headers: json.dumps + a little-endian u64 length).
- `expected.json`: for every valid file its metadata and for every tensor its tandem dtype,
  shape and element bit patterns (row-major, little-endian unsigned ints); for every malformed
  file the error kind and the substrings its message must contain.

Float tensors hold NaN, +inf, -inf, -0.0, a subnormal, the dtype's max and 1/3 (a tensor with
fewer than 7 elements holds some of them; every file's float dtype covers them across its
tensors where it has room, and every float dtype covers all of them across the fixtures).
Integer tensors hold the dtype's min and max, -1 (signed) and 0.

Before writing expected.json it checks every valid file: read back with safetensors.numpy,
numpy.load and mx.load, and parsed by hand, each must give the expected dtype, shape and bits;
and every malformed file must be refused by safetensors / numpy.

How to run (from the repository root)
-------------------------------------
    /tmp/golden-venv/bin/pip install "mlx[cpu]" numpy safetensors
    /tmp/golden-venv/bin/python tests/weights/make_fixtures.py

Written with MLX 0.32.4, NumPy 2.4.6, safetensors 0.8.0, Python 3.11.7. The output is
deterministic: rerunning it with these versions rewrites the same bytes.
"""

import ast
import json
import os
import struct
import sys

import mlx.core as mx
import numpy as np
import safetensors
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "python")

# tandem dtype name -> (unsigned view for the bits, safetensors dtype, npy descr)
DT = {
    "float16": (np.uint16, "F16", "<f2"),
    "bfloat16": (np.uint16, "BF16", "<V2"),  # npy: what MLX writes; numpy has no bfloat16
    "float32": (np.uint32, "F32", "<f4"),
    "int32": (np.uint32, "I32", "<i4"),
    "uint32": (np.uint32, "U32", "<u4"),
    "int8": (np.uint8, "I8", "|i1"),
    "uint8": (np.uint8, "U8", "|u1"),
    "bool": (np.uint8, "BOOL", "|b1"),
}
NP_NAME = {np.float16: "float16", np.float32: "float32", np.int32: "int32", np.uint32: "uint32",
           np.int8: "int8", np.uint8: "uint8", np.bool_: "bool"}
MX_NAME = {mx.float16: "float16", mx.bfloat16: "bfloat16", mx.float32: "float32",
           mx.int32: "int32", mx.uint32: "uint32", mx.int8: "int8", mx.uint8: "uint8",
           mx.bool_: "bool"}

NAN, INF = float("nan"), float("inf")
F16 = dict(nan=NAN, inf=INF, ninf=-INF, nzero=-0.0, sub=2.0**-24, max=65504.0, third=1 / 3)
F32 = dict(nan=NAN, inf=INF, ninf=-INF, nzero=-0.0, sub=2.0**-149, max=float(np.finfo(np.float32).max),
           third=1 / 3)
# bfloat16 as bit patterns (numpy has no bfloat16): 0x0001 is the smallest subnormal (9.2e-41),
# 0x7f7f the max (3.39e38), 0x3eab is 1/3 rounded to nearest even.
BF16 = dict(nan=0x7FC0, inf=0x7F80, ninf=0xFF80, nzero=0x8000, sub=0x0001, max=0x7F7F, third=0x3EAB)


def f16(*keys, shape):
    return np.array([F16[k] for k in keys], np.float16).reshape(shape)


def f32(*keys, shape, dtype=np.float32):
    return np.array([F32[k] for k in keys], dtype).reshape(shape)


def bf16(*keys_or_bits, shape):
    """A bfloat16 tensor as its uint16 bit patterns (a key of BF16 or raw bits)."""
    bits = [BF16[k] if isinstance(k, str) else k for k in keys_or_bits]
    return np.array(bits, np.uint16).reshape(shape)


def bits_of(arr, dtype):
    """Element bit patterns, row-major order of the logical array, as unsigned ints."""
    a = np.ascontiguousarray(arr)
    if dtype == "bfloat16":
        return a.astype("<u2").ravel().tolist()
    a = a.astype(a.dtype.newbyteorder("<"))
    return a.view(DT[dtype][0]).ravel().tolist()


def le_bytes(bits, dtype):
    return np.array(bits, np.dtype(DT[dtype][0]).newbyteorder("<")).tobytes()


def to_mx(arr, dtype):
    if dtype == "bfloat16":
        return mx.array(arr).view(mx.bfloat16)
    return mx.array(arr)


def safetensors_bytes(header, data):
    """A safetensors file: little-endian u64 header length, header JSON (dict or raw str), data."""
    h = header if isinstance(header, str) else json.dumps(header, separators=(",", ":"))
    h = h.encode()
    return struct.pack("<Q", len(h)) + h + data


def parse_safetensors(raw):
    """The header (dict) and data buffer of a safetensors file, parsed by hand."""
    (n,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8:8 + n]), raw[8 + n:], n


# ---------------------------------------------------------------------------------------------
# The valid fixtures: file -> [(name, tandem dtype, array)], and per file how it is written.

NUMPY_ST = [
    ("f16", "float16", f16("nan", "inf", "ninf", "nzero", "sub", "third", shape=(2, 3))),
    ("f32", "float32", f32("nan", "sub", "max", "nzero", shape=(4,))),
    ("i32", "int32", np.array([[-2**31, 2**31 - 1], [-1, 0]], np.int32)),
    ("u32", "uint32", np.array([0, 2**32 - 1, 0x01020304], np.uint32)),
    ("i8", "int8", np.array([-128, 127, -1, 0, 5], np.int8)),
    ("u8", "uint8", np.array([0, 255, 1, 128, 127, 2, 3], np.uint8)),
    ("bool", "bool", np.array([True, False, True])),
    ("empty", "float32", np.zeros((0, 3), np.float32)),
    ("scalar", "float32", f32("third", shape=())),
    ("empty_f16", "float16", np.zeros((0,), np.float16)),
]
NUMPY_ST_META = {"format": "np", "source": "tandem fixture"}

MLX_ST = [
    ("bf16", "bfloat16", bf16("nan", "inf", "ninf", "nzero", "sub", "max", shape=(3, 2))),
    ("f16", "float16", f16("max", "third", "ninf", "sub", shape=(4,))),
    ("u8", "uint8", np.array([[0, 255], [1, 128]], np.uint8)),
    ("bool", "bool", np.array([False, True])),
    ("scalar_bf16", "bfloat16", bf16("third", shape=())),
]
MLX_ST_META = {"format": "mlx"}

NPY = [  # (file, tandem dtype, array as numpy.save gets it)
    ("f16.npy", "float16", f16("nan", "nzero", "max", "sub", shape=(2, 2))),
    ("f32.npy", "float32", f32("inf", "ninf", "third", shape=(3,))),
    ("i32.npy", "int32", np.array([[-2**31, 2**31 - 1, -1], [0, 1, 0x01020304]], np.int32)),
    ("u32.npy", "uint32", np.array([0, 2**32 - 1], np.uint32)),
    ("i8.npy", "int8", np.array([-128, 127, -1, 0], np.int8)),
    ("u8.npy", "uint8", np.array([0, 255, 1], np.uint8)),
    ("bool.npy", "bool", np.array([[True, False], [False, True]])),
    ("scalar_f32.npy", "float32", f32("nzero", shape=())),
    ("empty_i32.npy", "int32", np.zeros((0,), np.int32)),
    # byte order matters for every value here: 1/3 is 0x3eaaaaab, -0.0 swapped is a subnormal
    ("f32_big_endian.npy", "float32", f32("third", "nzero", "sub", shape=(3,), dtype=">f4")),
    ("f32_fortran.npy", "float32",
     np.asfortranarray(f32("nan", "inf", "ninf", "nzero", "sub", "max", shape=(2, 3)))),
]
MLX_NPY = ("mlx_bf16.npy", "bfloat16", bf16("third", "nzero", "nan", 0x007F, 0xFF7F, "inf", shape=(2, 3)))
# mx.save of a transposed array: fortran_order True with column-major data, as MLX writes it
MLX_NPY_F32 = ("mlx_f32_fortran.npy", "float32", f32("third", "ninf", "max", "nan", "nzero", "sub", shape=(2, 3)))


def write_valid():
    files = []
    save_file({n: a for n, _, a in NUMPY_ST}, os.path.join(OUT, "numpy.safetensors"),
              metadata=NUMPY_ST_META)
    files.append(("numpy.safetensors", "safetensors", f"safetensors {safetensors.__version__} "
                  "(safetensors.numpy.save_file)", NUMPY_ST_META, NUMPY_ST))
    mx.save_safetensors(os.path.join(OUT, "mlx.safetensors"),
                        {n: to_mx(a, d) for n, d, a in MLX_ST}, metadata=MLX_ST_META)
    files.append(("mlx.safetensors", "safetensors", f"mlx {mx.__version__} (mx.save_safetensors)",
                  MLX_ST_META, MLX_ST))
    for name, dtype, arr in NPY:
        np.save(os.path.join(OUT, name), arr)
        files.append((name, "npy", f"numpy {np.__version__} (numpy.save)", None,
                      [(name[:-4], dtype, arr)]))
    name, dtype, arr = MLX_NPY_F32
    mx.save(os.path.join(OUT, name), mx.array(np.ascontiguousarray(arr.T)).T)
    files.append((name, "npy", f"mlx {mx.__version__} (mx.save)", None, [(name[:-4], dtype, arr)]))
    name, dtype, arr = MLX_NPY
    try:
        mx.save(os.path.join(OUT, name), to_mx(arr, dtype))
        files.append((name, "npy", f"mlx {mx.__version__} (mx.save)", None, [(name[:-4], dtype, arr)]))
    except Exception as e:  # MLX refusing bfloat16 .npy: no such fixture
        print(f"mx.save refused a bfloat16 .npy ({type(e).__name__}: {e}); skipping {name}")
    return files


def npy_header(raw):
    """(version, shape, fortran_order, descr, data offset) of a .npy file, parsed by hand."""
    assert raw[:6] == b"\x93NUMPY", raw[:6]
    version = (raw[6], raw[7])
    n, start = (struct.unpack("<H", raw[8:10])[0], 10) if version[0] == 1 else \
        (struct.unpack("<I", raw[8:12])[0], 12)
    h = ast.literal_eval(raw[start:start + n].decode("latin1"))
    return version, tuple(h["shape"]), h["fortran_order"], h["descr"], start + n


def check_valid(files, tensors):
    """Every valid file, read back by each library and by hand, gives the expected tensors."""
    exp = {(t["file"], t["name"]): t for t in tensors}
    for fname, kind, _, meta, entries in files:
        path = os.path.join(OUT, fname)
        raw = open(path, "rb").read()
        got = {}  # name -> list of (reader, dtype, shape, bits)
        if kind == "safetensors":
            header, data, _ = parse_safetensors(raw)
            assert header.get("__metadata__") == meta, (fname, header.get("__metadata__"))
            spans = sorted(tuple(v["data_offsets"]) for k, v in header.items() if k != "__metadata__")
            assert spans[0][0] == 0 and spans[-1][1] == len(data), fname
            assert all(a[1] == b[0] for a, b in zip(spans, spans[1:])), f"{fname}: holes/overlaps"
            for name, _, _ in entries:
                t = exp[(fname, name)]
                h = header[name]
                assert h["dtype"] == DT[t["dtype"]][1] and h["shape"] == t["shape"], (fname, name, h)
                s, e = h["data_offsets"]
                assert data[s:e] == le_bytes(t["bits"], t["dtype"]), (fname, name, "raw bytes")
            with safe_open(path, framework="np") as f:
                assert f.metadata() == meta, (fname, f.metadata())
                for name, dtype, _ in entries:
                    if dtype != "bfloat16":
                        a = f.get_tensor(name)
                        got.setdefault(name, []).append(("safe_open", a))
            if all(d != "bfloat16" for _, d, _ in entries):
                for name, a in load_file(path).items():
                    got.setdefault(name, []).append(("load_file", a))
            arrays, m = mx.load(path, return_metadata=True)
            assert m == meta, (fname, m)
            assert set(arrays) == {n for n, _, _ in entries}, fname
        else:
            name = fname[:-4]
            t = exp[(fname, name)]
            _, shape, fortran, descr, off = npy_header(raw)
            assert list(shape) == t["shape"], (fname, shape)
            if t["dtype"] != "bfloat16":
                got.setdefault(name, []).append(("numpy.load", np.load(path)))
                # by hand: the data after the header, in the header's byte and element order
                a = np.frombuffer(raw[off:], np.dtype(descr)).reshape(shape, order="F" if fortran else "C")
                got[name].append(("by hand", a))
            arrays = {name: mx.load(path)}
        for name, a in arrays.items():
            got.setdefault(name, []).append(("mx.load", a))
        for name, reads in got.items():
            t = exp[(fname, name)]
            for reader, a in reads:
                if isinstance(a, mx.array):
                    dtype, shape = MX_NAME[a.dtype], list(a.shape)
                    if dtype == "bfloat16":
                        a = a.view(mx.uint16)
                    a = np.array(a)
                    bits = bits_of(a, "bfloat16" if dtype == "bfloat16" else dtype)
                else:
                    dtype, shape = NP_NAME[a.dtype.type], list(a.shape)
                    bits = bits_of(a, dtype)
                ok = (dtype, shape, bits) == (t["dtype"], t["shape"], t["bits"])
                assert ok, f"{fname}:{name} via {reader}: {dtype} {shape} {bits} != {t}"
        assert set(got) == {n for n, _, _ in entries}, (fname, set(got))
    # the bfloat16 bit patterns are what MLX makes of their float32 values (1/3 rounded to
    # nearest even; NaN: any NaN)
    for key, want in BF16.items():
        value = 1 / 3 if key == "third" else np.array([want << 16], np.uint32).view(np.float32)[0]
        b = int(np.array(mx.array(value, dtype=mx.bfloat16).view(mx.uint16)))
        assert b == want or (key == "nan" and b & 0x7FFF > 0x7F80), (key, hex(b), hex(want))


def specials_of(bits, dtype):
    """Which of the 7 float specials (keys of F32) a float tensor's bit patterns hold."""
    e, m = {"float16": (5, 10), "bfloat16": (8, 7), "float32": (8, 23)}[dtype]
    third = {"float16": bits_of(np.float16(1 / 3), "float16")[0], "bfloat16": BF16["third"],
             "float32": bits_of(np.float32(1 / 3), "float32")[0]}[dtype]
    found = set()
    for b in bits:
        sign, exp, mant = b >> (e + m), (b >> m) & ((1 << e) - 1), b & ((1 << m) - 1)
        top = (1 << e) - 1
        found |= {k for k, hit in [
            ("nan", exp == top and mant), ("inf", exp == top and not mant and not sign),
            ("ninf", exp == top and not mant and sign), ("nzero", b == 1 << (e + m)),
            ("sub", exp == 0 and mant), ("max", exp == top - 1 and mant == (1 << m) - 1),
            ("third", b == third)] if hit}
    return found


def check_coverage(tensors):
    """Every float dtype holds all 7 specials across the fixtures; prints what each file lacks."""
    union = {}
    for fname in dict.fromkeys(t["file"] for t in tensors):
        per = {}
        for t in tensors:
            if t["file"] == fname and t["dtype"] in ("float16", "bfloat16", "float32"):
                per.setdefault(t["dtype"], set()).update(specials_of(t["bits"], t["dtype"]))
        for d, found in per.items():
            union.setdefault(d, set()).update(found)
            if found != set(F32):
                print(f"  {fname}: its {d} tensors lack {sorted(set(F32) - found)} (too few elements)")
    for d, found in union.items():
        assert found == set(F32), (d, set(F32) - found)


# ---------------------------------------------------------------------------------------------
# Malformed files. Each entry: file, error (tandem's error kind), mentions (substrings the
# message must contain), and details (facts a test may also want to assert on).

def write_malformed():
    errors = []

    def put(name, raw, error, mentions, **details):
        open(os.path.join(OUT, name), "wb").write(raw)
        errors.append({"file": name, "error": error, "mentions": mentions, "details": details})

    full = open(os.path.join(OUT, "numpy.safetensors"), "rb").read()
    header, data, n = parse_safetensors(full)
    spans = {k: v["data_offsets"] for k, v in header.items() if k != "__metadata__"}
    # cut in the middle of the tensor that holds the middle of the data
    inside = [k for k, (s, e) in spans.items() if s <= len(data) // 2 < e][0]
    s, e = spans[inside]
    kept = (s + e) // 2
    assert s < kept < e
    cut = 8 + n + kept
    put("truncated.safetensors", full[:cut], "ValueError", [str(len(full))],
        why="numpy.safetensors cut in the middle of its data: the header needs more bytes "
            "than the file has; the message names the size the header implies",
        file_size=cut, expected_file_size=len(full), header_len=n,
        data_bytes_expected=len(data), data_bytes_present=kept, cut_inside_tensor=inside,
        tensors_past_end=sorted(k for k, (s, e) in spans.items() if e > kept))

    good = '{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'
    bad = good[:-1] + "]" + good[-1:]  # '...[0,4]}]}': a ']' where ',' or '}' belongs
    at = len(good) - 1
    assert json.loads(good) and bad[at] == "]"
    put("bad_header.safetensors", safetensors_bytes(bad, b"\0\0\x80\x3f"), "ValueError", [str(8 + at)],
        why="the header JSON is broken: an unexpected ']' at byte offset_in_file of the file "
            "(offset_in_header of the header; serde_json says column offset_in_header + 1); the "
            "message names the file offset",
        offset_in_header=at, offset_in_file=8 + at, header_len=len(bad))

    put("overlap.safetensors", safetensors_bytes(
        {"alpha": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
         "beta": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}},
        np.array([1, 2, 3], "<f4").tobytes()), "ValueError", ["alpha", "beta"],
        why="the data of alpha [0, 8) and beta [4, 12) overlap; the message names both",
        offsets={"alpha": [0, 8], "beta": [4, 12]}, data_bytes=12)

    put("out_of_range.safetensors", safetensors_bytes(
        {"delta": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
         "gamma": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}},
        np.array([1, 2, 3, 4], "<f4").tobytes()), "ValueError", ["gamma"],
        why="gamma's data [8, 24) ends past the 16-byte data buffer; delta is fine",
        offsets={"delta": [0, 8], "gamma": [8, 24]}, data_bytes=16)

    put("unknown_dtype.safetensors", safetensors_bytes(
        {"double": {"dtype": "F64", "shape": [2], "data_offsets": [0, 16]},
         "short": {"dtype": "I16", "shape": [3], "data_offsets": [16, 22]}},
        np.array([1, 2], "<f8").tobytes() + np.array([1, 2, 3], "<i2").tobytes()),
        "DTypeError", ["double", "F64"],
        why="F64 and I16 are safetensors dtypes tandem does not support; 'double' comes first "
            "in header order, name order and data order, so a loader that stops at the first "
            "names it ('short' / 'I16' may be named too)",
        also_unsupported={"short": "I16"})

    f32 = open(os.path.join(OUT, "f32.npy"), "rb").read()
    put("truncated.npy", f32[:-6], "ValueError", [str(len(f32))],
        why="f32.npy (float32, shape (3,)) missing its last 6 bytes; the message names the "
            "size the header implies",
        file_size=len(f32) - 6, expected_file_size=len(f32), header_bytes=len(f32) - 12,
        data_bytes_expected=12, data_bytes_present=6)

    put("bad_magic.npy", b"\x93NUMPX" + f32[6:], "ValueError", ["npy"],
        why="f32.npy with its magic changed from b'\\x93NUMPY' to b'\\x93NUMPX': not a .npy file")

    np.save(os.path.join(OUT, "unknown_dtype.npy"), np.array([1.0, 2.0]))  # float64
    errors.append({"file": "unknown_dtype.npy", "error": "DTypeError", "mentions": ["<f8"],
                   "details": {"why": "float64 (descr '<f8'), what numpy.save writes for a plain "
                               "Python float list; tandem has no float64"}})
    return errors


def check_malformed(errors):
    """Each malformed file is refused by the reference readers too (their messages printed)."""
    for e in errors:
        path = os.path.join(OUT, e["file"])
        readers = [("load_file", load_file)] if path.endswith(".safetensors") else [("numpy.load", np.load)]
        if e["file"] == "unknown_dtype.npy":
            readers = []  # numpy reads float64; refusing it is tandem's rule
            assert np.load(path).dtype == np.float64
        for rname, read in readers:
            try:
                read(path)
            except Exception as err:
                print(f"  {e['file']}: {rname} refuses it: {type(err).__name__}: {err}")
            else:
                if e["file"] == "unknown_dtype.safetensors":
                    print(f"  {e['file']}: {rname} reads it (F64/I16 are valid safetensors)")
                else:
                    sys.exit(f"{e['file']}: {rname} read a malformed file")


def main():
    os.makedirs(OUT, exist_ok=True)
    files = write_valid()
    tensors = [{"file": f, "name": n, "dtype": d, "shape": list(a.shape), "bits": bits_of(a, d)}
               for f, _, _, _, entries in files for n, d, a in entries]
    check_valid(files, tensors)
    check_coverage(tensors)
    errors = write_malformed()
    check_malformed(errors)

    file_entries = []
    for fname, kind, writer, meta, entries in files:
        e = {"file": fname, "format": kind, "written_by": writer}
        raw = open(os.path.join(OUT, fname), "rb").read()
        if kind == "safetensors":
            header, _, _ = parse_safetensors(raw)
            e["metadata"] = meta
            e["header_order"] = [k for k in header if k != "__metadata__"]
        else:
            _, _, fortran, descr, _ = npy_header(raw)
            e["descr"], e["fortran_order"] = descr, fortran
        file_entries.append(e)
    fortran = {e["file"] for e in file_entries if e.get("fortran_order")}
    assert fortran == {"f32_fortran.npy", "mlx_f32_fortran.npy"}, fortran

    doc = {
        "generator": "tests/weights/make_fixtures.py",
        "versions": {"mlx": mx.__version__, "numpy": np.__version__,
                     "safetensors": safetensors.__version__, "python": sys.version.split()[0]},
        "files": file_entries, "tensors": tensors, "errors": errors,
    }
    # one entry a line: small, and diffs stay readable
    lines = ['{"generator": %s,' % json.dumps(doc["generator"]),
             ' "versions": %s,' % json.dumps(doc["versions"])]
    for key in ("files", "tensors", "errors"):
        items = [json.dumps(x) for x in doc[key]]
        lines.append(' "%s": [\n  %s\n ]%s' % (key, ",\n  ".join(items), "," if key != "errors" else ""))
    text = "\n".join(lines) + "}\n"
    assert json.loads(text) == doc
    open(os.path.join(OUT, "expected.json"), "w").write(text)

    total = 0
    for name in sorted(os.listdir(OUT)):
        size = os.path.getsize(os.path.join(OUT, name))
        total += size
        print(f"  {size:6d}  python/{name}")
    print(f"checked {len(tensors)} tensors in {len(files)} files and {len(errors)} malformed files; "
          f"{total} bytes in python/")


if __name__ == "__main__":
    main()
