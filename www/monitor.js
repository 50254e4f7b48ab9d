// The monitor: smi() once a second, as `nvidia-smi -l 1` prints, with the GPU's utilization
// over the last minute as a sparkline.
import * as tn from "../pkg/index.js";
import { sparkline } from "./charts.js";
import { $, fillKv } from "./dom.js";
const FIELDS = [
  ["name", "name"],
  ["utilization.gpu", "utilization"],
  ["memory.used", "memory used"],
  ["memory.total", "memory total"],
  ["memory.free", "memory free"],
  ["pstate", "performance state"],
  ["temperature.gpu", "temperature"],
];
const UNITS = { "utilization.gpu": " %", "memory.used": " MiB", "memory.total": " MiB", "memory.free": " MiB" };
const HISTORY = 60;

/** Samples so far (the test reads how many). */
export const samples = [];

function sample() {
  const s = tn.smi({ periodMs: 1000 });
  const utilization = typeof s["utilization.gpu"] === "number" ? s["utilization.gpu"] : 0;
  samples.push(utilization);
  if (samples.length > HISTORY) samples.shift();
  fillKv(
    $("smi"),
    FIELDS.map(([field, name]) => {
      const value = s[field];
      return [name, typeof value === "number" ? `${value}${UNITS[field] ?? ""}` : String(value)];
    }),
  );
  $("smi-now").textContent = `${utilization} %`;
  sparkline($("smi-spark"), samples, 100);
}

export function startMonitor() {
  sample();
  setInterval(sample, 1000);
}
