// Stands in for the Node built-ins (fs, path, os, perf_hooks) that TF.js's wasm ES module
// imports but only uses under Node.
export default {};
