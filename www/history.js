// The memory history timeline: the live bytes of one GPU-only run and one split run, by op,
// drawn from memoryHistory() like PyTorch's memory_viz.
import * as tn from "../pkg/index.js";
import { $ } from "./dom.js";
import { formatBytes } from "./memory.js";

// The memory history of one GPU-only run and one split run: alloc and free_completed events become one band per
// block, stacked in allocation order (a block's band drops when one below it is freed), one
// chart per device, with the event index as the time axis (as memory_viz does).
let recorded = [];

/** Records one GPU-only run and one split run of `workload`. */
export async function recordHistory(workload) {
  tn.recordMemoryHistory({ enabled: true, maxEntries: 100000, stacks: true });
  try {
    await workload.once("gpu");
    await workload.once("split");
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

export function drawHistory() {
  const drawn = drawEvents(recorded, { chart: "history", legend: "history-legend", info: "history-info" });
  window.tandemHistory = { state: "drawn", bands: drawn, events: recorded.length };
}

/**
 * Draws `events` (from memoryHistory()) as one chart per device into the element `ids.chart`,
 * a legend of ops into `ids.legend`, and the hovered band's details into `ids.info`. Returns
 * the number of bands drawn. The training page draws its steps with it too.
 */
export function drawEvents(events, ids) {
  const recorded = events;
  const ns = "http://www.w3.org/2000/svg";
  const charts = [];
  let drawn = 0;
  const count = recorded.length;
  for (const device of ["gpu", "cpu"]) {
    const { all, peak } = bands(recorded, device);
    if (all.length === 0) continue;
    const svg = document.createElementNS(ns, "svg");
    const width = $(ids.chart).clientWidth || 700;
    const height = 160;
    // Drawn at the container's width, and scaled with it (a phone turned, a window resized).
    svg.setAttribute("viewBox", `0 0 ${width} ${height + 20}`);
    svg.setAttribute("width", "100%");
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
        $(ids.info).textContent = info;
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
  $(ids.chart).replaceChildren(...charts);
  $(ids.legend).replaceChildren(
    ...[...colours].map(([op, fill]) => {
      const item = document.createElement("span");
      item.className = "legend";
      item.style.setProperty("--swatch", fill);
      item.textContent = op;
      return item;
    }),
  );
  return drawn;
}
