// A compiled function lets go of everything it held: once it is garbage-collected, or at once
// when it is disposed. A page that compiles a function per shape, per component or per request
// must not grow. Run by `cargo xtask test` (Chromium started with --js-flags=--expose-gc),
// reporting through report.js.
import * as tn from "/pkg/index.js";
import { report } from "./report.js";

const COUNT = 20;

// Collects garbage ten times over a second, giving finalizers their turn between.
async function collect() {
  for (let i = 0; i < 10; i++) {
    globalThis.gc();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await tn.synchronize();
}

// Blocks still active, described for a failure report.
function activeBlocks() {
  return tn
    .memorySnapshot()
    .filter((b) => b.state === "active" && b.usage !== "uniform")
    .map((b) => `${b.device} ${b.size} B made by ${b.op}${b.owner ? ` held by ${b.owner}` : ""}`);
}

function check(lines, what, before, after) {
  lines.push(`${what}: active ${before} -> ${after} bytes`);
  if (before !== after) {
    throw new Error(`${lines.join("\n")}\nstill active: ${activeBlocks().join("; ")}`);
  }
}

// The page of the report: COUNT functions, each with its own number, each called once inside
// tidy, its result read and disposed, its input disposed. With `weights`, each function also
// closes over an array of its own, which the page disposes once it has called it: the trace
// holds it then, and memorySnapshot() must say so. The traced arrow shares its scope with the
// one that calls the compiled function, as pages' closures do: a cycle that only the garbage
// collector can see through. Returns the functions made.
async function makeAndCall(o, weights) {
  const fns = [];
  const s = { stream: o };
  for (let i = 0; i < COUNT; i++) {
    const c = 1 + i / 8;
    const w = weights ? tn.array([0.5, 0.25, -0.5, 1]) : null;
    const f = tn.compile((a) => tn.exp(tn.add(tn.multiply(a, c, s), w ?? 0.5, s), s));
    const x = tn.array([0.5, -1, 2, 0.25]);
    const y = tn.tidy(() => f(x));
    const got = await y.toArray();
    const shift = weights ? [0.5, 0.25, -0.5, 1] : [0.5, 0.5, 0.5, 0.5];
    const want = [0.5, -1, 2, 0.25].map((v, k) => Math.exp(v * c + shift[k]));
    if (got.some((v, k) => Math.abs(v - want[k]) > 1e-5 * want[k])) {
      throw new Error(`compile on ${o}: ${got} where ${want} was expected`);
    }
    y.dispose();
    x.dispose();
    w?.dispose();
    fns.push(f);
  }
  // A weight read on the GPU has two copies, a host block and a GPU block.
  const held = tn.memorySnapshot().filter((b) => b.state === "active" && b.owner === "compile");
  const want = weights ? COUNT * (o === "gpu" ? 2 : 1) : 0;
  if (held.length !== want) {
    throw new Error(`compile on ${o}: ${held.length} blocks shown as held by compile, not ${want}`);
  }
  return fns;
}

async function dropped(lines, o, weights) {
  await tn.synchronize();
  const before = tn.getActiveMemory();
  let fns = await makeAndCall(o, weights);
  fns = null;
  await collect();
  const what = weights ? "closing over an array" : "with a number";
  check(lines, `${COUNT} compiled functions on ${o} ${what}, dropped and collected`, before, tn.getActiveMemory());
}

async function disposed(lines, o, weights) {
  await tn.synchronize();
  const before = tn.getActiveMemory();
  const fns = await makeAndCall(o, weights);
  for (const f of fns) f.dispose();
  await tn.synchronize();
  const what = weights ? "closing over an array" : "with a number";
  check(lines, `${COUNT} compiled functions on ${o} ${what}, disposed (no gc)`, before, tn.getActiveMemory());
  const z = tn.zeros([4]);
  let error;
  try {
    fns[0](z);
  } catch (err) {
    error = err;
  }
  z.dispose();
  if (!(error instanceof tn.DisposedArrayError) || !/compile/.test(error.message)) {
    throw new Error(`a disposed compiled function called gave ${error ? `${error.name}: ${error.message}` : "no error"}`);
  }
  fns[0].dispose(); // twice is harmless
}

// 120 compiled random chains of up to 40 ops (numbers among their operands) on both devices,
// each called once and checked against the same chain run plainly, then dropped: memory must
// be back where it started after gc.
async function randomChains(lines) {
  let seed = 7;
  const next = (n) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const unary = [tn.exp, tn.tanh, tn.sin, tn.sigmoid, tn.abs, tn.neg];
  const binary = [tn.add, tn.multiply, tn.subtract, tn.maximum, tn.minimum];
  await tn.synchronize();
  const before = tn.getActiveMemory();
  let fns = [];
  for (let i = 0; i < 120; i++) {
    const s = { stream: i % 2 ? "cpu" : "gpu" };
    const ops = Array.from({ length: 1 + next(40) }, () =>
      next(2) ? [unary[next(unary.length)]] : [binary[next(binary.length)], next(9) / 4 - 1]);
    const chain = (x) => ops.reduce((y, [op, n]) => (n === undefined ? op(y, s) : op(y, n, s)), x);
    const f = tn.compile(chain);
    const x = tn.array(Array.from({ length: 1 + next(64) }, () => next(17) / 8 - 1));
    const [got, want] = await Promise.all([tn.tidy(() => f(x)), tn.tidy(() => chain(x))].map(async (y) => {
      const values = await y.toArray();
      y.dispose();
      return values;
    }));
    x.dispose();
    const differ = got.findIndex((v, k) => !Object.is(v, want[k]));
    if (differ >= 0) {
      throw new Error(`random chain ${i} on ${s.stream}: element ${differ} is ${got[differ]} compiled, ${want[differ]} plain`);
    }
    fns.push(f);
  }
  fns = null;
  await collect();
  check(lines, "120 compiled random chains, the same bits as plain, dropped and collected", before, tn.getActiveMemory());
}

// The function compile returns: [Symbol.dispose] is dispose, and a bad argument to compile is
// a ValueError that names it.
function shape() {
  const f = tn.compile((x) => tn.exp(x));
  if (f[Symbol.dispose] !== f.dispose) throw new Error("compile(fn)[Symbol.dispose] is not its dispose");
  f[Symbol.dispose]();
  const x = tn.zeros([2]);
  try {
    f(x);
    throw new Error("a function disposed through Symbol.dispose still ran");
  } catch (err) {
    if (!(err instanceof tn.DisposedArrayError)) throw err;
  } finally {
    x.dispose();
  }
  try {
    tn.compile(3);
    throw new Error("compile(3) did not throw");
  } catch (err) {
    if (!(err instanceof tn.ValueError) || !/expected a function/.test(err.message)) throw err;
  }
  return "compile(fn)[Symbol.dispose] disposes; compile(3) is a ValueError";
}

// Optimizers and gradient functions left to the garbage collector: an Adam whose state (two
// moments per parameter) the page never disposes, with a schedule closing over it (a cycle
// through the wasm side), and a compiled gradient step; once both are collected, memory is
// back where it started.
async function droppedTraining(lines, o) {
  await tn.synchronize();
  const before = tn.getActiveMemory();
  const s = { stream: o };
  let params = { w: tn.array([[0.5, -0.25], [1, 2]]), b: tn.array([0.1, 0.2]) };
  const x = tn.array([[1, 2], [3, 4]]);
  let adam = new tn.optimizers.Adam({ learningRate: (step) => (adam ? 0.01 / (1 + step) : 0) });
  let step = tn.compile(tn.valueAndGrad((p, x) => tn.sum(tn.square(tn.add(tn.matmul(x, p.w, s), p.b, s), s), s)));
  for (let i = 0; i < 3; i++) {
    const [value, grads] = step(params, x);
    const next = adam.update(params, grads);
    await value.item();
    for (const a of [value, grads.w, grads.b, params.w, params.b]) a.dispose();
    params = next;
  }
  for (const a of [params.w, params.b, x]) a.dispose();
  adam = null;
  step = null;
  await collect();
  check(lines, `an Adam and a compiled gradient step on ${o}, dropped and collected`, before, tn.getActiveMemory());
}

async function main() {
  if (typeof globalThis.gc !== "function") throw new Error("this page needs --js-flags=--expose-gc");
  await tn.initRuntime();
  const lines = [shape()];
  for (const o of ["gpu", "cpu"]) {
    for (const weights of [false, true]) {
      await dropped(lines, o, weights);
      await disposed(lines, o, weights);
    }
  }
  await randomChains(lines);
  for (const o of ["gpu", "cpu"]) await droppedTraining(lines, o);
  return lines.join("\n");
}

report(main);
