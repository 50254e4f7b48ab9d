// Runs tandem in a module Web Worker for the demo page: the same add as the page, reported
// back with postMessage.
import * as tn from "../pkg/index.js";

self.onmessage = async () => {
  try {
    const info = await tn.initRuntime();
    const c = tn.add(tn.array([1, 2, 3]), tn.array([10, 20, 30]), { stream: "gpu" });
    self.postMessage({ ok: true, gpu: info.gpu, sum: Array.from(await c.toArray()) });
  } catch (err) {
    self.postMessage({ ok: false, error: `${err.name}: ${err.message}` });
  }
};
