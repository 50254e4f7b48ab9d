// How many dispatches one submit should carry: GPU-only workloads timed with each setting of
// setDispatchesPerSubmit. `cargo xtask bench batching` reads its table through common.js.
import * as tn from "../pkg/index.js";
import { adapterLine, median, report } from "./common.js";

const RUNS = 7;
const WARMUP = 2;
const SETTINGS = [1, 4, 16, 64, 256, 1024];

// Each workload builds its graph on the GPU from inputs made beforehand and returns the outputs.
function chainedExps(b) {
  let y = b;
  for (let i = 0; i < 500; i++) y = tn.exp(y, { stream: "gpu" });
  return [y];
}

function chainedAdds(small) {
  let y = small;
  for (let i = 0; i < 1000; i++) y = tn.add(y, small, { stream: "gpu" });
  return [y];
}

function mlxExample(a, b) {
  return [tn.matmul(a, b, { stream: "gpu" }), ...chainedExps(b)];
}

// Median wall time from building the graph until its GPU work has finished.
async function time(build) {
  const times = [];
  for (let run = 0; run < WARMUP + RUNS; run++) {
    const start = performance.now();
    const outputs = build();
    await tn.evaluate(...outputs);
    const elapsed = performance.now() - start;
    for (const out of outputs) out.free();
    if (run >= WARMUP) times.push(elapsed);
  }
  return median(times);
}

async function main() {
  const info = await tn.initRuntime();
  tn.randomSeed(0);
  const a = tn.randomUniform([4096, 512], { stream: "gpu" });
  const b = tn.randomUniform([512, 4], { stream: "gpu" });
  const small = tn.randomUniform([64], { stream: "gpu" });
  await tn.evaluate(a, b, small);
  const workloads = [
    ["500 chained exp, 512x4", () => chainedExps(b)],
    ["1000 chained add, 64", () => chainedAdds(small)],
    ["MLX example, all gpu", () => mlxExample(a, b)],
  ];
  const table = [];
  for (const setting of SETTINGS) {
    tn.setDispatchesPerSubmit(setting);
    const row = [setting];
    for (const [, build] of workloads) row.push(await time(build));
    table.push(row);
  }
  const adapter = adapterLine(info, "none");
  const header = `dispatches/submit ${workloads.map(([name]) => name.padStart(24)).join("")}`;
  const lines = [
    adapter,
    `median ms of ${RUNS} runs, from building the graph to the GPU finishing`,
    header,
    ...table.map(([setting, ...ms]) => `${String(setting).padStart(17)} ${ms.map((t) => t.toFixed(2).padStart(24)).join("")}`),
  ];
  return lines.join("\n");
}

report(main);
