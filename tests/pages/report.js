// How a test page reports: window.tandemPage ({state, text}), which `cargo xtask test` polls,
// and the page's #output, for a person who opens it.
window.tandemPage = { state: "running", text: "" };

function show(state, text) {
  document.getElementById("output").textContent = text;
  window.tandemPage = { state, text };
}

// Runs the page's checks (an async function returning its report) and reports how they ended.
export function report(checks) {
  checks().then(
    (text) => show("done", text),
    (err) => show("error", `${err.name}: ${err.message}`),
  );
}
