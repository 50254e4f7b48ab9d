// The demo page: MLX's unified-memory example timed GPU-only, split, CPU-only and compiled,
// with what ran where, memory gauges and a limit, and an nvidia-smi-style monitor.
//
// It reports on window.tandemDemo ({state, text, results, runs, error}), which
// `cargo xtask demo --headless` and the end-to-end test read: state is "starting", then
// "ready" between runs, "running" during one, or "error" if the page could not start.
import * as tn from "../pkg/index.js";
import { COLOURS, drawRuns, drawTimeline } from "./charts.js";
import { $, cell, fillKv } from "./dom.js";
import { drawHistory, recordHistory } from "./history.js";
import { formatBytes, seen, setupLimit, showMemory, showSummary, watchMemory } from "./memory.js";
import { samples, startMonitor } from "./monitor.js";
import { report as weightsReport, setupWeights } from "./weights.js";
import { DEFAULTS, MODES, WARMUPS, Workload, callOf, example, source } from "./workload.js";

const LIMITS = { m: 16384, k: 16384, n: 4096, iterations: 5000, repetitions: 100 };

const page = { state: "starting", text: "", results: {}, runs: 0, error: null, seen, smiSamples: samples, weights: weightsReport };
window.tandemDemo = page;
// For the end-to-end drive: the source of the function every mode calls, what each mode
// passes it, and the shown code run as shown (it must leave active memory where it was).
page.exampleSource = example.toString();
page.callOf = (mode) => callOf(mode, workload?.settings.iterations ?? readSettings().iterations);
page.runShown = async () => {
  const AsyncFunction = (async () => {}).constructor;
  await tn.synchronize();
  const before = tn.getActiveMemory();
  await new AsyncFunction("tn", $("code").textContent)(tn);
  await tn.synchronize();
  return { before, after: tn.getActiveMemory() };
};

let workload = null;
let busy = false;
let runtime = null;

function showRuntime(info) {
  const a = info.adapter;
  const name = a ? [a.vendor, a.architecture, a.description].filter(Boolean).join(" ") || "unnamed adapter" : "no WebGPU";
  $("adapter").textContent = info.gpu ? `${name}${a?.isFallbackAdapter ? " (software)" : ""}` : "no WebGPU: CPU only";
  $("adapter").className = `chip ${info.gpu ? (a?.isFallbackAdapter ? "chip-soft" : "chip-gpu") : "chip-none"}`;
  $("no-webgpu").hidden = info.gpu;
  $("software-note").hidden = !(info.gpu && a?.isFallbackAdapter);
  fillKv($("runtime"), [
    ["adapter", name],
    ["default device", `${info.defaultDevice.device} (${info.defaultDevice.source})`],
    ["GPU exp", info.math ? info.math.exp : "-"],
    ["matmul kernel", info.matmul?.kernel ?? info.matmul?.source ?? "-"],
    ["timestamps", info.features.includes("timestamp-query") ? "yes" : "no"],
  ]);
}

/** The settings from the form, checked; throws an Error naming the bad field. */
function readSettings() {
  const settings = {};
  for (const key of Object.keys(DEFAULTS)) {
    const text = $(key).value.trim();
    const value = Number(text);
    if (!/^\d+$/.test(text) || value < 1 || value > LIMITS[key]) {
      throw new Error(`${$(key).labels[0].textContent.trim()} must be a whole number from 1 to ${LIMITS[key]}, not "${text}"`);
    }
    settings[key] = value;
  }
  return settings;
}

function sameSizes(a, b) {
  return ["m", "k", "n", "iterations"].every((key) => a[key] === b[key]);
}

/** The workload for the form's settings: the current one, or a new one (new inputs, results
 * cleared) when a size or the iteration count changed. */
async function currentWorkload() {
  const settings = readSettings();
  if (workload && sameSizes(workload.settings, settings)) {
    workload.settings.repetitions = settings.repetitions;
    return workload;
  }
  workload?.dispose();
  workload = null;
  page.results = {};
  showResults();
  const next = new Workload(settings);
  try {
    await next.prepare();
  } catch (err) {
    next.dispose();
    throw err;
  }
  workload = next;
  return next;
}

/** The shown code, and every figure of the page's text that names a setting (the exps'
 * count, b's shape), for the form's settings. */
function showCode() {
  const mode = $("code-mode").value;
  try {
    const settings = readSettings();
    $("code").textContent = source(mode, settings);
    for (const el of document.querySelectorAll("[data-figure=iterations]")) el.textContent = settings.iterations;
    for (const el of document.querySelectorAll("[data-figure=b-shape]")) el.textContent = `${settings.k}×${settings.n}`;
  } catch (err) {
    $("code").textContent = err.message;
  }
  $("code-where").textContent = MODES[mode].where;
}

function showResults() {
  const results = page.results;
  const baseline = results.gpu?.median;
  const rows = Object.values(results).map((r) => {
    const tr = document.createElement("tr");
    const name = cell("th", MODES[r.mode].label);
    name.style.setProperty("--swatch", COLOURS[r.mode]);
    name.className = "swatch";
    const speedup = baseline ? `${(baseline / r.median).toFixed(2)}×` : "-";
    tr.append(name, cell("td", r.median.toFixed(2)), cell("td", r.min.toFixed(2)), cell("td", r.max.toFixed(2)), cell("td", speedup, "speedup"));
    return tr;
  });
  const head = document.createElement("tr");
  for (const h of ["mode", "median ms", "min", "max", "vs GPU-only"]) head.append(cell("th", h));
  $("results").replaceChildren(head, ...rows);
  $("results-empty").hidden = rows.length > 0;
  const labels = Object.fromEntries(Object.entries(MODES).map(([k, m]) => [k, m.label]));
  drawRuns($("runs-chart"), Object.fromEntries(Object.values(results).map((r) => [r.mode, r])), labels);
}

function progress(text, done, total) {
  $("progress").value = done;
  $("progress").max = total;
  $("progress-text").textContent = text;
  showMemory();
}

async function showProfile(mode) {
  const report = await workload.profile(mode);
  $("timeline-title").textContent = `${MODES[mode].label}: one run`;
  $("timeline-tip").textContent = "Hover a bar or a copy for its op and shape.";
  const figures = drawTimeline($("timeline"), report, $("timeline-tip"));
  if (!figures) return;
  const gpuBusy =
    figures.dispatches === 0
      ? "no GPU work in this mode"
      : figures.gpuBusyMs === null
        ? "no timestamps on this adapter, so no busy time"
        : `${figures.gpuBusyMs.toFixed(2)} ms busy (timestamps)`;
  $("timeline-note").textContent =
    `${figures.spanMs.toFixed(2)} ms from first to last event. GPU: ${figures.dispatches} dispatch bars, ${gpuBusy}. ` +
    `CPU: ${figures.cpuOps} ops, ${figures.cpuBusyMs.toFixed(2)} ms busy. ${figures.copies} copies between the devices.`;
}

/** Marks the page busy (a run, or the history recording) or free again: the run buttons are
 * disabled while it is busy, so a click then is refused visibly, not dropped. */
function setBusy(flag, why = "") {
  busy = flag;
  for (const button of document.querySelectorAll("button[data-mode], #run-all, #half-compare, #weights-sample")) {
    button.disabled = flag;
    button.title = flag ? why : "";
  }
}

/** Times each of `modes` in turn; a failure (a MemoryLimitError under a tight limit) shows in
 * the page, and the page stays usable. */
async function run(modes) {
  if (busy) return;
  setBusy(true, "a run is in progress");
  page.state = "running";
  page.error = null;
  $("run-error").textContent = "";
  try {
    const w = await currentWorkload();
    for (const [i, mode] of modes.entries()) {
      const label = `${MODES[mode].label} (${i + 1} of ${modes.length})`;
      const result = await w.time(mode, (done, total) =>
        progress(`${label}: ${done <= WARMUPS ? `warm-up ${done} of ${WARMUPS}` : `run ${done - WARMUPS} of ${total - WARMUPS}`}`, done, total),
      );
      page.results[mode] = result;
      showResults();
      await showProfile(mode);
    }
    progress("Done.", 1, 1);
  } catch (err) {
    page.error = `${err.name}: ${err.message}`;
    $("run-error").textContent = page.error;
    progress("Stopped by the error below.", 0, 1);
  } finally {
    await tn.synchronize();
    // The matmul kernel is chosen at the first GPU matmul: show it once known.
    if (runtime) showRuntime(runtime);
    page.active = tn.getActiveMemory();
    page.runs++;
    setBusy(false);
    page.state = "ready";
    showMemory();
    showSummary();
    page.text = resultsText();
    if (historyWanted) openHistory();
  }
}

/** Runs a half-precision card action with the page busy; its error shows in the card. */
async function guard(action) {
  if (busy) return;
  setBusy(true, "the half-precision card is running");
  page.state = "running";
  $("half-error").textContent = "";
  try {
    await action();
  } catch (err) {
    $("half-error").textContent = `${err.name}: ${err.message}`;
  } finally {
    await tn.synchronize();
    page.active = tn.getActiveMemory();
    setBusy(false);
    page.state = "ready";
    showMemory();
    showSummary();
  }
}

/** Set when the history panel was opened during a run: it records once the run ends. */
let historyWanted = false;

/** Records and draws the memory history, or says why not yet; an error shows in the panel. */
async function openHistory() {
  historyWanted = false;
  if (!$("history-panel").open) return;
  if (!workload) {
    $("history-info").textContent = "The history records once the inputs are ready: run a mode first.";
    return;
  }
  if (busy) {
    historyWanted = true;
    $("history-info").textContent = "Recording as soon as the current run ends…";
    return;
  }
  setBusy(true, "the memory history is recording");
  $("history-info").textContent = "Recording a GPU-only and a split run…";
  try {
    await recordHistory(workload);
    drawHistory();
  } catch (err) {
    $("history-info").textContent = `The history could not be recorded: ${err.name}: ${err.message}`;
  } finally {
    setBusy(false);
  }
}

/** The results and memory figures as text: what the headless command prints. */
export function resultsText() {
  const lines = [];
  const baseline = page.results.gpu?.median;
  const s = workload?.settings ?? DEFAULTS;
  lines.push(`MLX example: a ${s.m}x${s.k}, b ${s.k}x${s.n}, ${s.iterations} exps; ${s.repetitions} timed runs after ${WARMUPS} warm-ups`);
  lines.push(`${"mode".padEnd(16)}${"median ms".padStart(11)}${"min".padStart(9)}${"max".padStart(9)}${"vs GPU-only".padStart(13)}`);
  for (const r of Object.values(page.results)) {
    const speedup = baseline ? `${(baseline / r.median).toFixed(2)}x` : "-";
    lines.push(`${MODES[r.mode].label.padEnd(16)}${r.median.toFixed(2).padStart(11)}${r.min.toFixed(2).padStart(9)}${r.max.toFixed(2).padStart(9)}${speedup.padStart(13)}`);
  }
  if (page.error) lines.push(`error: ${page.error}`);
  const limit = tn.getMemoryLimit();
  lines.push(
    `memory: active ${formatBytes(tn.getActiveMemory())}, peak ${formatBytes(tn.getPeakMemory())}, ` +
      `cache ${formatBytes(tn.getCacheMemory())}, limit ${Number.isFinite(limit) ? formatBytes(limit) : "none"}`,
  );
  const stats = tn.memoryStats();
  lines.push(
    `copies: ${formatBytes(stats["transfer_bytes.cpu_to_gpu"])} up, ${formatBytes(stats["transfer_bytes.gpu_to_cpu"])} back; ` +
      `${stats.num_alloc_retries} retries, ${stats.num_ooms} limit errors`,
  );
  return lines.join("\n");
}

function setupControls() {
  for (const [key, value] of Object.entries(DEFAULTS)) $(key).value = value;
  for (const button of document.querySelectorAll("button[data-mode]")) {
    button.onclick = () => run([button.dataset.mode]);
  }
  $("run-all").onclick = () => run(Object.keys(MODES));
  $("settings").addEventListener("input", showCode);
  $("settings").addEventListener("submit", (event) => event.preventDefault());
  $("code-mode").addEventListener("change", showCode);
  $("history-panel").addEventListener("toggle", () => openHistory());
  setupWeights(guard);
}

async function main() {
  setupControls();
  showCode();
  showResults();
  const info = await tn.initRuntime();
  runtime = info;
  showRuntime(info);
  // After start-up: a limit from the URL applies before the inputs are drawn.
  setupLimit(() => {
    showMemory();
    showSummary();
  });
  watchMemory();
  startMonitor();
  try {
    await currentWorkload();
  } catch (err) {
    // A limit from the URL below the inputs' size: shown, and the next run tries again.
    page.error = `${err.name}: ${err.message}`;
    $("run-error").textContent = page.error;
  }
  showSummary();
  $("status").textContent = "Ready: pick a mode, or run all four.";
  page.active = tn.getActiveMemory();
  page.state = "ready";
  page.text = resultsText();
}

main().catch((err) => {
  $("status").textContent = `${err.name}: ${err.message}`;
  $("status").className = "error";
  page.error = `${err.name}: ${err.message}`;
  page.state = "error";
  page.text = page.error;
});
