// The peer benchmark page: one runtime (from the URL) over a list of workloads, each timed as
// warm-ups then timed runs, every run ending in a readback to JS and checked against a JS
// reference. `cargo xtask bench peers` reads window.tandemBench while the page runs:
// {state, text, runtime, current, results: {id: {...}}, info, adapter, ...}, with `current`
// naming the workload in progress, so that a workload that hangs or crashes the page can be
// told apart from the others.
import { median } from "./common.js";
import { derivedOf, derivedValue, loadCatalog, makeChecker, makeInputs } from "./peers/workloads.js";

const MODULES = {
  "tandem-gpu": "./peers/tandem.js",
  "tandem-cpu": "./peers/tandem.js",
  "tandem-cpu-2t": "./peers/tandem.js",
  "tandem-gpu-compiled": "./peers/tandem.js",
  "tandem-cpu-compiled": "./peers/tandem.js",
  "tfjs-webgpu": "./peers/tfjs.js",
  "tfjs-wasm": "./peers/tfjs.js",
  "tfjs-wasm-2t": "./peers/tfjs.js",
  "jax-webgpu": "./peers/jax.js",
  "jax-jit": "./peers/jax.js",
  "webgpu-hand": "./peers/hand.js",
};

const params = new URLSearchParams(location.search);
const runtimeId = params.get("runtime") ?? "tandem-gpu";
const wanted = (params.get("workloads") ?? "").split(",").filter(Boolean);
// At least `runs` timed runs after `warmup`; more, up to `maxRuns`, while the workload's timed
// runs have taken less than `budgetMs`.
const config = {
  warmup: Number(params.get("warmup") ?? 2),
  runs: Number(params.get("runs") ?? 7),
  maxRuns: Number(params.get("maxRuns") ?? params.get("runs") ?? 7),
  budgetMs: Number(params.get("budgetMs") ?? 0),
};

const state = {
  state: "running",
  text: "",
  runtime: runtimeId,
  current: null,
  results: {},
  info: null,
  adapter: null,
  config,
  date: new Date().toISOString(),
  userAgent: navigator.userAgent,
  hardwareConcurrency: navigator.hardwareConcurrency,
  crossOriginIsolated: globalThis.crossOriginIsolated === true,
  pageErrors: [],
};
window.tandemBench = state;
window.addEventListener("error", (e) => state.pageErrors.push(`error: ${e.message}`));
window.addEventListener("unhandledrejection", (e) =>
  state.pageErrors.push(`unhandled rejection: ${describe(e.reason)}`),
);

// An error as one string, cut to 2000 characters (a failed shader compile quotes its source).
function describe(err) {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}

// The first lines of an error's stack, for the JSON.
function frames(err) {
  return typeof err?.stack === "string" ? err.stack.split("\n").slice(0, 8).join("\n") : null;
}

// What the browser's WebGPU adapter is, asked directly (every runtime's page reports it).
async function adapterInfo() {
  if (!navigator.gpu) return null;
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) return null;
  const info = adapter.info ?? {};
  return {
    vendor: info.vendor,
    architecture: info.architecture,
    device: info.device,
    description: info.description,
    isFallbackAdapter: info.isFallbackAdapter ?? adapter.isFallbackAdapter ?? null,
    subgroupMinSize: info.subgroupMinSize,
    subgroupMaxSize: info.subgroupMaxSize,
    features: [...adapter.features].sort(),
  };
}

const collectGarbage = () => globalThis.gc?.();

// The page's long tasks (the Long Tasks API reports every task of 50 ms or more): a workload's
// longest task during its timed runs is how long it kept the page from input and animation.
const longTasks = [];
const observer = PerformanceObserver.supportedEntryTypes?.includes("longtask")
  ? new PerformanceObserver((list) => longTasks.push(...list.getEntries()))
  : null;
observer?.observe({ type: "longtask", buffered: true });

// Resolves in a new task (a message, which no timer clamping delays).
function nextTask() {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => resolve();
    channel.port2.postMessage(null);
  });
}

// The longest task that overlapped one of `runs` ([start, end] in ms of performance.now()), or
// null when none reached 50 ms. Only the runs count: the check of a run's result and the forced
// garbage collection before the next run share a task of their own, which says nothing of the
// runtime and on a slow spell of this machine took 50-95 ms for a 1024 x 1024 product, for
// every runtime alike. Awaits a task first, so that the observer has seen the last one.
async function longestTask(runs) {
  await new Promise((resolve) => setTimeout(resolve, 0));
  longTasks.push(...(observer?.takeRecords() ?? []));
  const overlaps = (t) =>
    runs.some(([start, end]) => t.startTime < end && t.startTime + t.duration > start);
  const durations = longTasks.filter(overlaps).map((t) => t.duration);
  return durations.length ? Math.max(...durations) : null;
}

// Times one workload: prepare (inputs uploaded and resident, pipelines or jit built), warm-ups,
// timed runs; every run's result is checked.
async function timeWorkload(runtime, w) {
  const inputs = makeInputs(w);
  const check = makeChecker(w, inputs);
  const impl = await (async () => runtime.prepare(w, inputs))().catch((err) => {
    throw new Error(`prepare: ${describe(err)}`, { cause: err });
  });
  const times = [];
  const warmups = [];
  let failure = null;
  let timedMs = 0;
  const timedRuns = [];
  try {
    for (let run = 0; ; run++) {
      const timed = run >= config.warmup;
      const count = times.length;
      if (timed && (count >= config.maxRuns || (count >= config.runs && timedMs >= config.budgetMs))) break;
      collectGarbage();
      // The collection's work that goes on after gc() returns (releasing what it freed) ends
      // before the timing starts: until it has, the page's first microtask or new
      // ArrayBuffer waits for it (1.4-1.9 ms after a 16 MB readback was freed, 0.07 ms once
      // the page has done 2 ms of other work), which charged that wait to a runtime whose
      // first call schedules a microtask and not to one that computes first.
      await new Promise((resolve) => setTimeout(resolve, 10));
      // Each run starts a task of its own, so that the longest task is one run's, not the
      // whole loop's (awaits of settled promises never leave the task they start in).
      await nextTask();
      const label = timed ? `run ${count + 1}` : `warm-up ${run + 1}`;
      const start = performance.now();
      // (An async wrapper, so that a run that throws before returning its promise is caught.)
      const outputs = await (async () => impl.run())().catch((err) => {
        throw new Error(`${label}: ${describe(err)}`, { cause: err });
      });
      const elapsed = performance.now() - start;
      // The check (and the next run's garbage collection) run in a task of their own too.
      await nextTask();
      const problem = check(outputs);
      if (problem && !failure) failure = `${label}: ${problem}`;
      if (timed) {
        timedRuns.push([start, start + elapsed]);
        times.push(elapsed);
        timedMs += elapsed;
      } else {
        warmups.push(elapsed);
      }
    }
  } finally {
    await impl.dispose();
  }
  const longest = await longestTask(timedRuns);
  const med = median(times);
  const derived = derivedOf(w);
  return {
    status: failure ? "failed" : "ok",
    check: failure ?? "ok",
    median: med,
    min: Math.min(...times),
    max: Math.max(...times),
    runs: times.length,
    warmup: warmups.length,
    times,
    warmups,
    derived: derived && { unit: derived.unit, median: derivedValue(derived, med) },
    longestTaskMs: longest,
    ...(impl.note ? { note: impl.note } : {}),
    ...(impl.memory ? { memory: impl.memory() } : {}),
  };
}

function line(id, r) {
  if (r.status === "n/a") return `${id}: n/a (${r.reason})`;
  if (r.status === "error") return `${id}: error: ${r.error}`;
  const d = r.derived ? `  ${r.derived.median.toFixed(3)} ${r.derived.unit}` : "";
  const flag = r.status === "failed" ? `  CHECK FAILED: ${r.check}` : "";
  const mib = (b) => (b / 2 ** 20).toFixed(1);
  const m = r.memory ? `  resident ${mib(r.memory.residentBytes)} MiB, peak ${mib(r.memory.peakBytes)} MiB` : "";
  const task = r.longestTaskMs === null ? "" : `  longest task ${r.longestTaskMs.toFixed(0)} ms`;
  return `${id}: ${r.median.toFixed(3)} ms [${r.min.toFixed(3)}-${r.max.toFixed(3)}]${d}${m}${task}${flag}`;
}

async function main() {
  const catalog = await loadCatalog();
  const byId = new Map(catalog.map((w) => [w.id, w]));
  const unknown = wanted.filter((id) => !byId.has(id));
  if (unknown.length) throw new Error(`unknown workloads: ${unknown.join(", ")}`);
  if (!MODULES[runtimeId]) throw new Error(`unknown runtime ${runtimeId}`);
  state.adapter = await adapterInfo();
  const runtime = await (await import(MODULES[runtimeId])).setup(runtimeId);
  state.info = runtime.info;
  const lines = [`runtime ${runtimeId}`];
  for (const id of wanted) {
    const w = byId.get(id);
    const support = runtime.supports(w);
    let result;
    if (support !== true) {
      result = { status: "n/a", reason: support };
    } else {
      state.current = id;
      try {
        result = await timeWorkload(runtime, w);
      } catch (err) {
        result = { status: "error", error: describe(err), stack: frames(err.cause ?? err) };
      }
      state.current = null;
    }
    state.results[id] = result;
    lines.push(line(id, result));
    document.getElementById("output").textContent = lines.join("\n");
    collectGarbage();
  }
  return lines.join("\n");
}

main().then(
  (text) => {
    state.text = text;
    state.state = "done";
    document.getElementById("output").textContent = text;
  },
  (err) => {
    state.text = describe(err);
    state.state = "error";
    document.getElementById("output").textContent = state.text;
  },
);
