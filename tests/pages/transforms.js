// The function transforms and the optimizers as a page calls them through the built package:
// grad, valueAndGrad (with [loss, aux]), vjp, jvp, vmap, checkpoint, stopGradient and compile
// over trees, on both devices, against values worked by hand; tn.optimizers against MLX's
// updates and schedules (tests/golden/optimizers.json); the errors a typo or a wrong argument
// gets; and active bytes back where they started. `cargo xtask test` opens this page in
// Chromium, and in Firefox ESR and WebKitGTK, where tandem runs on its CPU path.
import * as tn from "/pkg/index.js";
import { report } from "./report.js";

function fail(lines, message) {
  throw new Error(`${lines.join("\n")}\n${message}`);
}

function close(lines, what, got, want, tol = 1e-4) {
  const g = Array.from(got);
  const w = Array.from(want);
  const bad = g.length !== w.length || g.some((x, i) => !(Math.abs(x - w[i]) <= tol * Math.max(1, Math.abs(w[i]))));
  if (bad) fail(lines, `${what}: got [${g.join(", ")}], want [${w.join(", ")}]`);
}

/** Runs `fn`, which must throw an error of `name` whose message includes `part`. */
function throws(lines, what, name, part, fn) {
  try {
    fn();
  } catch (err) {
    if (err.name !== name || !err.message.includes(part)) {
      fail(lines, `${what}: threw ${err.name}: ${err.message}; want ${name} with "${part}"`);
    }
    return;
  }
  fail(lines, `${what}: did not throw`);
}

// Every NDArray in a tree, for reading and disposing.
function arraysOf(tree, out = []) {
  if (tree instanceof tn.NDArray) out.push(tree);
  else if (Array.isArray(tree)) tree.forEach((t) => arraysOf(t, out));
  else if (tree && typeof tree === "object") Object.values(tree).forEach((t) => arraysOf(t, out));
  return out;
}

function disposeAll(...trees) {
  for (const a of arraysOf(trees)) a.dispose();
}

async function gradients(lines, stream) {
  const s = { stream };
  const x = tn.array([0.5, -1, 2]);
  const y = tn.array([3, 1, -2]);
  // d/dx sum(x * x * y) = 2xy; d/dy = x^2.
  const f = (a, b) => tn.sum(tn.multiply(tn.multiply(a, a, s), b, s), s);
  const gx = tn.grad(f)(x, y);
  const gy = tn.grad(f, { argnums: 1 })(x, y);
  const [g0, g1] = tn.grad(f, { argnums: [0, 1] })(x, y);
  // Read all at once, un-awaited, as pages do.
  const reads = await Promise.all([gx, gy, g0, g1].map((a) => a.toArray()));
  close(lines, `${stream} grad`, reads[0], [3, -2, -8]);
  close(lines, `${stream} grad argnums 1`, reads[1], [0.25, 1, 4]);
  close(lines, `${stream} grad argnums [0, 1]`, [...reads[2], ...reads[3]], [3, -2, -8, 0.25, 1, 4]);
  // A tree of parameters, with a number in it (differentiated as a scalar) and null.
  const params = { w: x, more: [y, 2], none: null };
  const loss = (p) => tn.sum(tn.multiply(tn.multiply(p.w, p.more[0], s), p.more[1], s), s);
  const [value, grads] = tn.valueAndGrad(loss)(params);
  if (!(grads.more[1] instanceof tn.NDArray) || grads.more[1].ndim !== 0 || grads.none !== null) {
    fail(lines, `${stream} the gradient tree's shape: ${JSON.stringify(Object.keys(grads))}`);
  }
  close(lines, `${stream} tree value`, [await value.item()], [2 * (1.5 - 1 - 4)]);
  close(lines, `${stream} tree grads`, [...(await grads.w.toArray()), ...(await grads.more[0].toArray())], [6, 2, -4, 1, -2, 4]);
  close(lines, `${stream} grad of a number`, [await grads.more[1].item()], [1.5 - 1 - 4]);
  // [loss, aux]: the value is the list, the gradient the loss's.
  const [[l, aux], ga] = tn.valueAndGrad((a) => [tn.sum(tn.exp(a, s), s), tn.exp(a, s)])(x);
  close(lines, `${stream} aux`, await aux.toArray(), await ga.toArray());
  close(lines, `${stream} aux loss`, [await l.item()], [Math.exp(0.5) + Math.exp(-1) + Math.exp(2)]);
  // grad(grad(f)) of x^3 is 6x; stopGradient stops it.
  const cube = (a) => tn.sum(tn.multiply(tn.multiply(a, a, s), a, s), s);
  const second = tn.grad((a) => tn.sum(tn.grad(cube)(a), s))(x);
  close(lines, `${stream} grad(grad)`, await second.toArray(), [3, -6, 12]);
  const stopped = tn.grad((a) => tn.sum(tn.multiply(a, tn.stopGradient(a, s), s), s))(x);
  close(lines, `${stream} stopGradient`, await stopped.toArray(), [0.5, -1, 2]);
  const method = tn.grad((a) => tn.sum(tn.multiply(a, a.stopGradient(), s), s))(x);
  close(lines, `${stream} NDArray.stopGradient`, await method.toArray(), [0.5, -1, 2]);
  disposeAll(x, y, gx, gy, g0, g1, value, grads, l, aux, ga, second, stopped, method);
  lines.push(`${stream}: grad, valueAndGrad on trees, [loss, aux], grad(grad), stopGradient`);
}

async function forwardAndReverse(lines, stream) {
  const s = { stream };
  const x = tn.array([1, 2]);
  const v = tn.array([0.5, -1]);
  const f = (a) => [tn.sin(a, s), tn.sum(tn.square(a, s), s)];
  const ones = tn.array([1, 1]);
  const [outs, vjps] = tn.vjp(f, [x], [ones, 2]);
  if (outs.length !== 2 || vjps.length !== 1) fail(lines, "vjp returns lists");
  close(lines, `${stream} vjp`, await vjps[0].toArray(), [Math.cos(1) + 4, Math.cos(2) + 8]);
  const [jouts, jvps] = tn.jvp((a) => tn.sin(a, s), [x], [v]);
  if (jouts.length !== 1 || jvps.length !== 1) fail(lines, "jvp returns lists, even for one output");
  close(lines, `${stream} jvp`, await jvps[0].toArray(), [0.5 * Math.cos(1), -Math.cos(2)]);
  // vmap: rows of m times a shared vector; a column map with outAxes 1; trees in and out.
  const m = tn.array([[1, 2], [3, 4], [5, 6]]);
  const rowDot = tn.vmap((r, w) => tn.sum(tn.multiply(r, w, s), s), { inAxes: [0, null] });
  const rows = rowDot(m, v);
  close(lines, `${stream} vmap rows`, await rows.toArray(), [-1.5, -2.5, -3.5]);
  const cols = tn.vmap((c) => ({ twice: tn.multiply(c, 2, s) }), { inAxes: 1, outAxes: { twice: 1 } })(m);
  close(lines, `${stream} vmap outAxes`, await cols.twice.toArray(), [2, 4, 6, 8, 10, 12]);
  const perRow = tn.vmap(tn.grad((r) => tn.sum(tn.multiply(r, r, s), s)))(m);
  close(lines, `${stream} vmap(grad)`, await perRow.toArray(), [2, 4, 6, 8, 10, 12]);
  const whole = tn.grad((a) => tn.sum(tn.vmap((r) => tn.sum(tn.exp(r, s), s))(a), s))(m);
  close(lines, `${stream} grad(vmap)`, await whole.toArray(), [1, 2, 3, 4, 5, 6].map(Math.exp));
  // checkpoint gives the plain gradient.
  const layer = (a, w) => tn.tanh(tn.multiply(a, w, s), s);
  const plain = tn.grad((a) => tn.sum(layer(layer(a, 0.5), 2), s))(x);
  const kept = tn.grad((a) => tn.sum(tn.checkpoint(layer)(tn.checkpoint(layer)(a, 0.5), 2), s))(x);
  close(lines, `${stream} checkpoint`, await kept.toArray(), await plain.toArray());
  disposeAll(x, v, ones, rows, outs, vjps, jouts, jvps, m, cols, perRow, whole, plain, kept);
  lines.push(`${stream}: vjp, jvp, vmap (inAxes, outAxes, trees), vmap(grad), grad(vmap), checkpoint`);
}

async function compiledStep(lines, stream) {
  const s = { stream };
  const loss = (p, x) => tn.mean(tn.square(tn.subtract(tn.matmul(x, p.w, s), p.b, s), s), s);
  const step = tn.compile(tn.valueAndGrad(loss));
  const params = { w: tn.array([[0.5], [-0.25]]), b: tn.array([0.1]) };
  const x = tn.array([[1, 2], [3, 4], [5, 6]]);
  for (let round = 0; round < 2; round++) {
    const [value, grads] = step(params, x);
    const [plainValue, plainGrads] = tn.valueAndGrad(loss)(params, x);
    close(lines, `${stream} compiled value`, [await value.item()], [await plainValue.item()]);
    close(lines, `${stream} compiled dw`, await grads.w.toArray(), await plainGrads.w.toArray());
    close(lines, `${stream} compiled db`, await grads.b.toArray(), await plainGrads.b.toArray());
    disposeAll(value, grads, plainValue, plainGrads);
  }
  step.dispose();
  disposeAll(params, x);
  lines.push(`${stream}: compile(valueAndGrad) on a tree replays the plain step`);
}

async function optimizerGoldens(lines) {
  const golden = await (await fetch("/tests/golden/optimizers.json")).json();
  const schedule = (name) => {
    const made = {
      cosineDecay: tn.optimizers.cosineDecay(0.1, 8, 0.01),
      stepDecay: tn.optimizers.stepDecay(0.1, 0.5, 3),
    };
    return made[name];
  };
  for (const [c, kase] of golden.cases.entries()) {
    const settings = { ...kase.settings };
    if (typeof settings.learningRate === "string") settings.learningRate = schedule(settings.learningRate);
    const opt = new tn.optimizers[kase.optimizer](settings);
    const tree = (flat) => {
      const [w, l0, b] = tn.tidy(() => flat.map((v, k) => tn.array(v).reshape(golden.shapes[k])));
      return { w, layers: [l0, { b }] };
    };
    let params = tree(kase.params);
    for (let step = 0; step < kase.after.length; step++) {
      const grads = tree(kase.grads[step]);
      const next = opt.update(params, grads);
      disposeAll(params, grads);
      params = next;
      const got = await Promise.all([params.w, params.layers[0], params.layers[1].b].map((a) => a.toArray()));
      got.forEach((g, k) => close(lines, `case ${c} (${kase.optimizer}) step ${step} leaf ${k}`, g, kase.after[step][k], 2e-5));
    }
    if (opt.step !== kase.after.length) fail(lines, `case ${c}: step is ${opt.step}`);
    const state = opt.state;
    disposeAll(params, state);
    opt.reset();
  }
  const made = {
    exponentialDecay: (a) => tn.optimizers.exponentialDecay(...a),
    stepDecay: (a) => tn.optimizers.stepDecay(...a),
    cosineDecay: (a) => tn.optimizers.cosineDecay(...a),
    linearSchedule: (a) => tn.optimizers.linearSchedule(...a),
    joinSchedules: () =>
      tn.optimizers.joinSchedules([tn.optimizers.linearSchedule(0, 0.1, 4), tn.optimizers.cosineDecay(0.1, 6)], [4]),
  };
  for (const { schedule: name, args, rates } of golden.schedules) {
    const f = made[name](args);
    close(lines, `schedule ${name}`, rates.map((_, step) => f(step)), rates, 1e-6);
  }
  lines.push(`optimizers: ${golden.cases.length} MLX cases and ${golden.schedules.length} schedules match`);
}

async function training(lines, stream) {
  const s = { stream };
  tn.randomSeed(3);
  const x = tn.randomNormal([64, 4], s);
  const target = tn.tidy(() => tn.sum(tn.multiply(x, tn.array([1, -2, 0.5, 3]), s), { axis: 1, keepdims: true, ...s }));
  let params = { w: tn.zeros([4, 1]), b: tn.zeros([1]) };
  const loss = (p) => tn.mean(tn.square(tn.subtract(tn.add(tn.matmul(x, p.w, s), p.b, s), target, s), s), s);
  const step = tn.valueAndGrad(loss);
  const opt = new tn.optimizers.Adam({ learningRate: tn.optimizers.exponentialDecay(0.1, 0.99) });
  const losses = [];
  for (let i = 0; i < 60; i++) {
    const [value, grads] = step(params);
    const next = opt.update(params, grads);
    losses.push(await value.item());
    disposeAll(value, grads, params);
    params = next;
  }
  if (!(losses[59] < 0.05 * losses[0])) fail(lines, `${stream} training: loss ${losses[0]} -> ${losses[59]}`);
  disposeAll(params, x, target, opt.state);
  opt.reset();
  lines.push(`${stream}: Adam trains a linear model, loss ${losses[0].toFixed(3)} -> ${losses[59].toFixed(4)}`);
}

function errors(lines) {
  const x = tn.array([1, 2]);
  const f = (a) => tn.sum(a);
  throws(lines, "grad option typo", "ValueError", 'unknown option "argnum"', () => tn.grad(f, { argnum: 1 }));
  throws(lines, "grad of a non-function", "ValueError", "expected a function", () => tn.grad(3));
  throws(lines, "argnums past the arguments", "ValueError", "argnums names argument 2", () => tn.grad(f, { argnums: 2 })(x));
  throws(lines, "argnums repeated", "ValueError", "argnums repeats 0", () => tn.grad(f, { argnums: [0, 0] }));
  throws(lines, "a non-scalar loss", "ShapeError", "must return one element", () => tn.grad((a) => a)(x));
  throws(lines, "grad of a list", "ValueError", "use valueAndGrad", () => tn.grad((a) => [tn.sum(a), a])(x));
  throws(lines, "a string argument", "ValueError", "argument 0 is the string", () => tn.grad(f)("x"));
  throws(lines, "an async function", "ValueError", "returned a promise", () => tn.grad(async (a) => tn.sum(a))(x));
  const mine = new Error("my own failure");
  try {
    tn.grad(() => {
      throw mine;
    })(x);
    fail(lines, "a throwing function did not throw");
  } catch (err) {
    if (err !== mine) fail(lines, `the function's own error should come back, got ${err}`);
  }
  throws(lines, "vjp cotangent count", "ValueError", "1 outputs but 2 cotangents", () => tn.vjp(f, [x], [1, 2]));
  const three = tn.array([1, 2, 3]);
  throws(lines, "jvp tangent shape", "ShapeError", "tangent 0 has shape", () => tn.jvp(f, [x], [three]));
  throws(lines, "vjp primals not a list", "ValueError", "must be a list of trees", () => tn.vjp(f, x, [1]));
  throws(lines, "vmap option typo", "ValueError", 'unknown option "in_axes"', () => tn.vmap(f, { in_axes: 0 }));
  throws(lines, "vmap sizes", "ValueError", "different sizes, 2 and 3", () => tn.vmap((a, b) => a)(x, three));
  throws(lines, "vmap nothing mapped", "ValueError", "no input is mapped", () => tn.vmap(f, { inAxes: null })(x));
  throws(lines, "checkpoint of a number", "ValueError", "expected a function", () => tn.checkpoint(1));
  throws(lines, "no learningRate", "ValueError", "learningRate is required", () => new tn.optimizers.Adam({}));
  throws(lines, "optimizer typo", "ValueError", 'unknown option "learning_rate"', () => new tn.optimizers.SGD({ learning_rate: 1 }));
  throws(lines, "betas", "ValueError", "betas must be a list of two numbers", () => new tn.optimizers.Adam({ learningRate: 1, betas: 0.9 }));
  throws(lines, "nesterov", "ValueError", "Nesterov momentum needs", () => new tn.optimizers.SGD({ learningRate: 1, nesterov: true }));
  const nan = new tn.optimizers.SGD({ learningRate: () => NaN });
  throws(lines, "a schedule's NaN", "ValueError", "returned the number NaN at step 0", () => nan.update({ w: x }, { w: x }));
  const sgd = new tn.optimizers.SGD({ learningRate: 0.1 });
  throws(lines, "mismatched trees", "ValueError", "grads must have the structure of params", () => sgd.update({ w: x }, { v: x }));
  throws(lines, "stepDecay", "ValueError", "stepSize must be an integer", () => tn.optimizers.stepDecay(1, 0.5, 0));
  disposeAll(x, three);
  lines.push("errors: typos, wrong arguments and a throwing function, each named");
}

async function main() {
  const withoutGpu = new URLSearchParams(location.search).has("without-webgpu");
  await tn.initRuntime({ requireGpu: false });
  const lines = [];
  await tn.synchronize();
  const before = tn.getActiveMemory();
  for (const stream of ["cpu", "gpu"]) {
    await gradients(lines, stream);
    await forwardAndReverse(lines, stream);
    await compiledStep(lines, stream);
    await training(lines, stream);
  }
  await optimizerGoldens(lines);
  errors(lines);
  await tn.synchronize();
  const after = tn.getActiveMemory();
  // Arrays read on both devices keep a copy on each until disposed; all are disposed here.
  lines.push(`active ${before} -> ${after} bytes${withoutGpu ? " (without WebGPU)" : ""}`);
  if (after !== before) {
    const held = tn.memorySnapshot().filter((b) => b.state === "active" && b.usage !== "uniform");
    fail(lines, `left behind: ${held.map((b) => `${b.device} ${b.size} B by ${b.op}`).join("; ")}`);
  }
  return lines.join("\n");
}

report(main);
