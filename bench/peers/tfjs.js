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
import * as tf from "@tensorflow/tfjs-core";
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
    info: { library: await packageVersion("@tensorflow/tfjs-core"), backend: tf.getBackend(), ...extra },
    supports: (w) => supports(backend, w),
    prepare: (w, inputs) => prepare(backend, w, inputs),
  };
}

function supports(backend, w) {
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
    default:
      throw new Error(`tfjs: no implementation of ${w.op}`);
  }
}
