// The training page: a residual MLP learns three spirals live, with Adam, while the page
// shows the loss, the memory history of a recent step (the forward pass's rise and the
// backward pass's fall, by op), the active, peak and cache gauges, the peak a step takes with
// and without tn.checkpoint, the memory limit, and steps per second.
//
// It reports on window.tandemTrain, which `cargo xtask demo --headless` and the end-to-end test
// read: {state: "starting" | "ready" | "training" | "error", steps, losses, accuracy, peaks,
// history, error, device, checkpoint}.
import * as tn from "../pkg/index.js";
import { $ } from "./dom.js";
import { drawEvents } from "./history.js";
import { formatBytes, setupLimit, showMemory, watchMemory } from "./memory.js";
import { SHAPE, disposeTree, initParams, logits, loss, spirals } from "./model.js";

const page = {
  state: "starting",
  steps: 0,
  losses: [],
  accuracy: null,
  // A step's peak above what was active before it, by device, plain and checkpointed.
  peaks: { cpu: { plain: null, checkpoint: null }, gpu: { plain: null, checkpoint: null } },
  history: null,
  error: null,
  device: null,
  checkpoint: false,
  stepsPerSecond: null,
};
window.tandemTrain = page;

/** How often a step's memory history is recorded and drawn. */
const HISTORY_EVERY = 10;
let data = null;
let params = null;
let optimizer = null;
let running = false;
const stepTimes = [];

function settings() {
  return { device: $("device").value, checkpoint: $("checkpoint").checked };
}

function resetModel() {
  if (params) disposeTree(params);
  params = initParams();
  optimizer?.reset();
  // A warm-up of 20 steps, then a cosine decay: Adam's first steps move every weight by
  // about the learning rate, which at full rate throws a fresh residual stack's loss up.
  const { joinSchedules, linearSchedule, cosineDecay } = tn.optimizers;
  const learningRate = joinSchedules([linearSchedule(1e-4, 3e-3, 20), cosineDecay(3e-3, 2000, 3e-4)], [20]);
  optimizer = new tn.optimizers.Adam({ learningRate });
  page.steps = 0;
  page.losses = [];
  page.accuracy = null;
  stepTimes.length = 0;
  drawLoss();
}

/** One step: the loss and its gradients, then Adam's update; returns the loss and the step's peak above what was active before it. */
async function step({ device, checkpoint }, record) {
  await tn.synchronize();
  const before = tn.getActiveMemory();
  tn.resetPeakMemory();
  if (record) tn.recordMemoryHistory({ enabled: true, maxEntries: 50000 });
  try {
    const f = (p) => loss(p, data.x, data.labels, checkpoint, device);
    const [value, grads] = tn.valueAndGrad(f)(params);
    const next = optimizer.update(params, grads);
    await tn.evaluate(value, next);
    const peak = tn.getPeakMemory() - before;
    disposeTree(grads);
    disposeTree(params);
    params = next;
    const lossValue = await value.item();
    value.dispose();
    return { loss: lossValue, peak };
  } finally {
    if (record) {
      page.history = tn.memoryHistory();
      tn.recordMemoryHistory({ enabled: false });
    }
  }
}

async function accuracy(device) {
  const z = logits(params, data.x, false, device);
  const guess = tn.argmax(z, { axis: 1, stream: device });
  const got = await guess.toArray();
  z.dispose();
  guess.dispose();
  let right = 0;
  got.forEach((c, i) => (right += c === data.classOf[i] ? 1 : 0));
  return right / got.length;
}

async function train() {
  running = true;
  page.state = "training";
  $("start").textContent = "Pause";
  $("train-error").textContent = "";
  try {
    while (running) {
      const now = settings();
      page.device = now.device;
      page.checkpoint = now.checkpoint;
      const record = page.steps % HISTORY_EVERY === 0;
      const t0 = performance.now();
      const { loss: value, peak } = await step(now, record);
      stepTimes.push(performance.now() - t0);
      if (stepTimes.length > 20) stepTimes.shift();
      page.steps++;
      page.losses.push(value);
      page.peaks[now.device][now.checkpoint ? "checkpoint" : "plain"] = peak;
      if (page.steps % 10 === 0) page.accuracy = await accuracy(now.device);
      if (record) drawStepHistory();
      showProgress();
      // Let the page paint and take input between steps.
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  } catch (err) {
    page.error = `${err.name}: ${err.message}`;
    $("train-error").textContent = `${page.error}. Raise or lift the limit and press Train.`;
  } finally {
    running = false;
    page.state = "ready";
    $("start").textContent = "Train";
  }
}

function showProgress() {
  const mean = stepTimes.reduce((a, b) => a + b, 0) / stepTimes.length;
  page.stepsPerSecond = 1000 / mean;
  $("steps").textContent = String(page.steps);
  $("loss-now").textContent = page.losses.at(-1).toFixed(4);
  $("accuracy").textContent = page.accuracy === null ? "…" : `${(page.accuracy * 100).toFixed(1)} %`;
  $("rate").textContent = page.stepsPerSecond.toFixed(1);
  const { plain, checkpoint } = page.peaks[page.device];
  $("peak-plain").textContent = plain === null ? "not run yet" : formatBytes(plain);
  $("peak-checkpoint").textContent = checkpoint === null ? "not run yet" : formatBytes(checkpoint);
  $("peak-saving").textContent =
    plain !== null && checkpoint !== null ? `${((checkpoint / plain) * 100).toFixed(0)} % of the plain step's peak` : "";
  drawLoss();
}

function drawLoss() {
  const svg = $("loss-chart");
  const width = svg.clientWidth || 600;
  const height = 180;
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  const values = page.losses;
  if (values.length < 2) {
    svg.replaceChildren();
    return;
  }
  const max = Math.max(...values);
  const x = (i) => 40 + (i / (values.length - 1)) * (width - 50);
  const y = (v) => height - 20 - (v / max) * (height - 30);
  const ns = "http://www.w3.org/2000/svg";
  const line = document.createElementNS(ns, "polyline");
  line.setAttribute("points", values.map((v, i) => `${x(i)},${y(v)}`).join(" "));
  line.setAttribute("class", "loss-line");
  const top = document.createElementNS(ns, "text");
  top.setAttribute("x", 0);
  top.setAttribute("y", 14);
  top.textContent = max.toFixed(2);
  const axis = document.createElementNS(ns, "text");
  axis.setAttribute("x", 40);
  axis.setAttribute("y", height - 4);
  axis.textContent = `${values.length} steps →`;
  svg.replaceChildren(line, top, axis);
}

function drawStepHistory() {
  // The training device's allocations and frees: the step's rise and fall on one axis.
  const events = (page.history ?? []).filter(
    (e) => e.device === page.device && (e.action === "alloc" || e.action === "free_completed"),
  );
  const bands = drawEvents(events, { chart: "step-history", legend: "step-legend", info: "step-info" });
  const ops = [...new Set(events.filter((e) => e.action === "alloc").map((e) => e.op))];
  page.historyDrawn = { bands, events: events.length, ops };
}

function setupControls() {
  $("start").onclick = () => {
    if (running) running = false;
    else train();
  };
  $("reset").onclick = () => {
    if (!running) resetModel();
  };
  setupLimit(() => showMemory());
}

async function main() {
  const info = await tn.initRuntime();
  $("adapter").textContent = info.gpu ? `${info.adapter?.description || "WebGPU"}${info.adapter?.isFallbackAdapter ? " (software)" : ""}` : "no WebGPU: CPU only";
  $("device").value = tn.defaultDevice();
  $("shape").textContent = `${SHAPE.points * SHAPE.classes} points, width ${SHAPE.width}, ${SHAPE.blocks} blocks of inner width ${SHAPE.inner}`;
  data = spirals();
  resetModel();
  setupControls();
  watchMemory();
  page.state = "ready";
  if (new URLSearchParams(location.search).has("autostart")) train();
}

main().catch((err) => {
  page.state = "error";
  page.error = `${err.name}: ${err.message}`;
  $("train-error").textContent = page.error;
});
