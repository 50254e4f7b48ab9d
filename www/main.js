// The demo page. It reports its outcome on window.tandemDemo ({state, text}), which
// `cargo xtask demo --headless` reads.
import * as tn from "../pkg/index.js";

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

// The memory history of one GPU-only run and one split run: alloc and free_completed events become one band per
// block, stacked in allocation order (a block's band drops when one below it is freed), one
// chart per device, with the event index as the time axis (as memory_viz does).
let recorded = [];

async function recordHistory(a, b) {
  tn.recordMemoryHistory({ enabled: true, maxEntries: 100000, stacks: true });
  try {
    await timeOnce(a, b, "gpu");
    await timeOnce(a, b, "cpu");
  } finally {
    tn.recordMemoryHistory({ enabled: false });
  }
  recorded = tn.memoryHistory();
}

// Bands of `events` for one device: [{id, op, bytes, stack, timeMs, points: [[x, bottom]]}].
function bands(events, device) {
  const live = [];
  const all = [];
  let peak = 0;
  events.forEach((event, x) => {
    if (event.device !== device) return;
    if (event.action === "alloc") {
      const band = { ...event, points: [] };
      live.push(band);
      all.push(band);
    } else if (event.action === "free_completed") {
      const i = live.findIndex((band) => band.id === event.id);
      if (i >= 0) live.splice(i, 1)[0].points.push([x, null]);
    } else {
      return;
    }
    let offset = 0;
    for (const band of live) {
      band.points.push([x, offset]);
      offset += band.bytes;
    }
    peak = Math.max(peak, offset);
  });
  return { all, peak };
}

const PALETTE = ["#1565c0", "#2e7d32", "#ef6c00", "#6a1b9a", "#c62828", "#00838f", "#9e9d24", "#4e342e"];
const colours = new Map();
function colour(op) {
  if (!colours.has(op)) colours.set(op, PALETTE[colours.size % PALETTE.length]);
  return colours.get(op);
}

function drawHistory() {
  const ns = "http://www.w3.org/2000/svg";
  const charts = [];
  let drawn = 0;
  const count = recorded.length;
  for (const device of ["gpu", "cpu"]) {
    const { all, peak } = bands(recorded, device);
    if (all.length === 0) continue;
    const svg = document.createElementNS(ns, "svg");
    const width = $("history").clientWidth || 700;
    const height = 160;
    svg.setAttribute("width", width);
    svg.setAttribute("height", height + 20);
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", `live ${device} bytes over the run`);
    const x = (i) => 60 + (i / Math.max(1, count - 1)) * (width - 70);
    const y = (bytes) => height - (bytes / (peak || 1)) * (height - 10);
    for (const band of all) {
      const end = band.points.at(-1);
      const open = end[1] !== null;
      const steps = band.points.filter(([, off]) => off !== null);
      const last = open ? count - 1 : end[0];
      const top = steps.map(([i, off]) => `${x(i)},${y(off + band.bytes)}`);
      const bottom = steps.map(([i, off]) => `${x(i)},${y(off)}`).reverse();
      const lastOff = steps.at(-1)[1];
      top.push(`${x(last)},${y(lastOff + band.bytes)}`);
      bottom.unshift(`${x(last)},${y(lastOff)}`);
      const polygon = document.createElementNS(ns, "polygon");
      polygon.setAttribute("points", [...top, ...bottom].join(" "));
      polygon.setAttribute("fill", colour(band.op));
      polygon.setAttribute("class", "band");
      const info =
        `${band.op} on ${band.stream ?? device}: ${formatBytes(band.bytes)} (block ${band.id}, ` +
        `allocated at ${band.timeMs.toFixed(1)} ms)\n${band.stack ?? "(no stack)"}`;
      const title = document.createElementNS(ns, "title");
      title.textContent = info;
      polygon.append(title);
      polygon.addEventListener("mouseenter", () => {
        $("history-info").textContent = info;
      });
      svg.append(polygon);
      drawn++;
    }
    const label = document.createElementNS(ns, "text");
    label.setAttribute("x", 0);
    label.setAttribute("y", 14);
    label.textContent = device;
    const scale = document.createElementNS(ns, "text");
    scale.setAttribute("x", 0);
    scale.setAttribute("y", 30);
    scale.textContent = formatBytes(peak);
    const axis = document.createElementNS(ns, "text");
    axis.setAttribute("x", 60);
    axis.setAttribute("y", height + 16);
    axis.textContent = `${count} events →`;
    svg.append(label, scale, axis);
    charts.push(svg);
  }
  $("history").replaceChildren(...charts);
  $("history-legend").replaceChildren(
    ...[...colours].map(([op, fill]) => {
      const item = document.createElement("span");
      item.className = "legend";
      item.style.setProperty("--swatch", fill);
      item.textContent = op;
      return item;
    }),
  );
  window.tandemHistory = { state: "drawn", bands: drawn, events: count };
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
  await recordHistory(a, b);
  $("history-panel").addEventListener("toggle", () => {
    if ($("history-panel").open) drawHistory();
  });
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
