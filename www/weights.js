// The half-precision card: the same model shape with float32 and with float16 weights (their
// active bytes, the peak of a forward pass, its time), and a weights loader with a progress
// bar (a file the reader picks, or one the page writes with saveSafetensors).
//
// It reports on window.tandemDemo.weights: {compare: [{dtype, residentBytes, peakBytes, ms}],
// loaded: {tensors, bytes, progress: [[read, total], …]}} for the end-to-end drive.
import * as tn from "../pkg/index.js";
import { $, cell } from "./dom.js";
import { formatBytes } from "./memory.js";

// A two-layer MLP on a batch of tokens: [64, 512] @ [512, 2048] → gelu → @ [2048, 512].
const SHAPE = { batch: 64, dim: 512, hidden: 2048 };
const RUNS = 5;

export const report = { compare: null, loaded: null };

function weightsOf(dtype) {
  const { batch, dim, hidden } = SHAPE;
  const draw = (shape, scale) => tn.randomNormal(shape, { scale, dtype, key: shape[0] + shape[1] });
  return {
    x: draw([batch, dim], 1),
    w1: draw([dim, hidden], 1 / Math.sqrt(dim)),
    w2: draw([hidden, dim], 1 / Math.sqrt(hidden)),
  };
}

function forward(p, stream) {
  return tn.tidy(() => tn.matmul(tn.gelu(tn.matmul(p.x, p.w1, { stream }), { stream }), p.w2, { stream }));
}

/** One dtype's figures: resident bytes, the peak of a forward pass over them, its median ms. */
async function measure(dtype, stream) {
  await tn.synchronize();
  const base = tn.getActiveMemory();
  const p = weightsOf(dtype);
  await tn.evaluate(p);
  await tn.synchronize();
  const residentBytes = tn.getActiveMemory() - base;
  const times = [];
  let peakBytes = 0;
  for (let run = 0; run < RUNS + 1; run++) {
    tn.resetPeakMemory();
    const start = performance.now();
    const y = forward(p, stream);
    await y.toArray();
    const ms = performance.now() - start;
    peakBytes = Math.max(peakBytes, tn.getPeakMemory() - base);
    y.dispose();
    if (run > 0) times.push(ms);
  }
  for (const a of Object.values(p)) a.dispose();
  await tn.synchronize();
  times.sort((a, b) => a - b);
  return { dtype, residentBytes, peakBytes, ms: times[Math.floor(times.length / 2)] };
}

async function compare() {
  const stream = tn.defaultDevice();
  const rows = [];
  for (const dtype of ["float32", "float16"]) rows.push(await measure(dtype, stream));
  report.compare = rows;
  const table = $("half-table");
  const head = document.createElement("tr");
  head.append(...["weights", "resident", "peak of a pass", `median of ${RUNS}`].map((t) => cell("th", t)));
  table.replaceChildren(
    head,
    ...rows.map((r) => {
      const tr = document.createElement("tr");
      tr.append(cell("th", r.dtype), cell("td", formatBytes(r.residentBytes)), cell("td", formatBytes(r.peakBytes)), cell("td", `${r.ms.toFixed(1)} ms`));
      return tr;
    }),
  );
  $("half-note").textContent = `On the ${stream} stream. float16 holds 2 bytes an element; kernels compute in float32 and round once on store.`;
}

let loaded = null;

/** Loads `source` with a progress bar, replacing the last file's arrays. */
async function loadWeights(source) {
  for (const a of Object.values(loaded ?? {})) a.dispose();
  loaded = null;
  const progress = [];
  const bar = $("weights-progress");
  const result = await tn.load(source, {
    stream: tn.defaultDevice(),
    onProgress: (read, total) => {
      progress.push([read, total]);
      bar.max = total;
      bar.value = read;
      $("weights-status").textContent = `${formatBytes(read)} of ${formatBytes(total)}`;
    },
  });
  loaded = result instanceof tn.NDArray ? { array: result } : result;
  const entries = Object.entries(loaded);
  const bytes = entries.reduce((sum, [, a]) => sum + a.nbytes, 0);
  report.loaded = { tensors: entries.length, bytes, progress };
  $("weights-table").replaceChildren(
    ...entries.slice(0, 12).map(([name, a]) => {
      const tr = document.createElement("tr");
      tr.append(cell("th", name), cell("td", `${a.dtype} [${a.shape.join(", ")}]`), cell("td", formatBytes(a.nbytes)));
      return tr;
    }),
  );
  $("weights-status").textContent = `${entries.length} tensors, ${formatBytes(bytes)} (active now ${formatBytes(tn.getActiveMemory())})`;
}

/** A safetensors file the page writes itself: the MLP's float16 weights, as a Blob. */
async function sampleFile() {
  const p = weightsOf("float16");
  const bytes = await tn.saveSafetensors(p, { written_by: "the tandem demo" });
  for (const a of Object.values(p)) a.dispose();
  return new Blob([bytes]);
}

/** Wires the card's buttons; `guard` runs an action with the page's busy flag and errors. */
export function setupWeights(guard) {
  $("half-compare").addEventListener("click", () => guard(compare));
  $("weights-sample").addEventListener("click", () => guard(async () => loadWeights(await sampleFile())));
  $("weights-file").addEventListener("change", (e) => {
    const file = e.target.files?.[0];
    if (file) guard(() => loadWeights(file));
  });
}
