// Runs tandem in a module Web Worker for tests/pages/worker.html: initRuntime in the worker,
// an add on its gpu stream (on the CPU where the worker has no WebGPU), a matmul on its cpu
// stream large enough to split over the CPU pool (the threaded build's workers, started from
// this worker, where it is cross-origin isolated), the values, the worker's threads and its
// own memory figures posted back.
import * as tn from "/pkg/index.js";

// f32x4.relaxed_madd in a module of one function: whether this engine has relaxed SIMD, asked
// apart from the package, which should then have loaded its relaxed variant.
const RELAXED_MADD = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x01, 0x60, 0x03, 0x7b, 0x7b,
  0x7b, 0x01, 0x7b, 0x03, 0x02, 0x01, 0x00, 0x0a, 0x0d, 0x01, 0x0b, 0x00, 0x20, 0x00, 0x20,
  0x01, 0x20, 0x02, 0xfd, 0x85, 0x02, 0x0b,
]);

self.onmessage = async () => {
  try {
    // Each step is posted, so that a worker that stops says where (worker-check.js).
    self.postMessage({ step: "initRuntime" });
    const info = await tn.initRuntime();
    self.postMessage({ step: "the add" });
    const before = tn.getActiveMemory();
    const a = tn.array([1, 2, 3]);
    const b = tn.array([10, 20, 30]);
    const c = tn.add(a, b, { stream: "gpu" });
    const sum = Array.from(await c.toArray());
    for (const x of [a, b, c]) x.dispose();
    // Every element of ones(200, 300) @ ones(300, 100) is 300, exactly.
    const [p, q] = [tn.ones([200, 300]), tn.ones([300, 100])];
    self.postMessage({ step: "the matmul" });
    const product = tn.matmul(p, q, { stream: "cpu" });
    const values = await product.toArray();
    const matmulOk = values.length === 20000 && values.every((v) => v === 300);
    for (const x of [p, q, product]) x.dispose();
    self.postMessage({ step: "synchronize" });
    await tn.synchronize();
    self.postMessage({
      ok: true,
      gpu: info.gpu,
      sum,
      matmulOk,
      threads: info.threads,
      relaxedEngine: WebAssembly.validate(RELAXED_MADD),
      isolated: self.crossOriginIsolated === true,
      sharedMemory: typeof SharedArrayBuffer === "function",
      before,
      after: tn.getActiveMemory(),
    });
  } catch (err) {
    self.postMessage({ ok: false, error: `${err.name}: ${err.message}` });
  }
};
