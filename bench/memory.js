// The allocator's reuse policies on one mixed-size workload: 2,000 steps, each allocating a
// raw GPU block of a random size from 1 KiB to 8 MiB (log-uniform) that lives a random 1 to 32
// steps. The same seeded sequence runs under each policy. `cargo xtask bench memory` reads
// the table through common.js.
import * as tn from "../pkg/index.js";
import { adapterLine, median, report } from "./common.js";

const STEPS = 2000;
const MIN_BYTES = 1024;
const MAX_BYTES = 8 << 20;
const MAX_LIFE = 32;
const RUNS = 3;
// [label, policy, cache limit in bytes or null for the default].
const POLICIES = [
  ["best-fit", "best-fit", null],
  ["exact", "exact", null],
  ["none", "none", null],
  ["best-fit, cache 64 MiB", "best-fit", 64 << 20],
];

// A small seeded generator (mulberry32), so every policy sees the same requests.
function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// The workload's requests: [bytes, the step at which the block is freed].
function requests(seed) {
  const random = generator(seed);
  const span = Math.log(MAX_BYTES / MIN_BYTES);
  return Array.from({ length: STEPS }, (_, step) => {
    const bytes = Math.round(MIN_BYTES * Math.exp(random() * span));
    const life = 1 + Math.floor(random() * MAX_LIFE);
    return [bytes, step + life];
  });
}

// Runs the workload; resolves to its wall time. Blocks are freed at the end of their step,
// after a synchronize: WebGPU confirms a buffer's creation asynchronously, and a freed
// buffer is handed out again only once confirmed (see docs/memory-api-map.md).
async function workload(plan) {
  const live = [];
  const start = performance.now();
  for (let step = 0; step < STEPS; step++) {
    const [bytes, until] = plan[step];
    live.push([tn.cachingAllocatorAlloc(bytes, { stream: "gpu" }), until]);
    await tn.synchronize();
    for (let i = live.length - 1; i >= 0; i--) {
      if (live[i][1] <= step) {
        tn.cachingAllocatorDelete(live[i][0]);
        live.splice(i, 1);
      }
    }
  }
  for (const [block] of live) tn.cachingAllocatorDelete(block);
  return performance.now() - start;
}

async function measure(policy, cacheLimit, plan) {
  tn.emptyCache();
  tn.changeCurrentAllocator(policy);
  const previousLimit = cacheLimit === null ? null : tn.setCacheLimit(cacheLimit);
  const rows = [];
  for (let run = 0; run < RUNS; run++) {
    tn.emptyCache();
    tn.resetPeakMemoryStats();
    const before = tn.memoryStats();
    const ms = await workload(plan);
    const after = tn.memoryStats();
    rows.push({
      allocations: after["num_device_alloc"] - before["num_device_alloc"],
      hits: after["num_cache_hits"] - before["num_cache_hits"],
      peakReserved: after["reserved_bytes.gpu.peak"],
      peakAllocated: after["allocated_bytes.gpu.peak"],
      ms,
    });
  }
  if (previousLimit !== null) tn.setCacheLimit(previousLimit);
  // Counts are the same every run; the time is the median.
  return { ...rows[0], ms: median(rows.map((r) => r.ms)) };
}

const mib = (bytes) => (bytes / (1 << 20)).toFixed(1);

async function main() {
  const info = await tn.initRuntime({ requireGpu: true });
  const plan = requests(17);
  const requested = plan.reduce((sum, [bytes]) => sum + bytes, 0);
  const lines = [
    adapterLine(info, "none"),
    `workload: ${STEPS} raw GPU blocks, ${MIN_BYTES >> 10} KiB–${MAX_BYTES >> 20} MiB log-uniform, ` +
      `living 1–${MAX_LIFE} steps; ${mib(requested)} MiB requested in all; median of ${RUNS} runs`,
    "",
    "policy                 | device allocations | cache hits | peak allocated MiB | peak reserved MiB | reserved / allocated | time ms",
    "-----------------------|-------------------:|-----------:|-------------------:|------------------:|---------------------:|--------:",
  ];
  for (const [label, policy, cacheLimit] of POLICIES) {
    let r;
    try {
      r = await measure(policy, cacheLimit, plan);
    } catch (err) {
      lines.push(`${label.padEnd(22)} | ${err.name}: ${err.message}`);
      throw new Error(lines.join("\n"));
    }
    lines.push(
      `${label.padEnd(22)} | ${String(r.allocations).padStart(18)} | ${String(r.hits).padStart(10)} | ` +
        `${mib(r.peakAllocated).padStart(18)} | ${mib(r.peakReserved).padStart(17)} | ` +
        `${(r.peakReserved / r.peakAllocated).toFixed(2).padStart(19)}x | ${r.ms.toFixed(0).padStart(7)}`,
    );
  }
  tn.emptyCache();
  tn.changeCurrentAllocator("best-fit");
  lines.push(
    "",
    "cache limit: the default 1 GiB, except where a row names one; sizes are rounded to 256 B",
    "under 1 MiB and to 64 KiB above; best-fit carves requests out of cached buffers (2 MiB ones",
    "for requests under 1 MiB), exact and none give each request a buffer of its own",
  );
  return lines.join("\n");
}

report(main);
