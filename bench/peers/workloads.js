// The workloads of the peer benchmark, shared by every runtime: the catalog (workloads.json),
// deterministic inputs, the derived throughput, and the check of every result against a
// reference computed here in float64 JS loops (a deterministic sample of elements or rows where
// the output is big). The model workloads' weights and references are in models.js.
import {
  cnnInputs, mlpFlops, mlpInputs, mlpStepReference, modelFlops, modelReference, transformerGradInputs,
  transformerGradReference, transformerInputs, transformerStackInputs, transformerStackReference,
} from "./models.js";
import { uniform } from "./random.js";

export async function loadCatalog() {
  const response = await fetch(new URL("./workloads.json", import.meta.url));
  if (!response.ok) throw new Error(`workloads.json: HTTP ${response.status}`);
  return (await response.json()).workloads;
}

// The installed version of an npm package, from its package.json under /node_modules/.
export async function packageVersion(name) {
  const response = await fetch(`/node_modules/${name}/package.json`);
  return response.ok ? `${name} ${(await response.json()).version}` : `${name} (version unknown)`;
}

// A named input: data and shape.
function input(shape, seed, lo, hi) {
  const size = shape.reduce((p, q) => p * q, 1);
  return { shape, data: uniform(size, seed, lo, hi) };
}

// The inputs of a workload, by name. Created once per workload, outside every timed region.
export function makeInputs(w) {
  switch (w.op) {
    case "matmul":
      return { a: input([w.m, w.k], 11, 0, 1), b: input([w.k, w.n], 12, 0, 1) };
    case "exp":
      return { x: input([w.n], 21, -2, 2) };
    case "exp-chain":
      return { b: input([w.rows, w.cols], 31, 0, 1) };
    case "mlx":
      return { a: input([w.m, w.k], 41, 0, 1), b: input([w.k, w.n], 42, 0, 1) };
    case "sum":
      return { x: input([w.n], 51, 0, 1) };
    case "sum-axis0":
      return { x: input([w.rows, w.cols], 52, 0, 1) };
    case "add-chain":
      return { s: input([w.n], 61, 0, 1) };
    case "softmax":
      return { x: input([w.rows, w.cols], 71, -4, 4) };
    case "transformer":
      return inDtype(w, transformerInputs(w));
    case "cnn":
      return cnnInputs(w);
    case "mlp-train":
      return mlpInputs(w);
    case "transformer-grad":
      return transformerGradInputs(w);
    case "transformer-stack":
      return transformerStackInputs(w);
    default:
      throw new Error(`unknown op ${w.op}`);
  }
}

// A workload with a `dtype` of float16 gets its inputs rounded to float16 here, so that the
// float64 reference starts from the values the runtime holds.
function inDtype(w, inputs) {
  if (w.dtype !== "float16") return inputs;
  for (const input of Object.values(inputs)) input.data = input.data.map(Math.f16round);
  return inputs;
}

// The derived figure: {unit, amount}, where the figure is amount / seconds (or, for µs/op,
// milliseconds * 1000 / amount).
export function derivedOf(w) {
  const bytes = (n) => ({ unit: "GB/s", amount: n * 1e-9 });
  switch (w.op) {
    case "matmul":
      return { unit: "GFLOP/s", amount: 2 * w.m * w.n * w.k * 1e-9 };
    case "exp":
      return bytes(8 * w.n);
    case "exp-chain":
      return bytes(8 * w.rows * w.cols * w.count);
    case "sum":
      return bytes(4 * w.n + 4);
    case "sum-axis0":
      return bytes(4 * w.rows * w.cols + 4 * w.cols);
    case "add-chain":
      return { unit: "µs/op", amount: w.count };
    case "softmax":
      return bytes(8 * w.rows * w.cols);
    case "transformer":
    case "cnn":
      return { unit: "GFLOP/s", amount: modelFlops(w) * 1e-9 };
    case "mlp-train":
      return { unit: "GFLOP/s", amount: mlpFlops(w) * 1e-9 };
    case "transformer-grad":
      // The forward pass and the backward pass's two products per forward one.
      return { unit: "GFLOP/s", amount: 3 * modelFlops({ ...w, op: "transformer" }) * 1e-9 };
    case "transformer-stack":
      // The same per block (a checkpointed block's recomputation not counted).
      return { unit: "GFLOP/s", amount: 3 * w.layers * modelFlops({ ...w, op: "transformer" }) * 1e-9 };
    default:
      return null;
  }
}

export function derivedValue(derived, ms) {
  if (!derived || !(ms > 0)) return null;
  return derived.unit === "µs/op" ? (ms * 1000) / derived.amount : derived.amount / (ms / 1000);
}

// Indices to check in an output of n elements: all of them up to `count`, else the first and
// last `edges` and a deterministic scatter in between.
function sampleIndices(n, count, edges = 256) {
  if (n <= count) return Array.from({ length: n }, (_, i) => i);
  const out = [];
  for (let i = 0; i < edges; i++) out.push(i, n - 1 - i);
  let state = 12345;
  for (let i = out.length; i < count; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out.push(state % n);
  }
  return out;
}

const SAMPLE = 1 << 16;

// Compares the sampled elements of `actual` with `reference(i)`; an infinite reference must be
// matched exactly. Returns null or a message naming the first mismatch.
function compare(name, actual, expectedLength, indices, reference, rtol, atol = 0) {
  if (!actual || typeof actual.length !== "number") return `${name}: no data read back`;
  if (actual.length !== expectedLength) {
    return `${name}: ${actual.length} elements read back, expected ${expectedLength}`;
  }
  let bad = 0;
  let first = null;
  for (const i of indices) {
    const r = reference(i);
    const a = actual[i];
    const ok = Number.isFinite(r) ? Math.abs(a - r) <= atol + rtol * Math.abs(r) : a === r;
    if (!ok) {
      bad++;
      if (first === null) first = `${name}[${i}] = ${a}, expected ${r}`;
    }
  }
  if (bad === 0) return null;
  return `${first} (${bad} of ${indices.length} checked elements off by more than rtol ${rtol}${atol ? ` + atol ${atol}` : ""})`;
}

function matmulRef(a, b, k, n) {
  return (idx) => {
    const i = Math.floor(idx / n);
    const j = idx % n;
    let acc = 0;
    for (let p = 0; p < k; p++) acc += a[i * k + p] * b[p * n + j];
    return acc;
  };
}

function chainedExpRef(b, count) {
  return (i) => {
    let v = b[i];
    for (let c = 0; c < count; c++) v = Math.exp(v);
    return v;
  };
}

// A checker for the workload: check(outputs) → null or a message. References that cost a pass
// over a big input are computed once, on first use.
export function makeChecker(w, inputs) {
  switch (w.op) {
    case "matmul": {
      const ref = matmulRef(inputs.a.data, inputs.b.data, w.k, w.n);
      const indices = sampleIndices(w.m * w.n, 4096);
      return ([c]) => compare("c", c, w.m * w.n, indices, ref, 1e-3);
    }
    case "exp": {
      const x = inputs.x.data;
      const indices = sampleIndices(w.n, SAMPLE);
      return ([y]) => compare("y", y, w.n, indices, (i) => Math.exp(x[i]), 1e-5);
    }
    case "exp-chain": {
      const size = w.rows * w.cols;
      const indices = sampleIndices(size, size);
      const ref = chainedExpRef(inputs.b.data, w.count);
      return ([y]) => compare("y", y, size, indices, ref, 1e-5);
    }
    case "mlx": {
      const xRef = matmulRef(inputs.a.data, inputs.b.data, w.k, w.n);
      const xIndices = sampleIndices(w.m * w.n, 4096);
      const size = w.k * w.n;
      const yRef = chainedExpRef(inputs.b.data, w.count);
      const yIndices = sampleIndices(size, size);
      return ([x, y]) =>
        compare("x", x, w.m * w.n, xIndices, xRef, 1e-3) ?? compare("y", y, size, yIndices, yRef, 1e-5);
    }
    case "sum": {
      let total = null;
      return ([s]) => {
        if (total === null) {
          total = 0;
          for (const v of inputs.x.data) total += v;
        }
        return compare("sum", s, 1, [0], () => total, 1e-3);
      };
    }
    case "sum-axis0": {
      let columns = null;
      return ([s]) => {
        if (columns === null) {
          columns = new Float64Array(w.cols);
          const x = inputs.x.data;
          for (let r = 0; r < w.rows; r++) {
            for (let c = 0; c < w.cols; c++) columns[c] += x[r * w.cols + c];
          }
        }
        return compare("sum", s, w.cols, sampleIndices(w.cols, w.cols), (c) => columns[c], 1e-3);
      };
    }
    case "add-chain": {
      const s = inputs.s.data;
      const indices = sampleIndices(w.n, w.n);
      return ([y]) => compare("y", y, w.n, indices, (i) => (w.count + 1) * s[i], 1e-4);
    }
    case "softmax": {
      const x = inputs.x.data;
      const rows = sampleIndices(w.rows, 64, 2);
      const cache = new Map();
      const rowRef = (r) => {
        if (!cache.has(r)) {
          let max = -Infinity;
          for (let c = 0; c < w.cols; c++) max = Math.max(max, x[r * w.cols + c]);
          let sum = 0;
          const e = new Float64Array(w.cols);
          for (let c = 0; c < w.cols; c++) sum += e[c] = Math.exp(x[r * w.cols + c] - max);
          for (let c = 0; c < w.cols; c++) e[c] /= sum;
          cache.set(r, e);
        }
        return cache.get(r);
      };
      const indices = [];
      for (const r of new Set(rows)) for (let c = 0; c < w.cols; c++) indices.push(r * w.cols + c);
      const ref = (i) => rowRef(Math.floor(i / w.cols))[i % w.cols];
      return ([y]) => compare("y", y, w.rows * w.cols, indices, ref, 1e-4, 1e-9);
    }
    case "transformer":
    case "cnn": {
      const { size, indices, reference } = modelReference(w, inputs);
      // float16 rounds every stored activation (a relative step of 2^-11) through two
      // residual blocks: 2e-2 where float32 is held to 2e-3.
      const tol = w.dtype === "float16" ? 2e-2 : 2e-3;
      return ([y]) => compare("y", y, size, indices, reference, tol, tol);
    }
    case "mlp-train": {
      // [loss, updated w3, updated b1] against the float64 step.
      let ref = null;
      const all = (n) => Array.from({ length: n }, (_, i) => i);
      return ([loss, w3, b1]) => {
        ref ??= mlpStepReference(w, inputs);
        return (
          compare("loss", loss, 1, [0], () => ref.loss, 1e-4) ??
          compare("w3", w3, ref.w3.length, all(ref.w3.length), (i) => ref.w3[i], 1e-4, 2e-6) ??
          compare("b1", b1, ref.b1.length, all(ref.b1.length), (i) => ref.b1[i], 1e-4, 2e-6)
        );
      };
    }
    case "transformer-stack": {
      // [loss, the last block's d b2] against the float64 stack.
      let ref = null;
      const all = (n) => Array.from({ length: n }, (_, i) => i);
      return ([loss, b2]) => {
        ref ??= transformerStackReference(w, inputs);
        return (
          compare("loss", loss, 1, [0], () => ref.loss, 2e-3, 1e-1) ??
          compare("d b2", b2, w.dim, all(w.dim), (i) => ref.b2[i], 1e-4, 1e-4)
        );
      };
    }
    case "transformer-grad": {
      // [loss, d b2, d b1] against the float64 block.
      let ref = null;
      const all = (n) => Array.from({ length: n }, (_, i) => i);
      return ([loss, b2, b1]) => {
        ref ??= transformerGradReference(w, inputs);
        return (
          compare("loss", loss, 1, [0], () => ref.loss, 1e-3, 1e-2) ??
          compare("d b2", b2, w.dim, all(w.dim), (i) => ref.b2[i], 1e-4, 1e-4) ??
          compare("d b1", b1, w.hidden, all(w.hidden), (i) => ref.b1[i], 2e-3, 2e-3)
        );
      };
    }
    default:
      throw new Error(`unknown op ${w.op}`);
  }
}
