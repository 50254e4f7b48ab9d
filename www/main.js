// The demo page. It reports its outcome on window.tandemDemo ({state, text}), which
// `cargo xtask demo --headless` reads.
import init, * as tn from "../pkg/tandem.js";

const $ = (id) => document.getElementById(id);
window.tandemDemo = { state: "running", text: "" };

function row(name, value) {
  const tr = document.createElement("tr");
  const th = document.createElement("th");
  const td = document.createElement("td");
  th.textContent = name;
  td.textContent = value;
  tr.append(th, td);
  return tr;
}

function showRuntime(info) {
  const a = info.adapter;
  const rows = [
    ["WebGPU", info.gpu ? "yes" : "no (the gpu device runs on the CPU)"],
    ["adapter", a ? `${a.vendor} ${a.architecture} ${a.description}`.trim() : "none"],
    ["fallback adapter", a ? String(a.isFallbackAdapter) : "-"],
    ["default device", `${info.defaultDevice.device}: ${info.defaultDevice.reason}`],
    ["features", info.features.join(", ") || "none"],
    ["maxStorageBufferBindingSize", `${info.limits.maxStorageBufferBindingSize ?? "-"} bytes`],
    ["maxBufferSize", `${info.limits.maxBufferSize ?? "-"} bytes`],
  ];
  $("runtime").replaceChildren(...rows.map(([k, v]) => row(k, v)));
}

// The same add in a module Web Worker; rejects if the worker fails or disagrees.
async function addInWorker() {
  const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
  const reply = await new Promise((resolve, reject) => {
    worker.onmessage = (event) => resolve(event.data);
    worker.onerror = (event) => reject(new Error(`the worker failed: ${event.message}`));
    worker.postMessage(null);
  });
  worker.terminate();
  if (!reply.ok) throw new Error(`in the worker: ${reply.error}`);
  if (reply.sum.join() !== "11,22,33") throw new Error(`the worker computed [${reply.sum}]`);
  return reply;
}

async function main() {
  await init();
  const info = await tn.initRuntime();
  $("status").textContent = "Ready.";
  showRuntime(info);

  const a = tn.array([1, 2, 3]);
  const b = tn.array([10, 20, 30]);
  const c = tn.add(a, b, { stream: "gpu" });
  const sum = Array.from(await c.toArray());
  const inWorker = await addInWorker();
  $("add").textContent = [
    `add([1, 2, 3], [10, 20, 30], {stream: "gpu"}) = [${sum.join(", ")}]  (${c.dtype}, shape [${c.shape}])`,
    `the same in a Web Worker (WebGPU ${inWorker.gpu ? "yes" : "no"}) = [${inWorker.sum.join(", ")}]`,
  ].join("\n");
}

main().then(
  () => {
    window.tandemDemo = { state: "done", text: $("output").innerText };
  },
  (err) => {
    $("status").textContent = `${err.name}: ${err.message}`;
    $("status").className = "error";
    window.tandemDemo = { state: "error", text: $("output").innerText };
  },
);
