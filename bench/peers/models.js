// The two model workloads of the peer benchmark: their weights (made before timing, the same
// for every runtime), their FLOP counts, and a float64 reference for checking. Shapes follow
// MLX's layouts: a linear layer's weight is [in, out] (y = x @ w + b); a convolution's input is
// NHWC and its weight [out, kh, kw, in] (runtimes with other layouts transpose the weights
// while preparing, outside the timing).
//
// - "transformer": one pre-norm GPT-2-small block on a sequence: layer norm, causal
//   multi-head attention (fused QKV projection), residual, layer norm, a GELU (erf) MLP,
//   residual. Checked on a sample of rows, whose keys and values need every row's projection.
// - "cnn": three 3x3 convolutions with bias and ReLU, padding 1, strides from the catalog.
//   Checked on the first and last images of the batch.
import { uniform } from "./random.js";

const vector = (n, seed, lo, hi) => ({ shape: [n], data: uniform(n, seed, lo, hi) });
// A [rows, cols] weight with variance 1/rows, so activations stay near 1 through the layers.
function dense(rows, cols, seed) {
  const s = Math.sqrt(3 / rows);
  return { shape: [rows, cols], data: uniform(rows * cols, seed, -s, s) };
}

export function transformerInputs(w) {
  const { seq: t, dim: d, hidden: f } = w;
  return {
    x: { shape: [t, d], data: uniform(t * d, 81, -1, 1) },
    ln1w: vector(d, 82, 0.5, 1.5), ln1b: vector(d, 83, -0.1, 0.1),
    wqkv: dense(d, 3 * d, 84), bqkv: vector(3 * d, 85, -0.1, 0.1),
    wo: dense(d, d, 86), bo: vector(d, 87, -0.1, 0.1),
    ln2w: vector(d, 88, 0.5, 1.5), ln2b: vector(d, 89, -0.1, 0.1),
    w1: dense(d, f, 90), b1: vector(f, 91, -0.1, 0.1),
    w2: dense(f, d, 92), b2: vector(d, 93, -0.1, 0.1),
  };
}

export function cnnInputs(w) {
  const c = w.channels;
  const inputs = { x: { shape: [w.batch, w.size, w.size, c[0]], data: uniform(w.batch * w.size * w.size * c[0], 101, 0, 1) } };
  for (let l = 0; l < 3; l++) {
    const fan = 9 * c[l];
    const s = Math.sqrt(3 / fan);
    inputs[`w${l + 1}`] = { shape: [c[l + 1], 3, 3, c[l]], data: uniform(c[l + 1] * fan, 102 + 2 * l, -s, s) };
    inputs[`b${l + 1}`] = vector(c[l + 1], 103 + 2 * l, -0.1, 0.1);
  }
  return inputs;
}

// Spatial extent after each layer (3x3, padding 1).
export function cnnSizes(w) {
  const sizes = [w.size];
  for (const s of w.strides) sizes.push(Math.floor((sizes.at(-1) + 2 - 3) / s) + 1);
  return sizes;
}

export function modelFlops(w) {
  if (w.op === "transformer") {
    const { seq: t, dim: d, hidden: f } = w;
    // Projections and MLP, plus q·k and p·v (the causal half is still computed by most).
    return 2 * t * d * (3 * d + d + 2 * f) + 2 * 2 * t * t * d;
  }
  const sizes = cnnSizes(w);
  let flops = 0;
  for (let l = 0; l < 3; l++) flops += 2 * w.batch * sizes[l + 1] ** 2 * 9 * w.channels[l] * w.channels[l + 1];
  return flops;
}

// erf to about 1e-12 (a continued series near 0, the asymptotic complement beyond), float64.
export function erf(x) {
  const a = Math.abs(x);
  if (a < 2.5) {
    let term = a, sum = a;
    for (let n = 1; n < 80; n++) {
      term *= (-a * a) / n;
      sum += term / (2 * n + 1);
    }
    return Math.sign(x) * (2 / Math.sqrt(Math.PI)) * sum;
  }
  // erfc by a continued fraction (Lentz), good past 2.5.
  let f = a, c = a, d = 0;
  for (let n = 1; n < 200; n++) {
    const an = n / 2;
    d = a + an * d; d = 1 / d;
    c = a + an / c;
    f *= c * d;
  }
  return Math.sign(x) * (1 - Math.exp(-a * a) / (f * Math.sqrt(Math.PI)));
}

const gelu = (v) => 0.5 * v * (1 + erf(v / Math.SQRT2));

function layerNorm(row, w, b) {
  const n = row.length;
  let mean = 0;
  for (const v of row) mean += v;
  mean /= n;
  let vari = 0;
  for (const v of row) vari += (v - mean) ** 2;
  const inv = 1 / Math.sqrt(vari / n + 1e-5);
  return Float64Array.from(row, (v, i) => (v - mean) * inv * w[i] + b[i]);
}

// row (length k) @ w ([k, n], row-major) + bias.
function linear(row, w, bias, n) {
  const out = Float64Array.from(bias);
  for (let p = 0; p < row.length; p++) {
    const v = row[p];
    const base = p * n;
    for (let j = 0; j < n; j++) out[j] += v * w[base + j];
  }
  return out;
}

// The output rows of the block for `rows`, each a Float64Array of dim; `seeHidden(r, h)`, if
// given, gets each row's MLP pre-activation.
function transformerRows(w, inputs, rows, seeHidden = () => {}) {
  const { seq: t, dim: d, heads, hidden: f } = w;
  const I = Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, v.data]));
  const x = (r) => I.x.subarray(r * d, (r + 1) * d);
  const qkv = [];
  for (let r = 0; r < t; r++) qkv.push(linear(layerNorm(x(r), I.ln1w, I.ln1b), I.wqkv, I.bqkv, 3 * d));
  const hd = d / heads;
  const scale = 1 / Math.sqrt(hd);
  return rows.map((r) => {
    const merged = new Float64Array(d);
    for (let h = 0; h < heads; h++) {
      const q = qkv[r].subarray(h * hd, (h + 1) * hd);
      const scores = [];
      for (let j = 0; j <= r; j++) {
        const k = qkv[j].subarray(d + h * hd, d + (h + 1) * hd);
        let s = 0;
        for (let i = 0; i < hd; i++) s += q[i] * k[i];
        scores.push(s * scale);
      }
      const max = Math.max(...scores);
      const e = scores.map((s) => Math.exp(s - max));
      const total = e.reduce((a, b) => a + b, 0);
      for (let j = 0; j <= r; j++) {
        const v = qkv[j].subarray(2 * d + h * hd, 2 * d + (h + 1) * hd);
        for (let i = 0; i < hd; i++) merged[h * hd + i] += (e[j] / total) * v[i];
      }
    }
    const attended = linear(merged, I.wo, I.bo, d);
    const y = Float64Array.from(x(r), (v, i) => v + attended[i]);
    const pre = linear(layerNorm(y, I.ln2w, I.ln2b), I.w1, I.b1, f);
    seeHidden(r, pre);
    const m = linear(pre.map(gelu), I.w2, I.b2, d);
    return y.map((v, i) => v + m[i]);
  });
}

// One image through the three layers: NHWC in, the last layer's [s, s, c] out.
function cnnImage(w, inputs, image) {
  const sizes = cnnSizes(w);
  const c = w.channels;
  const pixels = sizes[0] * sizes[0] * c[0];
  let act = Float64Array.from(inputs.x.data.subarray(image * pixels, (image + 1) * pixels));
  for (let l = 0; l < 3; l++) {
    const [n, m, cin, cout, s] = [sizes[l], sizes[l + 1], c[l], c[l + 1], w.strides[l]];
    const wt = inputs[`w${l + 1}`].data;
    const bias = inputs[`b${l + 1}`].data;
    const out = new Float64Array(m * m * cout);
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < m; j++) {
        for (let o = 0; o < cout; o++) {
          let acc = bias[o];
          for (let di = 0; di < 3; di++) {
            const y = i * s + di - 1;
            if (y < 0 || y >= n) continue;
            for (let dj = 0; dj < 3; dj++) {
              const xx = j * s + dj - 1;
              if (xx < 0 || xx >= n) continue;
              const a = (y * n + xx) * cin;
              const b = ((o * 3 + di) * 3 + dj) * cin;
              for (let k = 0; k < cin; k++) acc += act[a + k] * wt[b + k];
            }
          }
          out[(i * m + j) * cout + o] = Math.max(acc, 0);
        }
      }
    }
    act = out;
  }
  return act;
}

// {indices, reference(i)} over the output's flat index, computed once on first use.
export function modelReference(w, inputs) {
  let values = null;
  if (w.op === "transformer") {
    const rows = [0, 1, 2, 31, 64, 100, w.seq - 1];
    const indices = rows.flatMap((r) => Array.from({ length: w.dim }, (_, i) => r * w.dim + i));
    const size = w.seq * w.dim;
    return {
      size,
      indices,
      reference: (i) => {
        values ??= new Map(transformerRows(w, inputs, rows).map((row, n) => [rows[n], row]));
        return values.get(Math.floor(i / w.dim))[i % w.dim];
      },
    };
  }
  const last = cnnSizes(w).at(-1);
  const per = last * last * w.channels[3];
  const images = [0, w.batch - 1];
  const indices = images.flatMap((b) => Array.from({ length: per }, (_, i) => b * per + i));
  return {
    size: w.batch * per,
    indices,
    reference: (i) => {
      values ??= new Map(images.map((b) => [b, cnnImage(w, inputs, b)]));
      return values.get(Math.floor(i / per))[i % per];
    },
  };
}

// The training workload ("mlp-train"): one step of an MLP (784-512-512-10, ReLU) on a batch,
// with a softmax cross-entropy loss and Adam (bias-corrected, as tf.train.adam is). Every run
// is the first step from the same weights and a fresh optimizer, so its results are fixed:
// the loss, the updated last weight and the updated first bias (which needs the whole
// backward pass). epsilon is 1e-4, so that an update is a smooth function of its gradient:
// at 1e-8 a gradient that is nearly 0 moves its weight by ±lr on the sign of a rounding.
export function mlpInputs(w) {
  const [d0, d1, d2, d3] = w.sizes;
  const labels = new Float32Array(w.batch * d3);
  let state = 991;
  for (let i = 0; i < w.batch; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    labels[i * d3 + ((state >>> 8) % d3)] = 1;
  }
  return {
    x: { shape: [w.batch, d0], data: uniform(w.batch * d0, 111, 0, 1) },
    labels: { shape: [w.batch, d3], data: labels },
    w1: dense(d0, d1, 112), b1: vector(d1, 113, -0.1, 0.1),
    w2: dense(d1, d2, 114), b2: vector(d2, 115, -0.1, 0.1),
    w3: dense(d2, d3, 116), b3: vector(d3, 117, -0.1, 0.1),
  };
}

/** The forward and backward FLOPs of a step (the update's few per weight left out). */
export function mlpFlops(w) {
  const s = w.sizes;
  let weights = 0;
  for (let l = 0; l < 3; l++) weights += s[l] * s[l + 1];
  return 3 * 2 * w.batch * weights;
}

// a ([n, k]) @ b ([k, m]), float64, row-major; `ta`/`tb` read the operand transposed.
function matmul64(a, b, n, k, m, { ta = false, tb = false } = {}) {
  const out = new Float64Array(n * m);
  for (let i = 0; i < n; i++) {
    for (let p = 0; p < k; p++) {
      const v = ta ? a[p * n + i] : a[i * k + p];
      if (v === 0) continue;
      for (let j = 0; j < m; j++) out[i * m + j] += v * (tb ? b[j * k + p] : b[p * m + j]);
    }
  }
  return out;
}

/** The step in float64: {loss, w3, b1} after the update. */
export function mlpStepReference(w, inputs) {
  const [d0, d1, d2, d3] = w.sizes;
  const B = w.batch;
  const I = Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, Float64Array.from(v.data)]));
  const dense = (x, weight, bias, n, out, relu) => {
    const y = matmul64(x, weight, B, n, out);
    for (let i = 0; i < y.length; i++) {
      y[i] += bias[i % out];
      if (relu) y[i] = Math.max(y[i], 0);
    }
    return y;
  };
  const h1 = dense(I.x, I.w1, I.b1, d0, d1, true);
  const h2 = dense(h1, I.w2, I.b2, d1, d2, true);
  const z = dense(h2, I.w3, I.b3, d2, d3, false);
  let loss = 0;
  const dz = new Float64Array(B * d3);
  for (let i = 0; i < B; i++) {
    const row = z.subarray(i * d3, (i + 1) * d3);
    const max = Math.max(...row);
    let total = 0;
    for (const v of row) total += Math.exp(v - max);
    const lse = max + Math.log(total);
    for (let j = 0; j < d3; j++) {
      const y = I.labels[i * d3 + j];
      loss += (y * (lse - row[j])) / B;
      dz[i * d3 + j] = (Math.exp(row[j] - lse) - y) / B;
    }
  }
  const gw3 = matmul64(h2, dz, d2, B, d3, { ta: true });
  const gb = (d, n) => {
    const out = new Float64Array(n);
    for (let i = 0; i < d.length; i++) out[i % n] += d[i];
    return out;
  };
  const back = (d, weight, h, n, m) => {
    const dh = matmul64(d, weight, B, m, n, { tb: true });
    for (let i = 0; i < dh.length; i++) if (h[i] <= 0) dh[i] = 0;
    return dh;
  };
  const d2grad = back(dz, I.w3, h2, d2, d3);
  const d1grad = back(d2grad, I.w2, h1, d1, d2);
  // Adam's first step, bias-corrected: m̂ = g and v̂ = g², so p - lr g / (|g| + eps).
  const adam = (p, g) => Float64Array.from(p, (v, i) => v - (w.lr * g[i]) / (Math.abs(g[i]) + w.eps));
  return { loss, w3: adam(I.w3, gw3), b1: adam(I.b1, gb(d1grad, d1)) };
}

// The gradient workload ("transformer-grad"): the block's loss sum(block(x) * dy) and its
// gradient with respect to every input. Checked: the loss, and the gradients of b2 (the sum of
// dy's rows) and of b1 (dy through w2 and GELU's slope, row by row), in float64.
export function transformerGradInputs(w) {
  const inputs = transformerInputs(w);
  inputs.dy = { shape: [w.seq, w.dim], data: uniform(w.seq * w.dim, 94, -1, 1) };
  return inputs;
}

const geluSlope = (v) => 0.5 * (1 + erf(v / Math.SQRT2)) + (v * Math.exp(-0.5 * v * v)) / Math.sqrt(2 * Math.PI);

export function transformerGradReference(w, inputs) {
  const { seq: t, dim: d, hidden: f } = w;
  const rows = Array.from({ length: t }, (_, r) => r);
  const dy = inputs.dy.data;
  const w2 = inputs.w2.data;
  const b1 = new Float64Array(f);
  const b2 = new Float64Array(d);
  const hiddenSeen = (r, pre) => {
    for (let j = 0; j < f; j++) {
      let back = 0;
      for (let i = 0; i < d; i++) back += w2[j * d + i] * dy[r * d + i];
      b1[j] += back * geluSlope(pre[j]);
    }
  };
  let loss = 0;
  transformerRows(w, inputs, rows, hiddenSeen).forEach((row, r) => {
    for (let i = 0; i < d; i++) {
      loss += row[i] * dy[r * d + i];
      b2[i] += dy[r * d + i];
    }
  });
  return { loss, b1, b2 };
}

// The checkpoint workloads ("transformer-stack"): a stack of `layers` blocks (the block above,
// at the catalog's sizes), a training step's loss sum(stack(x) * dy) and every weight's
// gradient, with each block checkpointed or not; what differs is the peak memory. Checked:
// the loss, and the last block's b2 gradient (the sum of dy's rows), in float64.
export const BLOCK_WEIGHTS = ["ln1w", "ln1b", "wqkv", "bqkv", "wo", "bo", "ln2w", "ln2b", "w1", "b1", "w2", "b2"];

export function transformerStackInputs(w) {
  const inputs = { x: transformerInputs(w).x };
  for (let l = 0; l < w.layers; l++) {
    const layer = transformerInputs(w);
    for (const name of BLOCK_WEIGHTS) {
      const input = layer[name];
      // Each layer its own weights: the same generator, shifted.
      input.data = input.data.map((v, i) => v * (1 - 0.1 * l) + 0.01 * l * Math.sin(i));
      inputs[`l${l}_${name}`] = input;
    }
  }
  inputs.dy = { shape: [w.seq, w.dim], data: uniform(w.seq * w.dim, 96, -1, 1) };
  return inputs;
}

export function transformerStackReference(w, inputs) {
  const rows = Array.from({ length: w.seq }, (_, r) => r);
  let x = inputs.x.data;
  for (let l = 0; l < w.layers; l++) {
    const layer = { x: { shape: inputs.x.shape, data: x } };
    for (const name of BLOCK_WEIGHTS) layer[name] = inputs[`l${l}_${name}`];
    const out = transformerRows(w, layer, rows);
    x = new Float64Array(w.seq * w.dim);
    out.forEach((row, r) => x.set(row, r * w.dim));
  }
  const dy = inputs.dy.data;
  let loss = 0;
  const b2 = new Float64Array(w.dim);
  for (let i = 0; i < x.length; i++) {
    loss += x[i] * dy[i];
    b2[i % w.dim] += dy[i];
  }
  return { loss, b2 };
}
