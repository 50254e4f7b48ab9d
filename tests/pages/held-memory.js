// Issue 29's acceptance, as a page runs it through the built package: the two programs of
// repros/active-after-dispose.js (a page's program that left blocks active after every
// array was disposed, and the same cut down), three times each in one page, must end with
// active bytes where they started and no active block but the runtime's own; and 1,000 ops
// with a JS number operand must make at most 2 GPU buffers. `cargo xtask test` opens this page
// and reads window.tandemPage ({state, text}), in Chromium and, with `?without-webgpu`, in
// Firefox ESR.
import * as tn from "/pkg/index.js";
import { minimal, run } from "./repros/active-after-dispose.js";
import { report } from "./report.js";

// Active blocks that no array or raw block of the page holds: the runtime's own uniform
// buffers (its parameter ring) are the only ones allowed.
function strayBlocks() {
  return tn
    .memorySnapshot()
    .filter((b) => b.state === "active" && b.usage !== "uniform")
    .map((b) => `${b.device} ${b.usage ?? "host"} ${b.size} B made by ${b.op}`);
}

async function repros(lines) {
  for (const [name, program] of [["run", run], ["minimal", minimal]]) {
    for (let round = 1; round <= 3; round++) {
      const { before, after } = await program(tn);
      const stray = strayBlocks();
      const ok = before === after && stray.length === 0;
      lines.push(`${name} #${round}: active ${before} -> ${after} bytes${ok ? "" : " LEAK"}`);
      if (!ok) throw new Error(`${lines.join("\n")}\nactive blocks: ${stray.join("; ")}`);
    }
  }
}

async function scalarLoop(lines) {
  for (const stride of ["dense", "strided"]) {
    const made = tn.randomUniform([1024, 1024], { stream: "gpu" });
    const base = stride === "dense" ? made : tn.transpose(made, { stream: "gpu" });
    await tn.evaluate(base);
    const before = tn.memoryStats()["num_device_alloc"];
    for (let i = 0; i < 1000; i++) {
      const a = tn.multiply(base, i, { stream: "gpu" });
      await tn.evaluate(a);
      a.dispose();
    }
    const grown = tn.memoryStats()["num_device_alloc"] - before;
    lines.push(`1,000 x multiply(${stride} 4 MiB, i): ${grown} new GPU buffers`);
    if (grown > 2) throw new Error(`${lines.join("\n")}\nmore than 2 GPU buffers`);
    base.dispose();
    made.dispose();
  }
}

async function main() {
  // `?without-webgpu`: a browser without WebGPU (Firefox ESR), where the `gpu` device runs on
  // the CPU; the repros still hold, and GPU buffers are not there to count.
  const withoutGpu = new URLSearchParams(location.search).has("without-webgpu");
  const info = await tn.initRuntime({ requireGpu: !withoutGpu });
  const lines = [];
  await repros(lines);
  if (info.gpu) {
    await scalarLoop(lines);
  } else {
    lines.push("no WebGPU: the repros ran on the CPU path; GPU buffers are not counted");
  }
  await tn.synchronize();
  const stray = strayBlocks();
  if (stray.length) throw new Error(`${lines.join("\n")}\nactive blocks at the end: ${stray.join("; ")}`);
  return lines.join("\n");
}

report(main);
