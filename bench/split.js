// MLX's unified-memory workload, timed with every op on the GPU and with the exps on the CPU.
// `cargo xtask bench split` reads its table through common.js.
import * as tn from "../pkg/index.js";
import { adapterLine, median, report } from "./common.js";

const RUNS = 10;
const WARMUP = 2;
const EXPS = 500;

function workload(a, b, matmulStream, expStream) {
  const x = tn.matmul(a, b, { stream: matmulStream });
  let y = b;
  for (let i = 0; i < EXPS; i++) {
    const next = tn.exp(y, { stream: expStream });
    if (y !== b) y.free();
    y = next;
  }
  return [x, y];
}

// Median wall time of evaluating the workload, from building the graph to the results being
// computed on every device.
async function time(a, b, matmulStream, expStream) {
  const times = [];
  for (let run = 0; run < WARMUP + RUNS; run++) {
    const start = performance.now();
    const [x, y] = workload(a, b, matmulStream, expStream);
    await tn.evaluate(x, y);
    const elapsed = performance.now() - start;
    x.free();
    y.free();
    if (run >= WARMUP) times.push(elapsed);
  }
  return median(times);
}

async function main() {
  const info = await tn.initRuntime();
  tn.randomSeed(0);
  const a = tn.randomUniform([4096, 512]);
  const b = tn.randomUniform([512, 4]);
  await tn.evaluate(a, b);
  const rows = [
    ["GPU-only (matmul gpu, exps gpu)", await time(a, b, "gpu", "gpu")],
    ["split (matmul gpu, exps cpu)", await time(a, b, "gpu", "cpu")],
    ["CPU-only (matmul cpu, exps cpu)", await time(a, b, "cpu", "cpu")],
  ];
  const gpuOnly = rows[0][1];
  const adapter = adapterLine(info, "none (the gpu device ran on the CPU)");
  const lines = [
    adapter,
    `workload                              median ms   GPU-only / this`,
    ...rows.map(([name, ms]) => `${name.padEnd(38)}${ms.toFixed(2).padStart(9)}   ${(gpuOnly / ms).toFixed(2).padStart(6)}x`),
  ];
  return lines.join("\n");
}

report(main);
