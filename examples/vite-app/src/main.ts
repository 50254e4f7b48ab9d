// The example app: attention weights softmax(q · kᵀ / √d) with tandem, on the GPU stream and
// again on the CPU stream, rendered as a table. It reports through window.tandemExample
// ({state, text}), which `cargo xtask test` reads after building it with Vite and webpack.
import * as tn from "tandem";

declare global {
  interface Window {
    tandemExample: { state: "running" | "done" | "error"; text: string };
  }
}

window.tandemExample = { state: "running", text: "" };

const QUERIES = 4;
const KEYS = 6;
const DIM = 8;

/** softmax(q · kᵀ / √d) over each row, on one stream; the intermediates are disposed. */
function attention(q: tn.NDArray<"float32">, k: tn.NDArray<"float32">, stream: tn.StreamLike) {
  return tn.tidy(() => {
    const scores = tn.matmul(q, tn.transpose(k, { stream }), { stream });
    const scaled = tn.multiply(scores, 1 / Math.sqrt(DIM), { stream });
    return tn.softmax(scaled, { axis: -1, stream });
  });
}

function render(weights: Float32Array) {
  const table = document.getElementById("weights") as HTMLTableElement;
  const header = table.insertRow();
  header.append(document.createElement("th"));
  for (let j = 0; j < KEYS; j++) {
    const th = document.createElement("th");
    th.textContent = `key ${j}`;
    header.append(th);
  }
  for (let i = 0; i < QUERIES; i++) {
    const row = table.insertRow();
    const th = document.createElement("th");
    th.textContent = `query ${i}`;
    row.append(th);
    for (let j = 0; j < KEYS; j++) {
      const w = weights[i * KEYS + j];
      const cell = row.insertCell();
      const bar = document.createElement("span");
      bar.className = "bar";
      bar.style.width = `${Math.round(w * 60)}px`;
      cell.append(w.toFixed(3), bar);
    }
  }
}

async function main(): Promise<string> {
  const info = await tn.initRuntime();
  const q = tn.randomNormal([QUERIES, DIM], { key: 1 });
  const k = tn.randomNormal([KEYS, DIM], { key: 2 });
  const onGpu = attention(q, k, "gpu");
  const onCpu = attention(q, k, "cpu");
  const [gpu, cpu] = await Promise.all([onGpu.toArray(), onCpu.toArray()]);
  const rowSums = Array.from({ length: QUERIES }, (_, i) =>
    gpu.slice(i * KEYS, (i + 1) * KEYS).reduce((s, w) => s + w, 0),
  );
  const largestGap = gpu.reduce((m, w, i) => Math.max(m, Math.abs(w - cpu[i])), 0);
  render(gpu);
  for (const a of [q, k, onGpu, onCpu]) a.dispose();
  const where = info.gpu ? `WebGPU (${info.adapter?.description || info.adapter?.vendor})` : "the CPU (no WebGPU)";
  return [
    `gpu stream on ${where}`,
    `row sums: ${rowSums.map((s) => s.toFixed(4)).join(" ")}`,
    `largest gap between the gpu and cpu streams: ${largestGap.toExponential(2)}`,
    `first row: ${Array.from(gpu.slice(0, KEYS), (w) => w.toFixed(4)).join(" ")}`,
  ].join("\n");
}

main().then(
  (text) => {
    document.getElementById("status")!.textContent = text.split("\n")[0];
    window.tandemExample = { state: "done", text };
  },
  (err: unknown) => {
    const e = err as tn.TandemError;
    const text = `${e.name}: ${e.message}`;
    document.getElementById("status")!.textContent = text;
    window.tandemExample = { state: "error", text };
  },
);
