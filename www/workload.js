// MLX's unified-memory example, as the page runs it (MLX's own code, in its docs):
//
//   x = mx.matmul(a, b, stream=d1)
//   for _ in range(500): b = mx.exp(b, stream=d2)
//   mx.eval(x, b)
//
// with a 4096x512 and b 512x4 drawn uniformly (the page's form changes the sizes and the count).
// The matmul is large and suits the GPU; the exps are tiny kernels, whose per-dispatch cost the
// CPU does not pay. Split, the CPU runs the exps while the GPU runs the matmul.
import * as tn from "../pkg/index.js";

/** The four ways the page runs it: where the matmul (d1) and the exps (d2) go. */
export const MODES = {
  gpu: { label: "GPU-only", d1: "gpu", d2: "gpu", compiled: false, where: "d1 = d2 = gpu" },
  split: { label: "Split", d1: "gpu", d2: "cpu", compiled: false, where: "d1 = gpu, d2 = cpu" },
  cpu: { label: "CPU-only", d1: "cpu", d2: "cpu", compiled: false, where: "d1 = d2 = cpu" },
  compiled: {
    label: "Compiled split",
    d1: "gpu",
    d2: "cpu",
    compiled: true,
    where: "split, through tn.compile: the exps fused into a few CPU kernels",
  },
};

/** Untimed runs before the timed ones. */
export const WARMUPS = 2;

/** The sizes and counts a user may change, with MLX's values. */
export const DEFAULTS = { m: 4096, k: 512, n: 4, iterations: 500, repetitions: 10 };

/** The example's graph: x = matmul(a, b) on d1, then `iterations` exps of b on d2. Each exp's
 * input is disposed once the next one holds it, so only two of the small arrays live at once. */
export function example(a, b, { d1, d2 }, iterations) {
  const x = tn.matmul(a, b, { stream: d1 });
  let y = b;
  for (let i = 0; i < iterations; i++) {
    const next = tn.exp(y, { stream: d2 });
    if (y !== b) y.dispose();
    y = next;
  }
  return [x, y];
}

/** What a mode passes to {@link example}: its devices and the number of exps. */
export function callOf(mode, iterations) {
  const { d1, d2 } = MODES[mode];
  return { d1, d2, iterations };
}

/**
 * The code a mode runs, as the page shows it: {@link example}'s own source (the function the
 * page calls, so the two cannot differ), then the call with the mode's devices and the form's
 * sizes, and the disposes that leave nothing behind. Pasted into a page, it runs as shown.
 */
export function source(mode, { m, k, n, iterations }) {
  const { d1, d2 } = callOf(mode, iterations);
  const args = `{ d1: "${d1}", d2: "${d2}" }, ${iterations}`;
  const inputs = `const a = tn.randomUniform([${m}, ${k}]);\nconst b = tn.randomUniform([${k}, ${n}]);\n`;
  const dispose = "for (const z of [a, b, x, y]) z.dispose();";
  const call = MODES[mode].compiled
    ? `const f = tn.compile((a, b) => example(a, b, ${args}));\n` +
      `const [x, y] = f(a, b);\nawait tn.evaluate(x, y);\n${dispose}\nf.dispose();`
    : `const [x, y] = example(a, b, ${args});\nawait tn.evaluate(x, y);\n${dispose}`;
  return `${example.toString()}\n\n${inputs}${call}`;
}

function median(values) {
  const sorted = [...values].sort((p, q) => p - q);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The inputs of one set of sizes, and the functions that time each mode on them. */
export class Workload {
  constructor(settings) {
    this.settings = settings;
    this.compiled = new Map();
  }

  /** Draws a and b (seeded, so every mode and every page load sees the same numbers). */
  async prepare() {
    const { m, k, n } = this.settings;
    tn.randomSeed(0);
    this.a = tn.randomUniform([m, k]);
    this.b = tn.randomUniform([k, n]);
    await tn.evaluate(this.a, this.b);
  }

  /** The function a mode runs: {@link example} with {@link callOf}'s arguments, as
   * {@link source} shows it. */
  fn(mode) {
    const { d1, d2, iterations } = callOf(mode, this.settings.iterations);
    if (!MODES[mode].compiled) return (a, b) => example(a, b, { d1, d2 }, iterations);
    if (!this.compiled.has(mode)) {
      this.compiled.set(mode, tn.compile((a, b) => example(a, b, { d1, d2 }, iterations)));
    }
    return this.compiled.get(mode);
  }

  /** Builds `mode`'s graph, evaluates it and disposes its results. */
  async run(mode) {
    const [x, y] = this.fn(mode)(this.a, this.b);
    try {
      await tn.evaluate(x, y);
    } finally {
      x.dispose();
      y.dispose();
    }
  }

  /** One run of `mode`, from building the graph to its results being ready, in ms. */
  async once(mode) {
    const start = performance.now();
    await this.run(mode);
    return performance.now() - start;
  }

  /** Two warm-ups (pipelines compile, inputs move to the device, a compiled mode traces; a
   * chain that evaluate fuses compiles its kernel the second time it is seen), then
   * `repetitions` timed runs; `progress(done, total)` after each. */
  async time(mode, progress) {
    const total = this.settings.repetitions + WARMUPS;
    for (let i = 0; i < WARMUPS; i++) {
      await this.once(mode);
      progress(i + 1, total);
    }
    const times = [];
    for (let i = 0; i < this.settings.repetitions; i++) {
      times.push(await this.once(mode));
      progress(WARMUPS + i + 1, total);
    }
    return { mode, times, median: median(times), min: Math.min(...times), max: Math.max(...times) };
  }

  /** What ran where in one more run of `mode`. */
  profile(mode) {
    return tn.profile(() => this.run(mode));
  }

  dispose() {
    this.a?.dispose();
    this.b?.dispose();
    // A compiled function's traces go with it: free them now rather than at the next gc.
    for (const f of this.compiled.values()) f.dispose();
    this.compiled.clear();
  }
}
