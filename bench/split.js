// MLX's unified-memory workload, timed with every op on the GPU and with the exps on the CPU.
// Reports through window.tandemBench ({state, text}), which `cargo xtask bench split` reads.
import init, * as tn from "../pkg/tandem.js";

const RUNS = 10;
const WARMUP = 2;
const EXPS = 500;

window.tandemBench = { state: "running", text: "" };

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

function median(values) {
  const sorted = [...values].sort((p, q) => p - q);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
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
  await init();
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
  const adapter = info.adapter
    ? `${info.adapter.vendor} ${info.adapter.architecture}${info.adapter.isFallbackAdapter ? " (a fallback adapter: it runs on the CPU's cores)" : ""}`
    : "none (the gpu device ran on the CPU)";
  const lines = [
    `adapter: ${adapter}`,
    `workload                              median ms   GPU-only / this`,
    ...rows.map(([name, ms]) => `${name.padEnd(38)}${ms.toFixed(2).padStart(9)}   ${(gpuOnly / ms).toFixed(2).padStart(6)}x`),
  ];
  return lines.join("\n");
}

main().then(
  (text) => {
    document.getElementById("output").textContent = text;
    window.tandemBench = { state: "done", text };
  },
  (err) => {
    const text = `${err.name}: ${err.message}`;
    document.getElementById("output").textContent = text;
    window.tandemBench = { state: "error", text };
  },
);
