// The page's charts, drawn as SVG: each repetition's time per mode, what ran where in one run,
// and a sparkline. No library: a few shapes each, and they scale with the page.

const NS = "http://www.w3.org/2000/svg";

/** Mode colours, shared with the results table's swatches (style.css). */
export const COLOURS = { gpu: "#2563eb", split: "#16a34a", cpu: "#d97706", compiled: "#9333ea" };

export function el(name, attributes = {}, text) {
  const node = document.createElementNS(NS, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A round step (1, 2 or 5 times a power of ten) that splits `max` into about `count` ticks. */
function tickStep(max, count) {
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((f) => f * power).find((s) => s >= raw);
}

function sizeOf(svg, fallbackWidth, height) {
  const width = Math.max(240, svg.clientWidth || svg.parentElement?.clientWidth || fallbackWidth);
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("height", height);
  return width;
}

/** Each repetition's time, one line per mode in `results` ({mode: {times}}). */
export function drawRuns(svg, results, labels) {
  const height = 190;
  const width = sizeOf(svg, 560, height);
  const modes = Object.keys(results);
  if (modes.length === 0) {
    svg.replaceChildren(el("text", { x: width / 2, y: height / 2, class: "empty" }, "Each run's time shows here."));
    return;
  }
  const max = Math.max(...modes.flatMap((m) => results[m].times)) * 1.1;
  const count = Math.max(...modes.map((m) => results[m].times.length));
  const left = 44, right = 12, top = 12, bottom = 30;
  const x = (i) => left + (count > 1 ? (i / (count - 1)) * (width - left - right) : (width - left - right) / 2);
  const y = (ms) => top + (1 - ms / max) * (height - top - bottom);
  const shapes = [];
  const step = tickStep(max, 4);
  for (let t = 0; t <= max; t += step) {
    shapes.push(el("line", { x1: left, x2: width - right, y1: y(t), y2: y(t), class: "grid" }));
    shapes.push(el("text", { x: left - 6, y: y(t) + 4, class: "tick", "text-anchor": "end" }, String(+t.toFixed(3))));
  }
  shapes.push(el("text", { x: 4, y: top + 4, class: "tick" }, "ms"));
  shapes.push(el("text", { x: width - right, y: height - 6, class: "tick", "text-anchor": "end" }, `repetition (1-${count}) →`));
  for (const mode of modes) {
    const points = results[mode].times.map((ms, i) => [x(i), y(ms)]);
    shapes.push(el("polyline", { points: points.map((p) => p.join(",")).join(" "), stroke: COLOURS[mode], class: "series" }));
    results[mode].times.forEach((ms, i) => {
      const dot = el("circle", { cx: points[i][0], cy: points[i][1], r: 3, fill: COLOURS[mode] });
      dot.append(el("title", {}, `${labels[mode]}, run ${i + 1}: ${ms.toFixed(2)} ms`));
      shapes.push(dot);
    });
  }
  svg.replaceChildren(...shapes);
}

/** Shades of a lane's colour, one per op name, so that neighbouring bars of different ops part. */
const SHADES = { gpu: ["#2563eb", "#60a5fa", "#1e40af", "#93c5fd"], cpu: ["#16a34a", "#4ade80", "#166534", "#86efac"] };
function shade(lane, op, seen) {
  if (!seen.has(op)) seen.set(op, SHADES[lane][seen.size % SHADES[lane].length]);
  return seen.get(op);
}

/** Dispatches of a batch laid end to end from its submit, each as long as its timestamps say
 * (the batch's span without them). */
function gpuBars(report) {
  const bars = [];
  for (const batch of report.gpu) {
    const timed = batch.dispatches.every((d) => d.ms !== null);
    if (!timed) {
      const end = batch.gpuMs === null ? batch.doneMs : batch.submitMs + batch.gpuMs;
      const names = [...new Set(batch.dispatches.map((d) => d.op))].join(", ");
      bars.push({ start: batch.submitMs, end, op: "batch", label: `${batch.dispatches.length} dispatches (${names}), submit to done` });
      continue;
    }
    let at = batch.submitMs;
    for (const d of batch.dispatches) {
      bars.push({ start: at, end: at + d.ms, op: d.op, label: `${d.op} [${d.shape.join("x")}]: ${d.kernel}, ${d.ms.toFixed(3)} ms on the GPU` });
      at += d.ms;
    }
  }
  return bars;
}

/** What ran where in one profiled run: a lane per device with a bar per op, the copies between
 * them marked; hovering a bar names it in `tip`. Returns figures for the note under it. */
export function drawTimeline(svg, report, tip) {
  const height = 132;
  const width = sizeOf(svg, 560, height);
  const gpu = gpuBars(report);
  const cpu = report.cpu.map((s) => ({
    start: s.startMs,
    end: s.endMs,
    op: s.op,
    label: `${s.op} [${s.shape.join("x")}] on the CPU, ${(s.endMs - s.startMs).toFixed(3)} ms`,
  }));
  const moves = report.transfers.map((t) => ({ start: t.atMs, end: t.atMs, label: `${t.bytes} bytes to the ${t.to}` , to: t.to }));
  const all = [...gpu, ...cpu, ...moves];
  if (all.length === 0) {
    svg.replaceChildren(el("text", { x: width / 2, y: height / 2, class: "empty" }, "Nothing ran."));
    return null;
  }
  const t0 = Math.min(...all.map((b) => b.start));
  const t1 = Math.max(...all.map((b) => b.end));
  const left = 64, right = 10;
  const x = (t) => left + ((t - t0) / (t1 - t0 || 1)) * (width - left - right);
  const shapes = [];
  const show = (label) => () => { tip.textContent = label; };
  const lane = (name, bars, y, cls) => {
    shapes.push(el("text", { x: 0, y: y + 15, class: "lane" }, name));
    shapes.push(el("line", { x1: left, x2: width - right, y1: y + 22, y2: y + 22, class: "grid" }));
    const ops = new Map();
    for (const bar of bars) {
      // A pixel's gap between bars that touch, where they are wide enough to spare it.
      const w = x(bar.end) - x(bar.start);
      const fill = shade(cls === "gpu-bar" ? "gpu" : "cpu", bar.op, ops);
      const rect = el("rect", { x: x(bar.start), y, width: Math.max(1, w > 3 ? w - 1 : w), height: 22, class: cls, fill });
      rect.append(el("title", {}, bar.label));
      rect.addEventListener("mouseenter", show(bar.label));
      shapes.push(rect);
    }
  };
  lane("GPU", gpu, 8, "gpu-bar");
  lane("CPU", cpu, 44, "cpu-bar");
  shapes.push(el("text", { x: 0, y: 96, class: "lane" }, "copies"));
  for (const m of moves) {
    const cx = x(m.start);
    const arrow = m.to === "gpu" ? `${cx - 5},100 ${cx + 5},100 ${cx},88` : `${cx - 5},88 ${cx + 5},88 ${cx},100`;
    const mark = el("polygon", { points: arrow, class: "transfer" });
    mark.append(el("title", {}, m.label));
    mark.addEventListener("mouseenter", show(m.label));
    shapes.push(mark);
  }
  const step = tickStep(t1 - t0 || 1, 5);
  for (let t = 0; t <= t1 - t0; t += step) {
    shapes.push(el("text", { x: x(t0 + t), y: height - 6, class: "tick", "text-anchor": "middle" }, `${+t.toFixed(2)}`));
  }
  shapes.push(el("text", { x: width - right, y: height - 18, class: "tick", "text-anchor": "end" }, "ms →"));
  svg.replaceChildren(...shapes);
  const timed = report.gpu.length > 0 && report.gpu.every((b) => b.gpuMs !== null);
  const busy = timed ? report.gpu.reduce((s, b) => s + b.gpuMs, 0) : null;
  const cpuBusy = cpu.reduce((s, b) => s + (b.end - b.start), 0);
  return { spanMs: t1 - t0, gpuBusyMs: busy, cpuBusyMs: cpuBusy, cpuOps: cpu.length, dispatches: gpu.length, copies: moves.length };
}

/** A line of `values` scaled to `max`, newest on the right. */
export function sparkline(svg, values, max) {
  const height = 40;
  const width = sizeOf(svg, 200, height);
  const n = Math.max(2, values.length);
  const points = values.map((v, i) => `${(i / (n - 1)) * width},${height - 2 - (v / max) * (height - 4)}`);
  svg.replaceChildren(
    el("line", { x1: 0, x2: width, y1: height - 2, y2: height - 2, class: "grid" }),
    el("polyline", { points: points.join(" "), class: "spark" }),
  );
}
