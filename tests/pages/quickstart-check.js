// Runs examples/quickstart.js (the README's quick start, word for word) as a plain module page
// does, catching what it logs, and checks the logged values and that it leaves no array behind
// (active memory back where it was once it is done); first checks that a call made
// before the wasm is loaded throws an Error that says what to do. Reports through report.js.
import { report } from "./report.js";

const logged = [];
const log = console.log;

async function main() {
  // Before initRuntime(): a clear error, not a failure inside the glue.
  const tn = await import("tandem");
  let early;
  try {
    tn.array([1, 2, 3]);
  } catch (err) {
    early = err;
  }
  const isDeviceError = early instanceof tn.DeviceError && !(early instanceof tn.ShapeError);
  if (!isDeviceError || !early.message.includes("initRuntime")) {
    throw new Error(`a call before initRuntime() gave ${early ? `${early.name}: ${early.message}` : "no error"}`);
  }
  // The quick start's own initRuntime() returns this runtime: its figures start here.
  await tn.initRuntime();
  await tn.synchronize();
  const before = tn.getActiveMemory();
  console.log = (...args) => logged.push(args);
  try {
    await import("/examples/quickstart.js");
  } finally {
    console.log = log;
  }
  await tn.synchronize();
  const after = tn.getActiveMemory();
  if (after !== before) {
    throw new Error(`the quick start left ${after - before} bytes active (${before} before, ${after} after)`);
  }
  const [runtime, sum, total] = logged;
  const expected = [11, 22, 33, 14, 25, 36];
  if (!(sum[0] instanceof Float32Array) || sum[0].join() !== expected.join()) {
    throw new Error(`the quick start logged ${sum[0]}, not [${expected}]`);
  }
  // The error classes test the name of what tandem throws.
  let shape;
  try {
    tn.add(tn.zeros([2, 3]), tn.zeros([4]));
  } catch (err) {
    shape = err;
  }
  if (!(shape instanceof tn.ShapeError) || shape instanceof tn.ValueError) {
    throw new Error(`a broadcast mismatch gave ${shape?.name}: ${shape?.message}`);
  }
  const exact = expected.reduce((s, v) => s + Math.exp(v * 0.01), 0);
  if (Math.abs(total[0] - exact) > 1e-5 * exact) {
    throw new Error(`the quick start's sum is ${total[0]}, not ${exact}`);
  }
  return [
    `before initRuntime(): ${early.name}: ${early.message}`,
    `shapes that do not broadcast: instanceof ShapeError: ${shape.message}`,
    `${runtime.join(" ")}`,
    `c = [${Array.from(sum[0])}]`,
    `sum of exp(c / 100) = ${total[0]} (exact: ${exact.toFixed(6)})`,
    `active memory after the quick start: ${after} bytes, as before it`,
  ].join("\n");
}

report(main);
