// The dispatch profile's page: the peer benchmark's 1000 chained adds on 64 elements (one
// dispatch per add, op by op, then a readback) in one runtime, run while
// `cargo xtask bench dispatch` samples the page's main thread with Chromium's profiler.
// The page prepares and warms up, sets state "ready", and runs the timed runs when
// window.dispatchBench.start() is called; the driver starts the profiler in between.
import { median } from "./common.js";
import { loadCatalog, makeChecker, makeInputs } from "./peers/workloads.js";

const MODULES = {
  "tandem-gpu": "./peers/tandem.js",
  "tfjs-webgpu": "./peers/tfjs.js",
  "webgpu-hand": "./peers/hand.js",
};
const WARMUP = 3;

const params = new URLSearchParams(location.search);
const runtimeId = params.get("runtime") ?? "tandem-gpu";
const runs = Number(params.get("runs") ?? 20);

const state = { state: "loading", runtime: runtimeId, runs, text: "", times: [], check: null };
window.dispatchBench = state;

async function prepare() {
  if (!MODULES[runtimeId]) throw new Error(`unknown runtime ${runtimeId}`);
  const w = (await loadCatalog()).find((x) => x.id === "add-chain");
  const inputs = makeInputs(w);
  const check = makeChecker(w, inputs);
  const runtime = await (await import(MODULES[runtimeId])).setup(runtimeId);
  const impl = await runtime.prepare(w, inputs);
  for (let i = 0; i < WARMUP; i++) state.check ??= check(await impl.run());
  state.ops = w.count;
  state.info = runtime.info;
  return { impl, check };
}

// The timed runs, back to back, with nothing else on the page's thread (no gc between runs:
// its time would count against the dispatches).
async function timedRuns({ impl, check }) {
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    const outputs = await impl.run();
    state.times.push(performance.now() - start);
    state.check ??= check(outputs);
  }
  await impl.dispose();
  state.median = median(state.times);
  state.text = `${runtimeId}: median ${state.median.toFixed(2)} ms per run of ${state.ops} ops`;
}

prepare().then(
  (prepared) => {
    state.start = () => {
      state.state = "running";
      timedRuns(prepared).then(
        () => (state.state = "done"),
        (err) => {
          state.state = "error";
          state.text = String(err);
        },
      );
    };
    state.state = "ready";
  },
  (err) => {
    state.state = "error";
    state.text = String(err?.stack ?? err);
  },
);
