// tandem in a module Web Worker (worker.js): it loads the package there, adds on the worker's
// gpu stream, multiplies on its cpu stream, loads the build its isolation allows, and leaves no
// memory behind in the worker. Run by `cargo xtask test` in Chromium
// and Firefox ESR, reporting through report.js.
import { report } from "./report.js";

async function main() {
  const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
  const reply = await new Promise((resolve, reject) => {
    // A worker that stops is reported with the step it was in, well before the test's own
    // time limit.
    let step = "its start";
    setTimeout(() => reject(new Error(`the worker stopped in ${step}`)), 120_000);
    worker.onmessage = ({ data }) => {
      if (data.step) step = data.step;
      else resolve(data);
    };
    worker.onerror = (event) => reject(new Error(`the worker failed: ${event.message}`));
    worker.postMessage(null);
  });
  worker.terminate();
  if (!reply.ok) throw new Error(`in the worker: ${reply.error}`);
  if (reply.sum.join() !== "11,22,33") throw new Error(`the worker computed [${reply.sum}]`);
  if (!reply.matmulOk) throw new Error("the worker's cpu matmul of ones is not 300 everywhere");
  // The threaded build needs isolation and SharedArrayBuffer (which WebKit's workers lack).
  const build = reply.isolated && reply.sharedMemory ? "threaded" : "single-threaded";
  if (reply.threads?.build !== build) {
    const where = `isolated: ${reply.isolated}, SharedArrayBuffer: ${reply.sharedMemory}`;
    throw new Error(`the worker (${where}) runs ${JSON.stringify(reply.threads)}`);
  }
  if (reply.threads.relaxedSimd !== reply.relaxedEngine) {
    throw new Error(
      `the engine ${reply.relaxedEngine ? "has" : "lacks"} relaxed SIMD, and the worker loaded ` +
        `the module ${reply.threads.relaxedSimd ? "with" : "without"} it`,
    );
  }
  if (reply.after !== reply.before) {
    throw new Error(`the worker's active memory went ${reply.before} -> ${reply.after} bytes`);
  }
  return [
    `a module Web Worker ran add([1, 2, 3], [10, 20, 30]) on its gpu stream: [${reply.sum.join(", ")}]`,
    `WebGPU in the worker: ${reply.gpu ? "yes" : "no (the gpu stream ran on the CPU)"}`,
    `a 200x300 by 300x100 matmul on its cpu stream: 300 everywhere`,
    `its threads: ${reply.threads.count}, ${reply.threads.build} (${reply.threads.reason})`,
    `relaxed SIMD: ${reply.threads.relaxedSimd ? "yes, the relaxed variant loaded" : "no, the plain module loaded"}`,
    `the worker's active memory: ${reply.before} -> ${reply.after} bytes`,
  ].join("\n");
}

report(main);
