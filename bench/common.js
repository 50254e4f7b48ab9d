// What every benchmark page shares: the median, the adapter line, and reporting through
// window.tandemBench ({state, text}), which `cargo xtask bench <name>` reads.

window.tandemBench = { state: "running", text: "" };

export function median(values) {
  const sorted = [...values].sort((p, q) => p - q);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

// The adapter, and a warning when it is a software one that shares the CPU's cores.
export function adapterLine(info, none) {
  if (!info.adapter) return `adapter: ${none}`;
  const a = info.adapter;
  const fallback = a.isFallbackAdapter ? " (a fallback adapter: it runs on the CPU's cores)" : "";
  return `adapter: ${a.vendor} ${a.architecture}${fallback}`;
}

// Runs `main` and shows and reports the table it resolves to, or its error.
export function report(main) {
  main().then(
    (text) => {
      document.getElementById("output").textContent = text;
      window.tandemBench = { state: "done", text };
    },
    (err) => {
      const text = `${err.name}: ${err.message}`;
      document.getElementById("output").textContent = text;
      window.tandemBench = { state: "error", text };
    },
  );
}
