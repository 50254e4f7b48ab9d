// The benchmark's random inputs: a small seeded LCG (Numerical Recipes constants). Each value
// has 24 random bits, so it is exact in float32, and every runtime gets the same numbers.
export function uniform(count, seed, lo, hi) {
  const out = new Float32Array(count);
  let state = seed >>> 0;
  const scale = (hi - lo) / 16777216;
  for (let i = 0; i < count; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out[i] = lo + (state >>> 8) * scale;
  }
  return out;
}
