// The memory panel: active, peak and cached bytes against the limit, redrawn every frame (so
// they move while a run goes), the limit control, the transfer counters and memorySummary().
import * as tn from "../pkg/index.js";
import { $, fillKv } from "./dom.js";

export function formatBytes(bytes) {
  if (!Number.isFinite(bytes)) return "none";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}

const UNITS = { "": 1, b: 1, k: 1024, kb: 1024, kib: 1024, m: 2 ** 20, mb: 2 ** 20, mib: 2 ** 20, g: 2 ** 30, gb: 2 ** 30, gib: 2 ** 30 };

/** Bytes from "64MiB", "1.5 GiB", "4096" (bytes) or "" (no limit: Infinity); throws on
 * anything else. */
export function parseBytes(text) {
  const trimmed = String(text).trim();
  if (trimmed === "" || /^(none|infinity)$/i.test(trimmed)) return Infinity;
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(trimmed);
  const unit = match && UNITS[match[2].toLowerCase()];
  if (!unit) throw new Error(`"${text}" is not a size: write it like 64MiB, 512 KiB or 1GiB`);
  const bytes = Math.round(Number(match[1]) * unit);
  if (bytes < 1) throw new Error(`"${text}" is not a size: the limit must be at least 1 byte`);
  return bytes;
}

/** What the gauges have shown: the test checks that they moved during a run. */
export const seen = { frames: 0, activeValues: new Set(), maxActive: 0 };

function gauge(name, bytes, scale, note) {
  const row = document.createElement("div");
  row.className = "gauge";
  const label = document.createElement("span");
  label.className = "gauge-name";
  label.textContent = name;
  const track = document.createElement("span");
  track.className = "gauge-track";
  const fill = document.createElement("span");
  fill.className = `gauge-fill gauge-${name}`;
  fill.style.width = `${Math.min(100, (bytes / scale) * 100)}%`;
  track.append(fill);
  const value = document.createElement("span");
  value.className = "gauge-value";
  value.textContent = formatBytes(bytes) + (note ? ` ${note}` : "");
  row.append(label, track, value);
  return row;
}

/** Redraws the gauges and counters; cheap enough for every animation frame. */
export function showMemory() {
  const active = tn.getActiveMemory();
  const peak = tn.getPeakMemory();
  const cache = tn.getCacheMemory();
  const limit = tn.getMemoryLimit();
  seen.frames++;
  seen.maxActive = Math.max(seen.maxActive, active);
  if (seen.activeValues.size < 64) seen.activeValues.add(active);
  const scale = Number.isFinite(limit) ? limit : Math.max(peak, active + cache, 1);
  const of = Number.isFinite(limit) ? `of ${formatBytes(limit)}` : "";
  $("gauges").replaceChildren(
    gauge("active", active, scale, of),
    gauge("peak", peak, scale, ""),
    gauge("cache", cache, scale, ""),
  );
  $("limit-shown").textContent = Number.isFinite(limit) ? formatBytes(limit) : "no limit";
  const stats = tn.memoryStats();
  fillKv($("counters"), [
    ["on the CPU", formatBytes(stats["active_bytes.cpu.current"])],
    ["on the GPU", formatBytes(stats["active_bytes.gpu.current"])],
    ["uploaded (CPU → GPU)", formatBytes(stats["transfer_bytes.cpu_to_gpu"])],
    ["read back (GPU → CPU)", formatBytes(stats["transfer_bytes.gpu_to_cpu"])],
    ["cache hits / misses", `${stats.num_cache_hits} / ${stats.num_cache_misses}`],
    ["retries / limit errors", `${stats.num_alloc_retries} / ${stats.num_ooms}`],
  ]);
}

export function showSummary() {
  $("summary").textContent = tn.memorySummary();
}

/** Applies a limit from its text; returns the message to show. */
export function applyLimit(text) {
  const bytes = parseBytes(text);
  tn.setMemoryLimit(bytes);
  return Number.isFinite(bytes)
    ? `Limit set to ${formatBytes(bytes)}: a run that needs more flushes, waits, trims the cache and retries, then fails with a MemoryLimitError.`
    : "No limit.";
}

/** The limit control, and `?memoryLimit=64MiB` from the URL. */
export function setupLimit(onChange) {
  const fromUrl = new URLSearchParams(location.search).get("memoryLimit");
  const set = (text) => {
    try {
      $("limit-status").textContent = applyLimit(text);
      $("limit-status").className = "note";
    } catch (err) {
      $("limit-status").textContent = err.message;
      $("limit-status").className = "note error";
    }
    onChange();
  };
  if (fromUrl !== null) {
    $("limit").value = fromUrl;
    set(fromUrl);
  }
  $("limit-form").addEventListener("submit", (event) => {
    event.preventDefault();
    set($("limit").value);
  });
  $("no-limit").onclick = () => {
    $("limit").value = "";
    set("");
  };
  $("clear-cache").onclick = () => {
    tn.clearCache();
    onChange();
  };
}

/** Redraws the gauges every frame while the page is open. */
export function watchMemory() {
  const frame = () => {
    showMemory();
    requestAnimationFrame(frame);
  };
  frame();
}
