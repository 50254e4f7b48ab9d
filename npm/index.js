// The entry point of the `tandem` package: the API of the wasm-bindgen glue, with
// `initRuntime()` loading the WebAssembly module first, so that a page needs nothing but
// `await initRuntime()`. Until the module is loaded, every function throws an Error that says
// so (instead of failing inside the glue); once it is, each export is the glue's own function,
// so a call costs nothing more.
//
// The package has two builds of the module: `tandem.js` (single-threaded) and
// `tandem_threaded.js` (wasm threads on shared memory: the CPU stream's kernels split over a
// pool of Web Workers). Shared memory exists only on a cross-origin isolated page, so the
// threaded build is loaded there and the single-threaded one everywhere else;
// `RuntimeInfo.threads` says which runs and why. Each build has two modules under one glue:
// `*_relaxed_bg.wasm` also uses relaxed SIMD (a fused multiply-add in the CPU stream's
// product tiles), which an engine without it refuses to compile, so it is loaded only where
// a probe module that uses it validates.
import loadSingle, * as single from "./tandem.js";
import loadThreaded, * as threaded from "./tandem_threaded.js";

let loading = null;
let glue = single;

/** Whether this page (or worker) can run the threaded build. */
function isolated() {
  return globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === "function";
}

// A module of one function (v128, v128, v128) -> v128 that returns f32x4.relaxed_madd of its
// arguments.
const RELAXED_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x01, 0x60, 0x03, 0x7b, 0x7b,
  0x7b, 0x01, 0x7b, 0x03, 0x02, 0x01, 0x00, 0x0a, 0x0d, 0x01, 0x0b, 0x00, 0x20, 0x00, 0x20,
  0x01, 0x20, 0x02, 0xfd, 0x85, 0x02, 0x0b,
]);

/** Whether the engine compiles relaxed SIMD. */
function relaxedSimd() {
  try {
    return WebAssembly.validate(RELAXED_PROBE);
  } catch {
    return false;
  }
}

/** The module beside this file that the chosen build loads: its relaxed-SIMD variant where the
 * engine has relaxed SIMD. Each URL is written out whole, so that bundlers (Vite, webpack)
 * see both and emit them as assets. */
function defaultModule(useThreads) {
  if (!relaxedSimd()) return undefined; // the glue's own default, the plain module
  return useThreads
    ? new URL("./tandem_threaded_relaxed_bg.wasm", import.meta.url)
    : new URL("./tandem_relaxed_bg.wasm", import.meta.url);
}

/** The glue's options for `module`: none (its own default) when it is undefined. */
function moduleOption(module) {
  return module === undefined ? undefined : { module_or_path: module };
}

/**
 * Loads the WebAssembly module, once. `initRuntime()` calls it; call it yourself only to load
 * the module from somewhere else than beside this file (a CDN, a `Response`, bytes, a compiled
 * `WebAssembly.Module`): `source` is a module of the build that loads, which is the threaded
 * build (`tandem_threaded_bg.wasm`, or `tandem_threaded_relaxed_bg.wasm` where the engine has
 * relaxed SIMD) on a cross-origin isolated page and the single-threaded one
 * (`tandem_bg.wasm`, `tandem_relaxed_bg.wasm`) elsewhere, or the one `{ threaded }` names.
 */
export function loadWasm(source, opts) {
  const useThreads = opts?.threaded ?? isolated();
  if (useThreads && !isolated()) {
    const error = new Error(
      "tandem.loadWasm: the threaded build needs a cross-origin isolated page (served with " +
        "Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp)",
    );
    error.name = "DeviceError";
    return Promise.reject(error);
  }
  const [load, chosen] = useThreads ? [loadThreaded, threaded] : [loadSingle, single];
  // Only the first call loads, so only it probes (`??=` leaves the rest unevaluated).
  loading ??= load(moduleOption(source ?? defaultModule(useThreads))).then(
    () => bind(chosen),
    (err) => {
      // A failed load may be tried again, with another source.
      loading = null;
      throw explained(err);
    },
  );
  return loading;
}

/** A load that fetched a page instead of the wasm says where to look. */
function explained(err) {
  if (!(err instanceof WebAssembly.CompileError) || !/magic word/.test(err.message)) return err;
  const error = new Error(
    "tandem: the server answered the request for the WebAssembly module (tandem_bg.wasm, " +
      "tandem_threaded_bg.wasm on a cross-origin isolated page, or their _relaxed_bg.wasm " +
      "variants) with something else (a page?). " +
      'Under Vite\'s dev server, add optimizeDeps: { exclude: ["tandem"] } to vite.config; ' +
      `elsewhere, pass the wasm's URL to loadWasm(). (${err.message})`,
  );
  error.name = "DeviceError";
  return error;
}

export default loadWasm;

/**
 * Loads the WebAssembly module if it is not yet (the single-threaded build when `threads` is
 * 1), then asks WebGPU for a device.
 */
export async function initRuntime(opts) {
  await loadWasm(undefined, opts?.threads === 1 ? { threaded: false } : undefined);
  return glue.initRuntime(opts);
}

/** A stand-in for the glue's `name` until the module is loaded. */
function early(name) {
  return function () {
    const error = new Error(
      `tandem.${name}: the WebAssembly module is not loaded yet; await initRuntime() (or loadWasm()) first`,
    );
    error.name = "DeviceError";
    throw error;
  };
}

// The classes of the build that loads (the single-threaded build's until then, for
// `instanceof` checks before loading).
export let { Block, NDArray, Stream } = single;

/**
 * The kinds of error tandem throws, as classes for `instanceof`. tandem's errors are plain
 * `Error`s whose `name` says the kind, so `err instanceof MemoryLimitError` tests that name.
 */
function errorKind(name) {
  const Kind = class extends Error {
    constructor(message) {
      super(message);
      this.name = name;
    }

    static [Symbol.hasInstance](value) {
      return value instanceof Error && value.name === name;
    }
  };
  Object.defineProperty(Kind, "name", { value: name });
  return Kind;
}

export const ShapeError = errorKind("ShapeError"),
  DTypeError = errorKind("DTypeError"),
  MemoryLimitError = errorKind("MemoryLimitError"),
  DisposedArrayError = errorKind("DisposedArrayError"),
  DeviceError = errorKind("DeviceError"),
  ValueError = errorKind("ValueError");

export let
  abs = early("abs"), add = early("add"), arange = early("arange"), argmax = early("argmax"),
  argmin = early("argmin"), array = early("array"), astype = early("astype"),
  broadcastTo = early("broadcastTo"), cachingAllocatorAlloc = early("cachingAllocatorAlloc"),
  cachingAllocatorDelete = early("cachingAllocatorDelete"), ceil = early("ceil"),
  changeCurrentAllocator = early("changeCurrentAllocator"), clearCache = early("clearCache"),
  clip = early("clip"), compile = early("compile"), concatenate = early("concatenate"),
  cos = early("cos"),
  defaultDevice = early("defaultDevice"), defaultStream = early("defaultStream"),
  dispatchesPerSubmit = early("dispatchesPerSubmit"), divide = early("divide"),
  emptyCache = early("emptyCache"), equal = early("equal"), erf = early("erf"),
  evaluate = early("evaluate"), exp = early("exp"), expandDims = early("expandDims"),
  expm1 = early("expm1"), eye = early("eye"), flatten = early("flatten"),
  floor = early("floor"), full = early("full"), gelu = early("gelu"),
  getActiveMemory = early("getActiveMemory"), getCacheMemory = early("getCacheMemory"),
  getDeviceProperties = early("getDeviceProperties"), getMemoryInfo = early("getMemoryInfo"),
  getMemoryLimit = early("getMemoryLimit"), getPeakMemory = early("getPeakMemory"),
  gpuDevice = early("gpuDevice"), greater = early("greater"),
  greaterEqual = early("greaterEqual"), less = early("less"), lessEqual = early("lessEqual"),
  linspace = early("linspace"), log = early("log"), log1p = early("log1p"),
  logicalAnd = early("logicalAnd"), logicalNot = early("logicalNot"),
  logicalOr = early("logicalOr"), logsumexp = early("logsumexp"), matmul = early("matmul"),
  max = early("max"), maxMemoryAllocated = early("maxMemoryAllocated"),
  maxMemoryCached = early("maxMemoryCached"), maxMemoryReserved = early("maxMemoryReserved"),
  maximum = early("maximum"), mean = early("mean"), memoryAllocated = early("memoryAllocated"),
  memoryCached = early("memoryCached"), memoryHistory = early("memoryHistory"),
  memoryReserved = early("memoryReserved"), memorySnapshot = early("memorySnapshot"),
  memoryStats = early("memoryStats"),
  memoryStatsAsNestedDict = early("memoryStatsAsNestedDict"),
  memorySummary = early("memorySummary"), min = early("min"), minimum = early("minimum"),
  multiply = early("multiply"), neg = early("neg"), newStream = early("newStream"),
  notEqual = early("notEqual"), ones = early("ones"), power = early("power"),
  prod = early("prod"), profile = early("profile"), randomNormal = early("randomNormal"),
  randomSeed = early("randomSeed"), randomUniform = early("randomUniform"),
  reciprocal = early("reciprocal"), recordMemoryHistory = early("recordMemoryHistory"),
  relu = early("relu"), resetAccumulatedMemoryStats = early("resetAccumulatedMemoryStats"),
  resetMaxMemoryAllocated = early("resetMaxMemoryAllocated"),
  resetMaxMemoryCached = early("resetMaxMemoryCached"),
  resetPeakMemory = early("resetPeakMemory"),
  resetPeakMemoryStats = early("resetPeakMemoryStats"), reshape = early("reshape"),
  round = early("round"), rsqrt = early("rsqrt"), setCacheLimit = early("setCacheLimit"),
  setDefaultDevice = early("setDefaultDevice"),
  setDispatchesPerSubmit = early("setDispatchesPerSubmit"),
  setMemoryLimit = early("setMemoryLimit"),
  setPerProcessMemoryFraction = early("setPerProcessMemoryFraction"),
  setWiredLimit = early("setWiredLimit"), sigmoid = early("sigmoid"), sign = early("sign"),
  sin = early("sin"), slice = early("slice"), smi = early("smi"), softmax = early("softmax"),
  split = early("split"), sqrt = early("sqrt"), square = early("square"),
  squeeze = early("squeeze"), stack = early("stack"), subtract = early("subtract"),
  sum = early("sum"), synchronize = early("synchronize"), tan = early("tan"),
  tanh = early("tanh"), tidy = early("tidy"), transpose = early("transpose"),
  where = early("where"), zeros = early("zeros"),
  // The model ops.
  isnan = early("isnan"), isinf = early("isinf"), isfinite = early("isfinite"),
  log2 = early("log2"), log10 = early("log10"), sinh = early("sinh"), cosh = early("cosh"),
  arcsin = early("arcsin"), arccos = early("arccos"), arctan = early("arctan"),
  arcsinh = early("arcsinh"), arccosh = early("arccosh"), arctanh = early("arctanh"),
  erfinv = early("erfinv"), nanToNum = early("nanToNum"), logaddexp = early("logaddexp"),
  floorDivide = early("floorDivide"), remainder = early("remainder"), arctan2 = early("arctan2"),
  std = early("std"), any = early("any"), all = early("all"), tril = early("tril"),
  triu = early("triu"), outer = early("outer"), addmm = early("addmm"), take = early("take"),
  takeAlongAxis = early("takeAlongAxis"), putAlongAxis = early("putAlongAxis"),
  sliceUpdate = early("sliceUpdate"), cumsum = early("cumsum"), cumprod = early("cumprod"),
  cummax = early("cummax"), cummin = early("cummin"), logcumsumexp = early("logcumsumexp"),
  stopGradient = early("stopGradient"), sort = early("sort"), argsort = early("argsort"), topk = early("topk"), conv1d = early("conv1d"),
  conv2d = early("conv2d"), convTranspose1d = early("convTranspose1d"),
  convTranspose2d = early("convTranspose2d"), pad = early("pad"), tile = early("tile"), repeat = early("repeat"),
  roll = early("roll"), diag = early("diag"), diagonal = early("diagonal"),
  tensordot = early("tensordot"),
  // Weights files.
  load = early("load"), save = early("save"), saveSafetensors = early("saveSafetensors");

/** `einsum(subscripts, ...operands, opts?)`: the glue takes the operands (and options) as a list. */
export function einsum(subscripts, ...operands) {
  if (glueEinsum === null) early("einsum")();
  return glueEinsum(subscripts, operands);
}
let glueEinsum = null;

// `tn.fast.*`: the glue's `fastLayerNorm` and friends, gathered as MLX gathers `mx.fast`.
let fastLayerNorm = early("fast.layerNorm"), fastRmsNorm = early("fast.rmsNorm"),
  fastRope = early("fast.rope"),
  fastScaledDotProductAttention = early("fast.scaledDotProductAttention");
export const fast = Object.freeze({
  layerNorm: (...args) => fastLayerNorm(...args),
  rmsNorm: (...args) => fastRmsNorm(...args),
  rope: (...args) => fastRope(...args),
  scaledDotProductAttention: (...args) => fastScaledDotProductAttention(...args),
});

// `var` is a reserved word: the glue calls it `variance`, and the package exports it as `var`
// (`import { var as variance } from "tandem"`, or `tn.var`).
let variance = early("var");
export { variance as var };

/** Points every export at the loaded glue's function. */
function bind(chosen) {
  glue = chosen;
  ({ Block, NDArray, Stream } = glue);
  ({
    abs, add, arange, argmax, argmin, array, astype, broadcastTo, cachingAllocatorAlloc,
    cachingAllocatorDelete, ceil, changeCurrentAllocator, clearCache, clip, concatenate, cos,
    defaultDevice, defaultStream, dispatchesPerSubmit, divide, emptyCache, equal, erf, evaluate,
    exp, expandDims, expm1, eye, flatten, floor, full, gelu, getActiveMemory, getCacheMemory,
    getDeviceProperties, getMemoryInfo, getMemoryLimit, getPeakMemory, gpuDevice, greater,
    greaterEqual, less, lessEqual, linspace, log, log1p, logicalAnd, logicalNot, logicalOr,
    logsumexp, matmul, max, maxMemoryAllocated, maxMemoryCached, maxMemoryReserved, maximum,
    mean, memoryAllocated, memoryCached, memoryHistory, memoryReserved, memorySnapshot,
    memoryStats, memoryStatsAsNestedDict, memorySummary, min, minimum, multiply, neg, newStream,
    notEqual, ones, power, prod, profile, randomNormal, randomSeed, randomUniform, reciprocal,
    recordMemoryHistory, relu, resetAccumulatedMemoryStats, resetMaxMemoryAllocated,
    resetMaxMemoryCached, resetPeakMemory, resetPeakMemoryStats, reshape, round, rsqrt,
    setCacheLimit, setDefaultDevice, setDispatchesPerSubmit, setMemoryLimit,
    setPerProcessMemoryFraction, setWiredLimit, sigmoid, sign, sin, slice, smi, softmax, split,
    sqrt, square, squeeze, stack, subtract, sum, synchronize, tan, tanh, tidy, transpose, where,
    zeros, isnan, isinf, isfinite, log2, log10, sinh, cosh, arcsin, arccos, arctan, arcsinh,
    arccosh, arctanh, erfinv, nanToNum, logaddexp, floorDivide, remainder, arctan2, variance, std,
    any, all, tril, triu, outer, addmm, take, takeAlongAxis, putAlongAxis, sliceUpdate, cumsum, cumprod, cummax, cummin,
    logcumsumexp, fastLayerNorm, fastRmsNorm, fastRope, fastScaledDotProductAttention, sort,
    stopGradient, argsort, topk, conv1d, conv2d, convTranspose1d, convTranspose2d, pad, tile, repeat, roll, diag, diagonal, tensordot,
    load, save, saveSafetensors
  } = glue);
  glueEinsum = glue.einsum;
  compile = compileWith;
  loaded = true;
}

let loaded = false;

/** Throws the not-loaded error of `name` until the module is loaded. */
function needsModule(name) {
  if (!loaded) early(name)();
}

// The function transforms. Each checks its function and options when it is made (a typo fails
// there, not at the first call) and returns a plain function that hands `fn` to the glue at
// each call: as with `compile`, the wasm side never keeps the page's function.

/** `grad(fn, {argnums?})`: MLX's `mx.grad`. */
export function grad(fn, opts) {
  needsModule("grad");
  glue.checkGradOptions("grad", fn, opts);
  return (...args) => glue.valueAndGradCall(fn, args, opts, false);
}

/** `valueAndGrad(fn, {argnums?})`: MLX's `mx.value_and_grad`; `fn` may return `[loss, aux]`. */
export function valueAndGrad(fn, opts) {
  needsModule("valueAndGrad");
  glue.checkGradOptions("valueAndGrad", fn, opts);
  return (...args) => glue.valueAndGradCall(fn, args, opts, true);
}

/** `vjp(fn, primals, cotangents) → [outputs, vjps]`: MLX's `mx.vjp`, on lists of trees. */
export function vjp(fn, primals, cotangents) {
  needsModule("vjp");
  return glue.vjp(fn, primals, cotangents);
}

/** `jvp(fn, primals, tangents) → [outputs, jvps]`: MLX's `mx.jvp`, on lists of trees. */
export function jvp(fn, primals, tangents) {
  needsModule("jvp");
  return glue.jvp(fn, primals, tangents);
}

/** `vmap(fn, {inAxes?, outAxes?})`: MLX's `mx.vmap`. */
export function vmap(fn, opts) {
  needsModule("vmap");
  glue.checkVmapOptions(fn, opts);
  return (...args) => glue.vmapCall(fn, args, opts);
}

/** `checkpoint(fn)`: MLX's `mx.checkpoint`; the gradient recomputes `fn`'s intermediates. */
export function checkpoint(fn) {
  needsModule("checkpoint");
  if (typeof fn !== "function") {
    throw new ValueError(`checkpoint: expected a function, got ${typeof fn}`);
  }
  return (...args) => glue.checkpointCall(fn, args);
}

/** A learning-rate schedule's argument check. */
function positiveInteger(op, what, value) {
  if (!Number.isInteger(value) || value < 1) {
    throw new ValueError(`${op}: ${what} must be an integer of 1 or more, not ${value}`);
  }
}

/** `tn.optimizers`: MLX's `mlx.optimizers`, the classes and the learning-rate schedules. */
export const optimizers = Object.freeze({
  get SGD() {
    needsModule("optimizers.SGD");
    return glue.SGD;
  },
  get Adam() {
    needsModule("optimizers.Adam");
    return glue.Adam;
  },
  get AdamW() {
    needsModule("optimizers.AdamW");
    return glue.AdamW;
  },
  /** `init * decayRate ** step`. */
  exponentialDecay(init, decayRate) {
    return (step) => init * decayRate ** step;
  },
  /** `init * decayRate ** floor(step / stepSize)`. */
  stepDecay(init, decayRate, stepSize) {
    positiveInteger("stepDecay", "stepSize", stepSize);
    return (step) => init * decayRate ** Math.floor(step / stepSize);
  },
  /** From `init` to `end` along half a cosine over `decaySteps` steps, then `end`. */
  cosineDecay(init, decaySteps, end = 0) {
    positiveInteger("cosineDecay", "decaySteps", decaySteps);
    return (step) => {
      const s = Math.min(step, decaySteps);
      return end + 0.5 * (1 + Math.cos((Math.PI / decaySteps) * s)) * (init - end);
    };
  },
  /** From `init` to `end` in a line over `steps` steps, then `end`. */
  linearSchedule(init, end, steps) {
    positiveInteger("linearSchedule", "steps", steps);
    return (step) => Math.min(step, steps) * ((end - init) / steps) + init;
  },
  /** `schedules[i]` from `boundaries[i - 1]` on, each counting its steps from there. */
  joinSchedules(schedules, boundaries) {
    if (!Array.isArray(schedules) || schedules.length === 0) {
      throw new ValueError("joinSchedules: needs at least one schedule");
    }
    if (!Array.isArray(boundaries) || boundaries.length !== schedules.length - 1) {
      throw new ValueError(
        `joinSchedules: ${schedules.length} schedules need ${schedules.length - 1} boundaries`,
      );
    }
    // As MLX's: each boundary the step has reached switches to its schedule, in list order.
    return (step) => {
      let rate = schedules[0](step);
      boundaries.forEach((b, k) => {
        if (step >= b) rate = schedules[k + 1](step - b);
      });
      return rate;
    };
  },
});

/**
 * `compile(fn)`: a plain function of any arity over the glue's `Compiled` (see index.d.ts),
 * with `dispose()`. The wrapper, not the wasm side, keeps `fn`: the garbage collector then sees
 * a cycle from `fn` back to the wrapper, and collects both (the glue's finalizer frees the
 * traces).
 */
function compileWith(fn) {
  const compiled = new glue.Compiled(fn);
  const compiledFn = (...args) => compiled.call(fn, args);
  compiledFn.dispose = () => compiled.dispose();
  if (typeof Symbol.dispose === "symbol") compiledFn[Symbol.dispose] = compiledFn.dispose;
  return compiledFn;
}
