// "webgpu-hand": hand-written WGSL on the plain WebGPU API, no library: what this adapter can
// do, shown beside the runtimes (it is not a peer in the ratios). Pipelines, bind groups and
// buffers (outputs and pooled MAP_READ staging) are made before timing; a run records one
// command encoder (its dispatches in ONE compute pass, then the copies to staging), submits it
// once, and maps the staging buffers back into fresh Float32Arrays.
//
// Kernels: exp with vec4 loads, workgroup 256, two vec4 per thread; matmul with an 8x8 register
// tile per thread (two vec4 columns by 8 rows), fma, no workgroup memory (8x4 with workgroup 64
// for the MLX example's 4-column matrix); add with one vec4 per thread.

const EXP_WGSL = /* wgsl */ `
@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> y: array<vec4<f32>>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let n = arrayLength(&y);
  let first = (wg.y * groups.x + wg.x) * 512u + li;
  if (first < n) { y[first] = exp(x[first]); }
  let second = first + 256u;
  if (second < n) { y[second] = exp(x[second]); }
}`;

const ADD_WGSL = /* wgsl */ `
@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> y: array<vec4<f32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < arrayLength(&y)) { y[id.x] = a[id.x] + b[id.x]; }
}`;

// C (m x n) = A (m x k) @ B (k x n), all row-major, k and n multiples of 4. Each thread keeps a
// `tm` x (4 * `tnv`) tile of C in registers; rows past m and columns past n are clamped on load
// and skipped on store.
function matmulWGSL(tm, tnv, wx, wy) {
  const rows = [...Array(tm).keys()];
  const cols = [...Array(tnv).keys()];
  const lanes = ["x", "y", "z", "w"];
  const each = (f) => rows.flatMap((i) => cols.map((j) => f(i, j)));
  return /* wgsl */ `
struct Dims { m: u32, k4: u32, n4: u32, unused: u32 }
@group(0) @binding(0) var<storage, read> A: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> B: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> C: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> d: Dims;

@compute @workgroup_size(${wx}, ${wy})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let c0 = gid.x * ${tnv}u;
  let r0 = gid.y * ${tm}u;
  if (c0 >= d.n4 || r0 >= d.m) { return; }
${rows.map((i) => `  let ra${i} = min(r0 + ${i}u, d.m - 1u) * d.k4;`).join("\n")}
${cols.map((j) => `  let cb${j} = min(c0 + ${j}u, d.n4 - 1u);`).join("\n")}
${each((i, j) => `  var acc${i}_${j} = vec4<f32>(0.0);`).join("\n")}
  for (var k4 = 0u; k4 < d.k4; k4++) {
${rows.map((i) => `    let a${i} = A[ra${i} + k4];`).join("\n")}
    let kb = k4 * 4u * d.n4;
${[0, 1, 2, 3].flatMap((kk) => cols.map((j) => `    let b${kk}_${j} = B[kb + ${kk}u * d.n4 + cb${j}];`)).join("\n")}
${[0, 1, 2, 3].flatMap((kk) => each((i, j) => `    acc${i}_${j} = fma(vec4<f32>(a${i}.${lanes[kk]}), b${kk}_${j}, acc${i}_${j});`)).join("\n")}
  }
${each((i, j) => `  if (r0 + ${i}u < d.m && c0 + ${j}u < d.n4) { C[(r0 + ${i}u) * d.n4 + c0 + ${j}u] = acc${i}_${j}; }`).join("\n")}
}`;
}

// The matmul variant for a shape: 8x8 tiles in 8x8 workgroups, or 8x4 tiles in a column of 64
// threads when C has a single vec4 column.
function matmulConfig(n) {
  return n / 4 === 1 ? { tm: 8, tnv: 1, wx: 1, wy: 64 } : { tm: 8, tnv: 2, wx: 8, wy: 8 };
}

const SUPPORTED = new Set(["matmul", "exp", "exp-chain", "add-chain"]);

export async function setup() {
  if (!navigator.gpu) throw new Error("no WebGPU");
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) throw new Error("no WebGPU adapter");
  const device = await adapter.requestDevice({
    requiredLimits: {
      maxBufferSize: adapter.limits.maxBufferSize,
      maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
    },
  });
  const gpu = new Gpu(device);
  return {
    info: { library: "hand-written WGSL, plain WebGPU", adapter: { ...adapter.info } },
    supports: (w) => {
      if (w.dtype) return "tandem only: the float16 block measures tandem's own memory against its float32 block";
      if (w.cpuForward) return "TF.js only: its default CPU forwarding of small ops";
      if (w.op === "mlx") return w.placement === "gpu" ? true : "GPU-only by hand";
      // The hand-written kernels read and write whole vec4s and tiles.
      const sides = [w.n, w.m, w.k].filter((v) => v !== undefined);
      if (sides.some((v) => v % 4 !== 0)) return "whole vec4s only by hand";
      return SUPPORTED.has(w.op) ? true : "not written by hand";
    },
    prepare: (w, inputs) => prepare(gpu, w, inputs),
  };
}

class Gpu {
  constructor(device) {
    this.device = device;
    this.pipelines = new Map();
    this.errors = [];
    device.addEventListener("uncapturederror", (e) => this.errors.push(e.error.message));
    device.lost.then((info) => this.errors.push(`device lost: ${info.message}`));
  }

  async pipeline(code) {
    if (!this.pipelines.has(code)) {
      const module = this.device.createShaderModule({ code });
      const p = await this.device.createComputePipelineAsync({ layout: "auto", compute: { module, entryPoint: "main" } });
      this.pipelines.set(code, p);
    }
    return this.pipelines.get(code);
  }

  storage(bytes) {
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    return this.device.createBuffer({ size: bytes, usage });
  }

  upload(data) {
    const buffer = this.storage(data.byteLength);
    this.device.queue.writeBuffer(buffer, 0, data);
    return buffer;
  }

  uniform(words) {
    const buffer = this.device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    this.device.queue.writeBuffer(buffer, 0, new Uint32Array(words));
    return buffer;
  }

  staging(bytes) {
    return this.device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  }

  bind(pipeline, buffers) {
    return this.device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: buffers.map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
  }

  // One encoder: `record(pass)` fills one compute pass; then each output is copied to its
  // staging buffer; one submit; the staging buffers are mapped and copied into JS arrays.
  async run(record, outputs) {
    const encoder = this.device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    record(pass);
    pass.end();
    for (const [buffer, staging] of outputs) encoder.copyBufferToBuffer(buffer, 0, staging, 0, staging.size);
    this.device.queue.submit([encoder.finish()]);
    const data = await Promise.all(
      outputs.map(async ([, staging]) => {
        await staging.mapAsync(GPUMapMode.READ);
        const copy = new Float32Array(staging.getMappedRange().slice(0));
        staging.unmap();
        return copy;
      }),
    );
    if (this.errors.length) throw new Error(`WebGPU: ${this.errors.join("; ")}`);
    return data;
  }
}

// Workgroups for `count` along x, spilling into y past the per-dimension limit.
function grid(count) {
  const x = Math.min(count, 65535);
  return [x, Math.ceil(count / x)];
}

async function matmulStep(gpu, a, b, m, k, n) {
  const cfg = matmulConfig(n);
  const pipeline = await gpu.pipeline(matmulWGSL(cfg.tm, cfg.tnv, cfg.wx, cfg.wy));
  const c = gpu.storage(m * n * 4);
  const dims = gpu.uniform([m, k / 4, n / 4, 0]);
  const group = gpu.bind(pipeline, [a, b, c, dims]);
  const wgx = Math.ceil(Math.ceil(n / 4 / cfg.tnv) / cfg.wx);
  const wgy = Math.ceil(Math.ceil(m / cfg.tm) / cfg.wy);
  const record = (pass) => {
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(wgx, wgy);
  };
  return { record, out: c, buffers: [c, dims] };
}

// `count` dispatches of a kernel that reads `first` (and `extra`), ping-ponging between two
// buffers; returns the recorder and the buffer holding the last result.
function chainStep(gpu, pipeline, first, extra, bytes, count, workgroups) {
  const t = [gpu.storage(bytes), gpu.storage(bytes)];
  const groups = [
    gpu.bind(pipeline, [first, ...extra, t[0]]),
    gpu.bind(pipeline, [t[0], ...extra, t[1]]),
    gpu.bind(pipeline, [t[1], ...extra, t[0]]),
  ];
  const record = (pass) => {
    pass.setPipeline(pipeline);
    for (let i = 0; i < count; i++) {
      pass.setBindGroup(0, groups[i === 0 ? 0 : i % 2 === 1 ? 1 : 2]);
      pass.dispatchWorkgroups(...workgroups);
    }
  };
  return { record, out: t[(count - 1) % 2], buffers: t };
}

async function prepare(gpu, w, inputs) {
  const owned = [];
  const keep = (...buffers) => {
    owned.push(...buffers);
    return buffers[0];
  };
  const upload = (name) => keep(gpu.upload(inputs[name].data));
  const staging = (bytes) => keep(gpu.staging(bytes));
  const dispose = async () => {
    await gpu.device.queue.onSubmittedWorkDone();
    for (const b of owned) b.destroy();
  };
  const done = async (steps, outputs) => {
    await gpu.device.queue.onSubmittedWorkDone();
    for (const s of steps) keep(...s.buffers);
    const pairs = outputs.map(([out, bytes]) => [out, staging(bytes)]);
    return { run: () => gpu.run((pass) => steps.forEach((s) => s.record(pass)), pairs), dispose };
  };
  switch (w.op) {
    case "matmul": {
      const step = await matmulStep(gpu, upload("a"), upload("b"), w.m, w.k, w.n);
      return done([step], [[step.out, w.m * w.n * 4]]);
    }
    case "exp": {
      const pipeline = await gpu.pipeline(EXP_WGSL);
      const step = chainStep(gpu, pipeline, upload("x"), [], w.n * 4, 1, grid(Math.ceil(w.n / 4 / 512)));
      return done([step], [[step.out, w.n * 4]]);
    }
    case "exp-chain":
    case "mlx": {
      const size = w.op === "mlx" ? w.k * w.n : w.rows * w.cols;
      const pipeline = await gpu.pipeline(EXP_WGSL);
      const b = upload("b");
      const exps = chainStep(gpu, pipeline, b, [], size * 4, w.count, grid(Math.ceil(size / 4 / 512)));
      if (w.op === "exp-chain") return done([exps], [[exps.out, size * 4]]);
      const mm = await matmulStep(gpu, upload("a"), b, w.m, w.k, w.n);
      return done([mm, exps], [[mm.out, w.m * w.n * 4], [exps.out, size * 4]]);
    }
    case "add-chain": {
      const pipeline = await gpu.pipeline(ADD_WGSL);
      const s = upload("s");
      const step = chainStep(gpu, pipeline, s, [s], w.n * 4, w.count, [Math.ceil(w.n / 4 / 64), 1]);
      return done([step], [[step.out, w.n * 4]]);
    }
    default:
      throw new Error(`webgpu-hand: no kernel for ${w.op}`);
  }
}
