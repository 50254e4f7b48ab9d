// jax-js 0.1.25 on WebGPU: "jax-webgpu" runs the ops eagerly, "jax-jit" the same functions
// through jit (for the workloads of more than one op; a single op has nothing to fuse).
//
// jax-js moves ownership on use: passing an array to an op consumes one reference, `.ref`
// adds one, and `data()` reads the array back and disposes it. The inputs are held by this
// module (one reference each, dropped in dispose) and every use inside a run takes `.ref`.
import { defaultDevice, init, jit, lax, nn, numpy as np, tree, valueAndGrad } from "@jax-js/jax";
import { packageVersion } from "./workloads.js";

const SINGLE_OPS = new Set(["matmul", "exp", "sum", "sum-axis0"]);

export async function setup(runtimeId) {
  const devices = await init("webgpu");
  if (!devices.includes("webgpu")) throw new Error(`jax-js found no WebGPU device (has ${devices.join(", ")})`);
  defaultDevice("webgpu");
  const jitted = runtimeId === "jax-jit";
  return {
    info: { library: await packageVersion("@jax-js/jax"), device: defaultDevice(), jit: jitted },
    supports: (w) => supports(jitted, w),
    prepare: (w, inputs) => prepare(jitted, w, inputs),
  };
}

function supports(jitted, w) {
  if (w.dtype) return "tandem only: the float16 block measures tandem's own memory against its float32 block";
  if (w.op === "transformer-stack") return "tandem only: the peak memory of tn.checkpoint against none";
  if (w.cpuForward) return "TF.js only: its default CPU forwarding of small ops";
  if (w.op === "mlx" && w.placement !== "gpu") {
    return w.placement === "split" ? "one device: no split" : "runs on webgpu";
  }
  if (jitted && SINGLE_OPS.has(w.op)) return "a single op: nothing for jit to fuse (see jax-webgpu)";
  return true;
}

async function resident(input) {
  const x = np.array(input.data, { shape: input.shape, dtype: np.float32, device: "webgpu" });
  await x.blockUntilReady();
  return x;
}

// Reads every result back; data() disposes each.
function readAll(arrays) {
  return Promise.all(arrays.map((a) => a.data()));
}

// The functions of the workloads. Each consumes its arguments, as jax-js functions must.
function expChain(count) {
  return (b) => {
    let y = b;
    for (let i = 0; i < count; i++) y = np.exp(y);
    return y;
  };
}

function addChain(count) {
  return (s) => {
    let y = s.ref;
    for (let i = 0; i < count - 1; i++) y = np.add(y, s.ref);
    return np.add(y, s);
  };
}

function mlx(count) {
  const exps = expChain(count);
  return (a, b) => [np.matmul(a, b.ref), exps(b)];
}

const softmax = (x) => nn.softmax(x, -1);

async function prepare(jitted, w, inputs) {
  const owned = [];
  const load = async (name) => {
    const x = await resident(inputs[name]);
    owned.push(x);
    return x;
  };
  // A multi-op function, jitted for jax-jit (compiled on the first warm-up run).
  const compiled = [];
  const maybeJit = (f) => {
    if (!jitted) return f;
    const g = jit(f);
    compiled.push(g);
    return g;
  };
  const dispose = async () => {
    for (const x of owned) x.dispose();
    for (const g of compiled) g.dispose();
  };
  const impl = (run) => ({ run, dispose });
  switch (w.op) {
    case "matmul": {
      const [a, b] = [await load("a"), await load("b")];
      return impl(() => readAll([np.matmul(a.ref, b.ref)]));
    }
    case "exp": {
      const x = await load("x");
      return impl(() => readAll([np.exp(x.ref)]));
    }
    case "exp-chain": {
      const b = await load("b");
      const f = maybeJit(expChain(w.count));
      return impl(() => readAll([f(b.ref)]));
    }
    case "mlx": {
      const [a, b] = [await load("a"), await load("b")];
      const f = maybeJit(mlx(w.count));
      return impl(() => readAll(f(a.ref, b.ref)));
    }
    case "sum": {
      const x = await load("x");
      return impl(() => readAll([np.sum(x.ref)]));
    }
    case "sum-axis0": {
      const x = await load("x");
      return impl(() => readAll([np.sum(x.ref, 0)]));
    }
    case "add-chain": {
      const s = await load("s");
      const f = maybeJit(addChain(w.count));
      return impl(() => readAll([f(s.ref)]));
    }
    case "softmax": {
      const x = await load("x");
      const f = maybeJit(softmax);
      return impl(() => readAll([f(x.ref)]));
    }
    case "transformer":
    case "cnn": {
      const names = Object.keys(inputs);
      const held = [];
      for (const name of names) held.push(await load(name));
      if (w.op === "cnn") {
        // jax-js convolves NCHW by OIHW: the input and weights transposed while preparing.
        for (const [i, name] of names.entries()) {
          const perm = name === "x" || name.startsWith("w") ? [0, 3, 1, 2] : null;
          if (perm) {
            held[i] = np.transpose(held[i], perm);
            await held[i].blockUntilReady();
            owned[i] = held[i];
          }
        }
      }
      const model = w.op === "transformer" ? transformerBlock(w) : cnn(w);
      const f = maybeJit((...xs) => model(Object.fromEntries(names.map((n, i) => [n, xs[i]]))));
      return impl(() => readAll([f(...held.map((x) => x.ref))]));
    }
    case "transformer-grad": {
      const p = {};
      for (const name of Object.keys(inputs)) p[name] = await load(name);
      const { dy, ...params } = p;
      const block = transformerBlock(w);
      const f = maybeJit(valueAndGrad((q, dy) => np.sum(np.multiply(block(q), dy))));
      const run = async () => {
        const [loss, grads] = f(tree.ref(params), dy.ref);
        const all = Object.values(grads);
        await Promise.all(all.map((a) => a.ref.blockUntilReady()));
        const out = await readAll([loss, grads.b2.ref, grads.b1.ref]);
        for (const a of all) a.dispose();
        return out;
      };
      return impl(run);
    }
    case "mlp-train": {
      const p = {};
      for (const name of MLP_PARAMS) p[name] = await load(name);
      const [x, labels] = [await load("x"), await load("labels")];
      const f = maybeJit(mlpStep(w));
      // The first step of a fresh Adam: its moments are zeros, made each run as an optimizer
      // makes its state.
      const run = async () => {
        const zeros = () => Object.fromEntries(MLP_PARAMS.map((k) => [k, np.zeros(p[k].shape)]));
        const [loss, next, m, v] = f(tree.ref(p), zeros(), zeros(), x.ref, labels.ref);
        const all = [...Object.values(next), ...Object.values(m), ...Object.values(v)];
        await Promise.all(all.map((a) => a.ref.blockUntilReady()));
        const out = await readAll([loss, next.w3.ref, next.b1.ref]);
        for (const a of all) a.dispose();
        return out;
      };
      return impl(run);
    }
    default:
      throw new Error(`jax: no implementation of ${w.op}`);
  }
}

const MLP_PARAMS = ["w1", "b1", "w2", "b2", "w3", "b3"];

// One training step of the MLP of models.js: valueAndGrad of its softmax cross-entropy, then
// Adam's bias-corrected update at step 1 (jax-js has no optimizers; this is optax's rule).
function mlpStep(w) {
  const loss = (p, x, labels) => {
    const dense = (h, weight, bias) => np.add(np.matmul(h, weight), bias);
    const h1 = nn.relu(dense(x, p.w1, p.b1));
    const h2 = nn.relu(dense(h1, p.w2, p.b2));
    const z = dense(h2, p.w3, p.b3);
    const picked = np.sum(np.multiply(z.ref, labels), 1);
    return np.mean(np.subtract(nn.logsumexp(z, 1), picked));
  };
  const valueAndGradient = valueAndGrad(loss);
  const [b1, b2] = [0.9, 0.999];
  return (p, m, v, x, labels) => {
    const [value, g] = valueAndGradient(tree.ref(p), x, labels);
    const next = {};
    const moments = {};
    const seconds = {};
    for (const k of MLP_PARAMS) {
      const gk = g[k];
      const mk = np.add(np.multiply(m[k], b1), np.multiply(gk.ref, 1 - b1));
      const vk = np.add(np.multiply(v[k], b2), np.multiply(np.square(gk), 1 - b2));
      const scaled = np.multiply(np.sqrt(vk.ref), 1 / Math.sqrt(1 - b2));
      const step = np.divide(np.multiply(mk.ref, w.lr / (1 - b1)), np.add(scaled, w.eps));
      next[k] = np.subtract(p[k], step);
      moments[k] = mk;
      seconds[k] = vk;
    }
    return [value, next, moments, seconds];
  };
}

// The block of models.js. Each argument is consumed once; one used twice takes `.ref` first.
function transformerBlock(w) {
  const { seq: t, dim: d, heads } = w;
  const hd = d / heads;
  const linear = (x, weight, bias) => np.add(np.matmul(x, weight), bias);
  const layerNorm = (x, weight, bias) => np.add(np.multiply(nn.standardize(x, -1, { epsilon: 1e-5 }), weight), bias);
  return (p) => {
    const qkv = linear(layerNorm(p.x.ref, p.ln1w, p.ln1b), p.wqkv, p.bqkv);
    const part = (i) => np.reshape(qkv.ref.slice([], [i * d, (i + 1) * d]), [t, heads, hd]);
    const [q, k, v] = [part(0), part(1), part(2)];
    qkv.dispose();
    const attended = nn.dotProductAttention(q, k, v, { scale: 1 / Math.sqrt(hd), isCausal: true });
    const y = np.add(p.x, linear(np.reshape(attended, [t, d]), p.wo, p.bo));
    const hidden = linear(layerNorm(y.ref, p.ln2w, p.ln2b), p.w1, p.b1);
    return np.add(y, linear(nn.gelu(hidden, { approximate: false }), p.w2, p.b2));
  };
}

// NCHW convolutions, the result back in NHWC for the check.
function cnn(w) {
  return (p) => {
    let x = p.x;
    for (let l = 0; l < 3; l++) {
      const conv = lax.conv(x, p[`w${l + 1}`], [w.strides[l], w.strides[l]], [[1, 1], [1, 1]]);
      x = nn.relu(np.add(conv, np.reshape(p[`b${l + 1}`], [-1, 1, 1])));
    }
    return np.transpose(x, [0, 2, 3, 1]);
  };
}
