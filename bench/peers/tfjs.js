// TF.js 4.22: "tfjs-webgpu" (the webgpu backend), "tfjs-wasm" (the wasm backend, its
// single-threaded SIMD build, so 1 thread) and "tfjs-wasm-2t" (its threaded SIMD build on 2
// threads, this machine's cores; the page is cross-origin isolated, which threads need). Inputs are tf.tensor from the typed arrays, made
// resident by one op over them before timing; each run builds the ops (chains inside tf.tidy,
// which disposes the intermediates), awaits data() of every result and disposes them.
//
// TF.js's webgpu backend runs an op whose inputs are all under 1000 elements on the CPU
// (WEBGPU_CPU_FORWARD, default true). The 1000 chained adds on 64 elements are therefore
// reported twice: "add-chain" with the flag false (every op on the GPU, the figure tandem is
// measured against) and "add-chain-fwd" at the default.
// The `@tensorflow/tfjs` bundle, as its users import it: tfjs-core with every kernel's
// gradient registered (tf.train's optimizers need them; tfjs-core's own bundle leaves them
// out). peers.html maps "@tensorflow/tfjs-core", which the backends import, to the same bundle.
import * as tf from "@tensorflow/tfjs";
import { packageVersion } from "./workloads.js";

const WASM_DIST = "/node_modules/@tensorflow/tfjs-backend-wasm/dist/";

export async function setup(runtimeId) {
  const backend = runtimeId.startsWith("tfjs-wasm") ? "wasm" : "webgpu";
  let extra = {};
  if (backend === "wasm") {
    const threads = runtimeId === "tfjs-wasm-2t" ? 2 : 1;
    const wasm = await import("@tensorflow/tfjs-backend-wasm");
    wasm.setWasmPaths(WASM_DIST);
    if (threads > 1) {
      if (!globalThis.crossOriginIsolated) throw new Error("tfjs-wasm-2t needs a cross-origin isolated page");
      // TF.js caps its pool at half the logical cores (for hyper-threads), so on this
      // 2-core machine it would run 1 thread: it is told 2 * threads, and gets the 2 threads
      // the machine has (checked below).
      const cores = navigator.hardwareConcurrency;
      Object.defineProperty(Navigator.prototype, "hardwareConcurrency", { get: () => Math.max(cores, 2 * threads) });
      wasm.setThreadsCount(threads);
    } else {
      tf.env().set("WASM_HAS_MULTITHREAD_SUPPORT", false);
    }
    if (!(await tf.setBackend("wasm"))) throw new Error("tf.setBackend('wasm') failed");
    await tf.ready();
    if (wasm.getThreadsCount() !== threads) {
      throw new Error(`tfjs-wasm runs ${wasm.getThreadsCount()} threads, not ${threads}`);
    }
    extra = {
      threads: wasm.getThreadsCount(),
      simd: await tf.env().getAsync("WASM_HAS_SIMD_SUPPORT"),
      multithreadBuild: await tf.env().getAsync("WASM_HAS_MULTITHREAD_SUPPORT"),
      package: await packageVersion("@tensorflow/tfjs-backend-wasm"),
    };
  } else {
    await import("@tensorflow/tfjs-backend-webgpu");
    if (!(await tf.setBackend("webgpu"))) throw new Error("tf.setBackend('webgpu') failed");
    await tf.ready();
    const a = tf.backend().adapterInfo ?? {};
    extra = {
      package: await packageVersion("@tensorflow/tfjs-backend-webgpu"),
      adapter: { vendor: a.vendor, architecture: a.architecture },
      cpuForwardDefault: tf.env().getBool("WEBGPU_CPU_FORWARD"),
      cpuHandoffThreshold: tf.env().getNumber("WEBGPU_CPU_HANDOFF_SIZE_THRESHOLD"),
    };
  }
  return {
    info: { library: await packageVersion("@tensorflow/tfjs"), backend: tf.getBackend(), ...extra },
    supports: (w) => supports(backend, w),
    prepare: (w, inputs) => prepare(backend, w, inputs),
  };
}

function supports(backend, w) {
  if (w.dtype) return "tandem only: the float16 block measures tandem's own memory against its float32 block";
  if (w.op === "transformer-stack") return "tandem only: the peak memory of tn.checkpoint against none";
  if (w.cpuForward && backend !== "webgpu") return "the webgpu backend's CPU forwarding only";
  if (w.op !== "mlx") return true;
  if (w.placement === "split") return "one device: no split";
  const device = backend === "webgpu" ? "gpu" : "cpu";
  return w.placement === device ? true : `TF.js ${backend} runs on the ${device}`;
}

async function resident(input) {
  const x = tf.tensor(input.data, input.shape, "float32");
  const probe = tf.sum(x);
  await probe.data();
  probe.dispose();
  return x;
}

async function readAll(tensors) {
  const data = await Promise.all(tensors.map((t) => t.data()));
  for (const t of tensors) t.dispose();
  return data;
}

function chain(first, count, op) {
  return tf.tidy(() => {
    let y = first;
    for (let i = 0; i < count; i++) y = op(y);
    return y;
  });
}

async function prepare(backend, w, inputs) {
  const owned = [];
  // With CPU forwarding (add-chain-fwd), the small input stays where TF.js keeps a new tensor,
  // on the CPU: an input already on the GPU would send every op there.
  const load = async (name) => {
    const x = w.cpuForward ? tf.tensor(inputs[name].data, inputs[name].shape, "float32") : await resident(inputs[name]);
    owned.push(x);
    return x;
  };
  let restore = () => {};
  if (backend === "webgpu" && w.op === "add-chain") {
    const previous = tf.env().getBool("WEBGPU_CPU_FORWARD");
    tf.env().set("WEBGPU_CPU_FORWARD", w.cpuForward === true);
    restore = () => tf.env().set("WEBGPU_CPU_FORWARD", previous);
  }
  const dispose = async () => {
    for (const x of owned) x.dispose();
    restore();
  };
  const impl = (run) => ({ run, dispose });
  switch (w.op) {
    case "matmul": {
      const [a, b] = [await load("a"), await load("b")];
      return impl(() => readAll([tf.matMul(a, b)]));
    }
    case "exp": {
      const x = await load("x");
      return impl(() => readAll([tf.exp(x)]));
    }
    case "exp-chain": {
      const b = await load("b");
      return impl(() => readAll([chain(b, w.count, (y) => tf.exp(y))]));
    }
    case "mlx": {
      const [a, b] = [await load("a"), await load("b")];
      return impl(() => readAll([tf.matMul(a, b), chain(b, w.count, (y) => tf.exp(y))]));
    }
    case "sum": {
      const x = await load("x");
      return impl(() => readAll([tf.sum(x)]));
    }
    case "sum-axis0": {
      const x = await load("x");
      return impl(() => readAll([tf.sum(x, 0)]));
    }
    case "add-chain": {
      const s = await load("s");
      return impl(() => readAll([chain(s, w.count, (y) => tf.add(y, s))]));
    }
    case "softmax": {
      const x = await load("x");
      return impl(() => readAll([tf.softmax(x, -1)]));
    }
    case "transformer": {
      const p = {};
      for (const name of Object.keys(inputs)) p[name] = await load(name);
      // The causal mask as an additive input, made before timing.
      const t = w.seq;
      const mask = tf.tensor(Float32Array.from({ length: t * t }, (_, i) => (i % t > Math.floor(i / t) ? -Infinity : 0)), [t, t]);
      owned.push(mask);
      return impl(() => readAll([tf.tidy(() => transformerBlock(w, p, mask))]));
    }
    case "cnn": {
      const p = { x: await load("x") };
      // TF.js takes filters as [kh, kw, in, out]: transposed while preparing.
      for (let l = 1; l <= 3; l++) {
        const weight = await load(`w${l}`);
        p[`w${l}`] = tf.transpose(weight, [1, 2, 3, 0]);
        owned.push(p[`w${l}`]);
        p[`b${l}`] = await load(`b${l}`);
      }
      return impl(() => readAll([tf.tidy(() => cnn(w, p))]));
    }
    case "transformer-grad": {
      const p = {};
      for (const name of Object.keys(inputs)) p[name] = await load(name);
      const t = w.seq;
      const mask = tf.tensor(Float32Array.from({ length: t * t }, (_, i) => (i % t > Math.floor(i / t) ? -Infinity : 0)), [t, t]);
      owned.push(mask);
      const names = Object.keys(inputs).filter((n) => n !== "dy");
      const lossOf = (...xs) => {
        const q = Object.fromEntries(names.map((n, i) => [n, xs[i]]));
        return tf.sum(tf.mul(transformerBlock(w, q, mask), p.dy));
      };
      const both = tf.valueAndGrads(lossOf);
      const [b2, b1] = [names.indexOf("b2"), names.indexOf("b1")];
      const run = async () => {
        const { value, grads } = tf.tidy(() => both(names.map((n) => p[n])));
        const out = await Promise.all([value.data(), grads[b2].data(), grads[b1].data()]);
        tf.dispose([value, ...grads]);
        return out;
      };
      return impl(run);
    }
    case "mlp-train": {
      const t = {};
      for (const name of Object.keys(inputs)) t[name] = await load(name);
      // The weights as variables, set back to the initial weights before each run (a copy on
      // the device), so that every run is the same first step of a fresh tf.train.adam.
      const vars = {};
      for (const name of PARAMS) {
        vars[name] = tf.variable(t[name].clone(), true, `mlp_${name}`);
        owned.push(vars[name]);
      }
      const varList = PARAMS.map((name) => vars[name]);
      const run = async () => {
        for (const name of PARAMS) vars[name].assign(t[name]);
        const adam = tf.train.adam(w.lr, 0.9, 0.999, w.eps);
        const loss = adam.minimize(() => mlpLoss(vars, t.x, t.labels), true, varList);
        const out = await Promise.all([loss.data(), vars.w3.data(), vars.b1.data()]);
        loss.dispose();
        adam.dispose();
        return out;
      };
      return impl(run);
    }
    default:
      throw new Error(`tfjs: no implementation of ${w.op}`);
  }
}

const PARAMS = ["w1", "b1", "w2", "b2", "w3", "b3"];

// The MLP's mean softmax cross-entropy, as tandem and jax-js write it.
function mlpLoss(p, x, labels) {
  const dense = (h, weight, bias) => tf.add(tf.matMul(h, weight), bias);
  const h1 = tf.relu(dense(x, p.w1, p.b1));
  const h2 = tf.relu(dense(h1, p.w2, p.b2));
  const z = dense(h2, p.w3, p.b3);
  const picked = tf.sum(tf.mul(z, labels), 1);
  return tf.mean(tf.sub(tf.logSumExp(z, 1), picked));
}

function layerNorm(x, weight, bias) {
  const { mean, variance } = tf.moments(x, -1, true);
  return tf.add(tf.mul(tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, 1e-5))), weight), bias);
}

// The block of models.js: GELU in its erf form, as MLX's and tandem's.
function transformerBlock(w, p, mask) {
  const { seq: t, dim: d, heads } = w;
  const hd = d / heads;
  const linear = (x, weight, bias) => tf.add(tf.matMul(x, weight), bias);
  const qkv = linear(layerNorm(p.x, p.ln1w, p.ln1b), p.wqkv, p.bqkv);
  const [q, k, v] = tf.split(qkv, 3, -1).map((part) => tf.transpose(tf.reshape(part, [t, heads, hd]), [1, 0, 2]));
  const scores = tf.add(tf.mul(tf.matMul(q, k, false, true), 1 / Math.sqrt(hd)), mask);
  const attended = tf.matMul(tf.softmax(scores, -1), v);
  const merged = tf.reshape(tf.transpose(attended, [1, 0, 2]), [t, d]);
  const y = tf.add(p.x, linear(merged, p.wo, p.bo));
  const hidden = linear(layerNorm(y, p.ln2w, p.ln2b), p.w1, p.b1);
  const gelu = tf.mul(tf.mul(hidden, 0.5), tf.add(1, tf.erf(tf.mul(hidden, Math.SQRT1_2))));
  return tf.add(y, linear(gelu, p.w2, p.b2));
}

function cnn(w, p) {
  let x = p.x;
  for (let l = 0; l < 3; l++) {
    const pad = [[0, 0], [1, 1], [1, 1], [0, 0]];
    x = tf.relu(tf.add(tf.conv2d(x, p[`w${l + 1}`], w.strides[l], pad), p[`b${l + 1}`]));
  }
  return x;
}
