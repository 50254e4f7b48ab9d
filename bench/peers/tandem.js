// tandem on one stream: "tandem-gpu" runs every op with stream "gpu" (and the MLX example's
// split: matmul on "gpu", exps on "cpu"), "tandem-cpu" with stream "cpu". Inputs come from
// typed arrays through tn.array and are made resident on the stream's device before timing;
// each run builds the graph, reads the result back with toArray, and disposes every array it
// made (intermediates as soon as the next op holds them, as split.js does).
import * as tn from "/pkg/index.js";

// "tandem-gpu-compiled" and "tandem-cpu-compiled" run the multi-op workloads through
// tn.compile (traced on the first warm-up run), as jax-jit runs them through jit.
const SINGLE_OPS = new Set(["matmul", "exp", "sum", "sum-axis0", "softmax"]);

// "tandem-cpu" and "tandem-cpu-compiled" run on one thread (the single-threaded build, as
// tfjs-wasm), "tandem-cpu-2t" on two (the threaded build, as tfjs-wasm-2t); the GPU runtimes
// take the page's default (the threaded build on this cross-origin isolated page).
const THREADS = { "tandem-cpu": 1, "tandem-cpu-compiled": 1, "tandem-cpu-2t": 2 };

export async function setup(runtimeId) {
  const device = runtimeId.startsWith("tandem-cpu") ? "cpu" : "gpu";
  const compiled = runtimeId.endsWith("-compiled");
  const info = await tn.initRuntime({ threads: THREADS[runtimeId] });
  return {
    info: {
      library: "tandem (this checkout's pkg/)",
      stream: device,
      gpu: info.gpu,
      adapter: info.adapter ?? null,
      defaultDevice: info.defaultDevice ?? null,
      math: info.math ?? null,
      threads: info.threads ?? null,
    },
    supports: (w) => {
      if (compiled && SINGLE_OPS.has(w.op)) return "a single op: nothing to compile";
      if (compiled && w.op === "transformer-stack") return "measures checkpoint's peak, compiled or not";
      return supports(device, w, info.adapter?.isFallbackAdapter === true);
    },
    prepare: (w, inputs) => prepare(device, w, inputs, compiled ? tn.compile : (f) => f),
  };
}

function supports(device, w, fallback) {
  if (w.op === "transformer-stack" && device === "gpu" && fallback) {
    return "a software adapter takes minutes a run: the CPU stream measures checkpoint's peak here";
  }
  if (w.dtype && w.dtype !== "float32") return true;
  if (w.cpuForward) return "TF.js only: its default CPU forwarding of small ops";
  if (w.op !== "mlx") return true;
  if (w.placement === "split") return device === "gpu" ? true : "the split runs in the tandem-gpu column";
  return w.placement === device ? true : `${w.placement}-only runs in the tandem-${w.placement} column`;
}

// Uploads an input (in `dtype`, float32 unless given) and makes it resident on `device`: a
// reduction over it there forces the copy, which the runtime keeps for later ops.
async function resident(input, device, dtype = "float32") {
  const x = tn.array(input.data, { shape: input.shape, dtype });
  const probe = tn.sum(x, { stream: device });
  await probe.toArray();
  probe.dispose();
  return x;
}

// `count` times y = op(y), disposing each intermediate once the next op holds it.
function chain(first, count, op) {
  let y = first;
  for (let i = 0; i < count; i++) {
    const next = op(y);
    if (y !== first) y.dispose();
    y = next;
  }
  return y;
}

async function readAll(arrays) {
  const data = await Promise.all(arrays.map((a) => a.toArray()));
  for (const a of arrays) a.dispose();
  return data;
}

async function prepare(device, w, inputs, compile) {
  const stream = { stream: device };
  const owned = [];
  const load = async (name, dev = device) => {
    const x = await resident(inputs[name], dev, w.dtype);
    owned.push(x);
    return x;
  };
  const dispose = async () => {
    for (const x of owned) x.dispose();
    await tn.synchronize();
  };
  switch (w.op) {
    case "matmul": {
      const [a, b] = [await load("a"), await load("b")];
      return { run: () => readAll([tn.matmul(a, b, stream)]), dispose };
    }
    case "exp": {
      const x = await load("x");
      return { run: () => readAll([tn.exp(x, stream)]), dispose };
    }
    case "exp-chain": {
      const b = await load("b");
      const f = compile((x) => chain(x, w.count, (y) => tn.exp(y, stream)));
      return { run: () => readAll([f(b)]), dispose };
    }
    case "mlx": {
      const [matmulOn, expOn] = w.placement === "split" ? ["gpu", "cpu"] : [device, device];
      // b starts as host data and is also made resident on the matmul's device, so the
      // split's CPU exps and GPU matmul both find it where they run.
      const a = await load("a", matmulOn);
      const b = await load("b", matmulOn);
      const f = compile((a, b) => {
        const x = tn.matmul(a, b, { stream: matmulOn });
        const y = chain(b, w.count, (v) => tn.exp(v, { stream: expOn }));
        return [x, y];
      });
      return { run: () => readAll(f(a, b)), dispose };
    }
    case "sum": {
      const x = await load("x");
      return { run: () => readAll([tn.sum(x, stream)]), dispose };
    }
    case "sum-axis0": {
      const x = await load("x");
      return { run: () => readAll([tn.sum(x, { axis: 0, ...stream })]), dispose };
    }
    case "add-chain": {
      const s = await load("s");
      const f = compile((x) => chain(x, w.count, (y) => tn.add(y, x, stream)));
      return { run: () => readAll([f(s)]), dispose };
    }
    case "softmax": {
      const x = await load("x");
      return { run: () => readAll([tn.softmax(x, { axis: -1, ...stream })]), dispose };
    }
    case "transformer":
    case "cnn": {
      // Every weight resident; the model as a function of them, in their catalog order.
      const names = Object.keys(inputs);
      const args = [];
      for (const name of names) args.push(await load(name));
      const model = w.op === "transformer" ? transformerBlock : cnn;
      const f = compile((...xs) => model(w, Object.fromEntries(names.map((n, i) => [n, xs[i]])), stream));
      return measured(() => readAll([tn.tidy(() => f(...args))]), dispose);
    }
    case "transformer-grad": {
      const held = {};
      for (const name of Object.keys(inputs)) held[name] = await load(name);
      const { dy, ...params } = held;
      const lossOf = (p, dy) => tn.sum(tn.multiply(transformerBlock(w, p, stream), dy, stream), stream);
      const step = compile(tn.valueAndGrad(lossOf));
      const run = async () => {
        const [loss, grads] = step(params, dy);
        await tn.evaluate(loss, ...Object.values(grads));
        const out = await readAll([loss, grads.b2, grads.b1]);
        for (const g of Object.values(grads)) g.dispose();
        return out;
      };
      return measured(run, dispose);
    }
    case "transformer-stack": {
      const held = {};
      for (const name of Object.keys(inputs)) held[name] = await load(name);
      const layer = (x, ...weights) => {
        const p = Object.fromEntries(BLOCK_WEIGHTS.map((n, i) => [n, weights[i]]));
        return transformerBlock(w, { x, ...p }, stream);
      };
      const run_layer = w.checkpoint ? tn.checkpoint(layer) : layer;
      const lossOf = (p, x, dy) => {
        let h = x;
        for (let l = 0; l < w.layers; l++) h = run_layer(h, ...BLOCK_WEIGHTS.map((n) => p[`l${l}_${n}`]));
        return tn.sum(tn.multiply(h, dy, stream), stream);
      };
      const { x, dy, ...params } = held;
      const step = tn.valueAndGrad(lossOf);
      const last = `l${w.layers - 1}_b2`;
      const run = async () => {
        const [loss, grads] = step(params, x, dy);
        await tn.evaluate(loss, ...Object.values(grads));
        const out = await readAll([loss, grads[last]]);
        for (const g of Object.values(grads)) g.dispose();
        return out;
      };
      return measured(run, dispose);
    }
    case "mlp-train": {
      const names = Object.keys(inputs);
      const held = {};
      for (const name of names) held[name] = await load(name);
      const { x, labels, ...initial } = held;
      const step = compile(trainStep(stream));
      const run = async () => {
        // The first step from the same weights, with a fresh optimizer (its state made on
        // the first update), so that every run computes the same thing.
        const adam = new tn.optimizers.Adam({ learningRate: w.lr, eps: w.eps, biasCorrection: true });
        const [loss, grads] = step(initial, x, labels);
        const next = adam.update(initial, grads);
        await tn.evaluate(loss, ...Object.values(next));
        const out = await readAll([loss, next.w3, next.b1]);
        for (const a of [...Object.values(grads), ...Object.values(next)]) a.dispose();
        adam.reset();
        return out;
      };
      return measured(run, dispose);
    }
    default:
      throw new Error(`tandem: no implementation of ${w.op}`);
  }
}

const BLOCK_WEIGHTS = ["ln1w", "ln1b", "wqkv", "bqkv", "wo", "bo", "ln2w", "ln2b", "w1", "b1", "w2", "b2"];

// valueAndGrad of the MLP's softmax cross-entropy, over its parameters (a tree {w1, b1, …}).
function trainStep(opts) {
  const dense = (h, weight, bias) => tn.add(tn.matmul(h, weight, opts), bias, opts);
  const loss = (p, x, labels) => {
    const h1 = tn.relu(dense(x, p.w1, p.b1), opts);
    const h2 = tn.relu(dense(h1, p.w2, p.b2), opts);
    const z = dense(h2, p.w3, p.b3);
    const picked = tn.sum(tn.multiply(z, labels, opts), { axis: 1, ...opts });
    return tn.mean(tn.subtract(tn.logsumexp(z, { axis: 1, ...opts }), picked, opts), opts);
  };
  return tn.valueAndGrad(loss);
}

// A model's run, with its memory: the active bytes once the weights are resident, and the
// highest active bytes during the last run (the peak counter reset before each run).
async function measured(run, dispose) {
  await tn.synchronize();
  const resident = tn.getActiveMemory();
  const memory = { residentBytes: resident, peakBytes: null };
  return {
    run: async () => {
      tn.resetPeakMemory();
      const out = await run();
      memory.peakBytes = tn.getPeakMemory();
      return out;
    },
    dispose,
    memory: () => memory,
  };
}

// One pre-norm transformer block (models.js has the float64 reference): layer norm, fused
// QKV projection, causal attention per head, output projection, residual; layer norm, GELU
// MLP, residual.
function transformerBlock(w, p, opts) {
  const { seq: t, dim: d, heads } = w;
  const hd = d / heads;
  const linear = (x, weight, bias) => tn.add(tn.matmul(x, weight, opts), bias, opts);
  const h = tn.fast.layerNorm(p.x, p.ln1w, p.ln1b, 1e-5, opts);
  const qkv = linear(h, p.wqkv, p.bqkv);
  const [q, k, v] = tn
    .split(qkv, 3, { axis: -1, ...opts })
    .map((part) => tn.transpose(tn.reshape(part, [1, t, heads, hd], opts), [0, 2, 1, 3], opts));
  const attended = tn.fast.scaledDotProductAttention(q, k, v, { scale: 1 / Math.sqrt(hd), mask: "causal", ...opts });
  const merged = tn.reshape(tn.transpose(attended, [0, 2, 1, 3], opts), [t, d], opts);
  const y = tn.add(p.x, linear(merged, p.wo, p.bo), opts);
  const h2 = tn.fast.layerNorm(y, p.ln2w, p.ln2b, 1e-5, opts);
  const m = linear(tn.gelu(linear(h2, p.w1, p.b1), opts), p.w2, p.b2);
  return tn.add(y, m, opts);
}

// Three 3x3 convolutions (NHWC, padding 1), each with bias and ReLU.
function cnn(w, p, opts) {
  let x = p.x;
  for (let l = 0; l < 3; l++) {
    const conv = tn.conv2d(x, p[`w${l + 1}`], { stride: w.strides[l], padding: 1, ...opts });
    x = tn.relu(tn.add(conv, p[`b${l + 1}`], opts), opts);
  }
  return x;
}
