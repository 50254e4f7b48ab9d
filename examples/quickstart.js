import * as tn from "tandem";

const info = await tn.initRuntime();            // loads the wasm, asks WebGPU for a device
console.log("WebGPU:", info.gpu, info.adapter?.description);

const a = tn.array([[1, 2, 3], [4, 5, 6]]);     // float32, shape [2, 3]
const b = tn.array([10, 20, 30]);               // broadcasts along the rows
const c = tn.add(a, b, { stream: "gpu" });      // lazy: builds a graph node
console.log(await c.toArray());                 // Float32Array [11, 22, 33, 14, 25, 36]

// The CPU reads the GPU's result; tidy disposes what is made inside but the result.
const d = tn.tidy(() => tn.exp(c.multiply(0.01), { stream: "cpu" }).sum());
console.log(await d.item());                    // 7.62… (computed in order, data moved once)
for (const x of [a, b, c, d]) x.dispose();      // everything made above is now freed
