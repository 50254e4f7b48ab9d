// The training page's model and data: three interleaved spirals in the plane, and a residual
// MLP that classifies them (an embedding, four blocks h + tanh(h W1 + b1) W2 whose inner width
// is four times the stream's, and a read-out). Each block's inner activations are what a
// backward pass keeps, and what tn.checkpoint recomputes instead.
import * as tn from "../pkg/index.js";

export const SHAPE = { points: 128, classes: 3, width: 64, inner: 256, blocks: 4 };

/** A small seeded generator, so the data are the same on every load. */
function generator(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** `points` per class on `classes` spiral arms, with noise: {x: [n, 2], labels: [n, classes] one-hot, classOf}. */
export function spirals({ points, classes } = SHAPE, seed = 7) {
  const random = generator(seed);
  const n = points * classes;
  const x = new Float32Array(n * 2);
  const oneHot = new Float32Array(n * classes);
  const classOf = new Int32Array(n);
  for (let c = 0; c < classes; c++) {
    for (let i = 0; i < points; i++) {
      const k = c * points + i;
      const r = i / points;
      const angle = (c * 2 * Math.PI) / classes + r * 4 + (random() - 0.5) * 0.4;
      x[2 * k] = r * Math.cos(angle);
      x[2 * k + 1] = r * Math.sin(angle);
      oneHot[k * classes + c] = 1;
      classOf[k] = c;
    }
  }
  return {
    x: tn.array(x, { shape: [n, 2] }),
    labels: tn.array(oneHot, { shape: [n, classes] }),
    classOf,
    raw: x,
  };
}

/** Fresh parameters: a tree {embed, blocks: [...], out}, each {w, b}. */
export function initParams({ classes, width, inner, blocks } = SHAPE, seed = 1) {
  tn.randomSeed(seed);
  const dense = (fanIn, fanOut, scale = 1) => ({
    w: tn.randomNormal([fanIn, fanOut], { scale: scale / Math.sqrt(fanIn) }),
    b: tn.zeros([fanOut]),
  });
  return {
    embed: dense(2, width, 2),
    blocks: Array.from({ length: blocks }, () => ({ up: dense(width, inner), down: dense(inner, width, 0.5) })),
    out: dense(width, classes),
  };
}

/** One residual block: h + tanh(h W1 + b1) W2 + b2. */
function block(h, up, down, s) {
  const inner = tn.tanh(tn.add(tn.matmul(h, up.w, s), up.b, s), s);
  return tn.add(h, tn.add(tn.matmul(inner, down.w, s), down.b, s), s);
}

/** The logits of `x`; with `checkpointed`, each block recomputes its inner activations for the backward pass. */
export function logits(p, x, checkpointed, stream) {
  const s = { stream };
  let h = tn.tanh(tn.add(tn.matmul(x, p.embed.w, s), p.embed.b, s), s);
  const run = checkpointed ? tn.checkpoint((h, up, down) => block(h, up, down, s)) : (h, up, down) => block(h, up, down, s);
  for (const { up, down } of p.blocks) h = run(h, up, down);
  return tn.add(tn.matmul(h, p.out.w, s), p.out.b, s);
}

/** The mean softmax cross-entropy of the logits against one-hot labels. */
export function loss(p, x, labels, checkpointed, stream) {
  const s = { stream };
  const z = logits(p, x, checkpointed, stream);
  const picked = tn.sum(tn.multiply(z, labels, s), { axis: 1, ...s });
  return tn.mean(tn.subtract(tn.logsumexp(z, { axis: 1, ...s }), picked, s), s);
}

/** Every NDArray in a tree. */
export function arraysOf(tree, out = []) {
  if (tree instanceof tn.NDArray) out.push(tree);
  else if (Array.isArray(tree)) tree.forEach((t) => arraysOf(t, out));
  else if (tree && typeof tree === "object") Object.values(tree).forEach((t) => arraysOf(t, out));
  return out;
}

export function disposeTree(tree) {
  for (const a of arraysOf(tree)) a.dispose();
}
