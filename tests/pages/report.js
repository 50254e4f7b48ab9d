// How a test page reports: window.tandemPage ({state, text}), which `cargo xtask test` polls,
// and the page's #output, for a person who opens it. Opened as PAGE#report=TOKEN, the page
// also posts the report to the server that served it: `cargo xtask test` runs the pages in
// Firefox so, with no automation attached (Firefox's remote agent, attached, now and then
// hangs a worker's `new Worker`, which a page running tandem in a worker calls).
window.tandemPage = { state: "running", text: "" };

const token = /^#report=([\w-]+)$/.exec(location.hash)?.[1];

function show(state, text) {
  document.getElementById("output").textContent = text;
  window.tandemPage = { state, text };
  if (token) {
    const body = JSON.stringify({ state, text });
    fetch(`/__report/${token}`, { method: "POST", body }).catch(() => {});
  }
}

// Runs the page's checks (an async function returning its report) and reports how they ended.
export function report(checks) {
  checks().then(
    (text) => show("done", text),
    (err) => show("error", `${err.name}: ${err.message}`),
  );
}
