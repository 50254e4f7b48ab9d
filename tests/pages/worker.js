// Runs tandem in a module Web Worker for tests/pages/worker.html: initRuntime in the worker,
// an add on its gpu stream (on the CPU where the worker has no WebGPU), the values and the
// worker's own memory figures posted back.
import * as tn from "/pkg/index.js";

self.onmessage = async () => {
  try {
    const info = await tn.initRuntime();
    const before = tn.getActiveMemory();
    const a = tn.array([1, 2, 3]);
    const b = tn.array([10, 20, 30]);
    const c = tn.add(a, b, { stream: "gpu" });
    const sum = Array.from(await c.toArray());
    for (const x of [a, b, c]) x.dispose();
    await tn.synchronize();
    self.postMessage({ ok: true, gpu: info.gpu, sum, before, after: tn.getActiveMemory() });
  } catch (err) {
    self.postMessage({ ok: false, error: `${err.name}: ${err.message}` });
  }
};
