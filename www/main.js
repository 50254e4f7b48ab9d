// The demo page. It reports its outcome on window.tandemDemo ({state, text}), which
// `cargo xtask demo --headless` reads.
import init, * as tn from "../pkg/tandem.js";

const $ = (id) => document.getElementById(id);
const RUNS = 5;
const EXPS = 500;
window.tandemDemo = { state: "running", text: "" };

function row(cells, header = false) {
  const tr = document.createElement("tr");
  for (const [i, text] of cells.entries()) {
    const cell = document.createElement(header || i === 0 ? "th" : "td");
    cell.textContent = text;
    tr.append(cell);
  }
  return tr;
}

function showRuntime(info) {
  const a = info.adapter;
  const rows = [
    ["WebGPU", info.gpu ? "yes" : "no (the gpu device runs on the CPU)"],
    ["adapter", a ? `${a.vendor} ${a.architecture} ${a.description}`.trim() : "none"],
    ["fallback adapter", a ? String(a.isFallbackAdapter) : "-"],
    ["default device", `${info.defaultDevice.device}: ${info.defaultDevice.reason}`],
    ["features", info.features.join(", ") || "none"],
    ["maxBufferSize", `${info.limits.maxBufferSize ?? "-"} bytes`],
  ];
  $("runtime").replaceChildren(...rows.map((r) => row(r)));
}

// The example's graph; each exp's input is freed once the next one holds it.
function workload(a, b, expStream) {
  const x = tn.matmul(a, b, { stream: "gpu" });
  let y = b;
  for (let i = 0; i < EXPS; i++) {
    const next = tn.exp(y, { stream: expStream });
    if (y !== b) y.free();
    y = next;
  }
  return [x, y];
}

async function timeOnce(a, b, expStream) {
  const start = performance.now();
  const [x, y] = workload(a, b, expStream);
  await tn.evaluate(x, y);
  const ms = performance.now() - start;
  x.free();
  y.free();
  return ms;
}

function median(values) {
  const sorted = [...values].sort((p, q) => p - q);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function medianTime(a, b, expStream) {
  await timeOnce(a, b, expStream); // warm-up: pipelines compile
  const times = [];
  for (let run = 0; run < RUNS; run++) times.push(await timeOnce(a, b, expStream));
  return median(times);
}

async function runExample(a, b, info) {
  const gpuOnly = await medianTime(a, b, "gpu");
  const split = await medianTime(a, b, "cpu");
  const fallback = info.adapter?.isFallbackAdapter;
  $("timings").replaceChildren(
    row(["run", "median ms", "GPU-only / this"], true),
    row(["GPU-only (exps on the gpu)", gpuOnly.toFixed(2), "1.00x"]),
    row(["split (exps on the cpu)", split.toFixed(2), `${(gpuOnly / split).toFixed(2)}x`]),
  );
  if (fallback) {
    $("timings").append(row(["note", "the GPU is a software adapter on the same CPU cores", ""]));
  }
  const report = await tn.profile(() => {
    const [x, y] = workload(a, b, "cpu");
    return tn.evaluate(x, y).then(() => {
      x.free();
      y.free();
    });
  });
  drawTimeline(report);
}

// GPU batches from submit to submit + GPU time (from timestamps; without them, to the done
// report), and CPU ops from start to end, on one time axis.
function drawTimeline(report) {
  const gpu = report.gpu.map((b) => [b.submitMs, b.submitMs + (b.gpuMs ?? b.doneMs - b.submitMs)]);
  const cpu = report.cpu.map((s) => [s.startMs, s.endMs]);
  const all = [...gpu, ...cpu];
  if (all.length === 0) return;
  const t0 = Math.min(...all.map(([s]) => s));
  const t1 = Math.max(...all.map(([, e]) => e));
  const svg = $("timeline");
  const width = svg.clientWidth || 600;
  const x = (t) => 90 + ((t - t0) / (t1 - t0 || 1)) * (width - 100);
  const ns = "http://www.w3.org/2000/svg";
  const shapes = [];
  const lane = (label, spans, y, cls) => {
    const text = document.createElementNS(ns, "text");
    text.setAttribute("x", 0);
    text.setAttribute("y", y + 14);
    text.textContent = label;
    shapes.push(text);
    for (const [s, e] of spans) {
      const rect = document.createElementNS(ns, "rect");
      rect.setAttribute("x", x(s));
      rect.setAttribute("y", y);
      rect.setAttribute("width", Math.max(1, x(e) - x(s)));
      rect.setAttribute("height", 20);
      rect.setAttribute("class", cls);
      shapes.push(rect);
    }
  };
  lane("GPU matmul", gpu, 10, "gpu");
  lane(`CPU ${cpu.length} exps`, cpu, 40, "cpu");
  svg.replaceChildren(...shapes);
  const gpuEnd = Math.max(...gpu.map(([, e]) => e));
  const cpuStart = Math.min(...cpu.map(([s]) => s));
  const timed = report.gpu.every((b) => b.gpuMs !== null);
  $("timeline-note").textContent =
    `${(t1 - t0).toFixed(1)} ms in all. The CPU started ${(cpuStart - t0).toFixed(1)} ms in; ` +
    `the GPU's work ends no earlier than ${(gpuEnd - t0).toFixed(1)} ms` +
    (timed ? " (submit time plus its timestamp-measured GPU time)." : " (its completion report).");
}

function formatBytes(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}

// Live gauges: active bytes on each device against the limit (or the peak when there is
// none), the cache, and bytes moved between the devices.
function showMemory() {
  const stats = tn.memoryStats();
  const limit = tn.getMemoryLimit();
  const peak = Math.max(1, Number.isFinite(limit) ? limit : stats["active_bytes.all.peak"]);
  const gauges = ["cpu", "gpu", "all"].map((pool) => {
    const current = stats[`active_bytes.${pool}.current`];
    const meter = document.createElement("meter");
    meter.max = peak;
    meter.value = current;
    const label = document.createElement("label");
    label.append(`${pool.padEnd(3)} active ${formatBytes(current)} (peak ${formatBytes(stats[`active_bytes.${pool}.peak`])}) `, meter);
    return label;
  });
  $("gauges").replaceChildren(...gauges);
  $("transfers").replaceChildren(
    row(["memory limit", Number.isFinite(limit) ? formatBytes(limit) : "none"]),
    row(["cached for reuse", formatBytes(tn.getCacheMemory())]),
    row(["cache hits / misses", `${stats.num_cache_hits} / ${stats.num_cache_misses}`]),
    row(["out-of-memory errors", String(stats.num_ooms)]),
    row(["uploaded (cpu → gpu)", formatBytes(stats["transfer_bytes.cpu_to_gpu"])]),
    row(["read back (gpu → cpu)", formatBytes(stats["transfer_bytes.gpu_to_cpu"])]),
  );
}

// The limit control: set a budget, then "Run again" shows the limit biting (a
// MemoryLimitError) or the runtime flushing and retrying within it.
function setupLimitControl(a, b, info) {
  $("set-limit").onclick = () => {
    const mib = $("limit").value.trim();
    tn.setMemoryLimit(mib === "" ? Infinity : Number(mib) * 2 ** 20);
    $("limit-status").textContent = mib === "" ? "No limit." : `Limit set to ${mib} MiB.`;
  };
  $("clear-cache").onclick = () => tn.clearCache();
  $("run").onclick = async () => {
    $("run").disabled = true;
    try {
      await runExample(a, b, info);
      $("limit-status").textContent = "";
    } catch (err) {
      $("limit-status").textContent = `${err.name}: ${err.message}`;
    }
    $("run").disabled = false;
  };
}

function watchMemory() {
  showMemory();
  requestAnimationFrame(watchMemory);
}

// An add in a module Web Worker; rejects if the worker fails or disagrees.
async function addInWorker() {
  const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
  const reply = await new Promise((resolve, reject) => {
    worker.onmessage = (event) => resolve(event.data);
    worker.onerror = (event) => reject(new Error(`the worker failed: ${event.message}`));
    worker.postMessage(null);
  });
  worker.terminate();
  if (!reply.ok) throw new Error(`in the worker: ${reply.error}`);
  if (reply.sum.join() !== "11,22,33") throw new Error(`the worker computed [${reply.sum}]`);
  return reply;
}

async function main() {
  await init();
  const info = await tn.initRuntime();
  $("status").textContent = "Ready.";
  $("runs").textContent = RUNS;
  showRuntime(info);
  watchMemory();

  tn.randomSeed(0);
  const a = tn.randomUniform([4096, 512], { stream: "gpu" });
  const b = tn.randomUniform([512, 4], { stream: "gpu" });
  await tn.evaluate(a, b);
  await runExample(a, b, info);
  $("run").disabled = false;
  setupLimitControl(a, b, info);

  const inWorker = await addInWorker();
  $("worker").textContent =
    `add([1, 2, 3], [10, 20, 30], {stream: "gpu"}) in a module Worker ` +
    `(WebGPU ${inWorker.gpu ? "yes" : "no"}) = [${inWorker.sum.join(", ")}]`;
  showMemory();
}

main().then(
  () => {
    window.tandemDemo = { state: "done", text: $("output").innerText };
  },
  (err) => {
    $("status").textContent = `${err.name}: ${err.message}`;
    $("status").className = "error";
    window.tandemDemo = { state: "error", text: $("output").innerText };
  },
);
