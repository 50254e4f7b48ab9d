// A worker of tandem's CPU pool (the threaded build). It receives the page's compiled module
// and its shared memory, makes an instance of its own on that memory, and runs CPU kernel
// parts until the page closes. It never calls the page's JavaScript: the module's imports are
// stand-ins that throw, save the externref table's set-up, which each instance runs.
onmessage = ({ data: [module, memory, stackSize] }) => {
  const imports = {};
  for (const { module: from, name, kind } of WebAssembly.Module.imports(module)) {
    imports[from] ??= {};
    if (kind === "memory") {
      imports[from][name] = memory;
    } else if (name === "__wbindgen_init_externref_table") {
      imports[from][name] = () => {};
    } else {
      imports[from][name] = () => {
        throw new Error(`tandem: a CPU pool worker cannot call ${name}`);
      };
    }
  }
  const { exports } = new WebAssembly.Instance(module, imports);
  exports.__wbindgen_start(stackSize);
  exports.tandem_pool_join();
  postMessage("ready");
  try {
    exports.tandem_pool_work();
  } catch (err) {
    // A part panicked (the instance aborted): tell the page's thread, which would otherwise
    // wait for that part for ever, then let the error reach this worker's console.
    exports.tandem_pool_failed();
    throw err;
  }
};
