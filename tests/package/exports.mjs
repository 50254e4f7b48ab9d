// `node tests/package/exports.mjs pkg`: the package's types declare exactly what its entry
// exports, and use `any` at most 10 times (each with a comment saying why). Run by
// `cargo xtask test`; prints one line, or the differences and exits 1.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const dir = resolve(process.argv[2] ?? "pkg");
const types = readFileSync(`${dir}/index.d.ts`, "utf8");
const declared = new Set([
  ...[...types.matchAll(/^export (?:declare )?(?:function|class|const|namespace) (\w+)/gm)].map((m) => m[1]),
  // Renamed exports (`export { variance as var }`, for a reserved word).
  ...[...types.matchAll(/^export \{ \w+ as (\w+) \};/gm)].map((m) => m[1]),
]);
const entry = await import(pathToFileURL(`${dir}/index.js`).href);
const exported = new Set(Object.keys(entry).filter((name) => name !== "default"));
const untyped = [...exported].filter((name) => !declared.has(name));
const missing = [...declared].filter((name) => !exported.has(name));
const anys = (types.match(/\bany\b/g) ?? []).length;
const problems = [];
if (untyped.length) problems.push(`exported without a type: ${untyped.join(", ")}`);
if (missing.length) problems.push(`typed but not exported: ${missing.join(", ")}`);
if (anys > 10) problems.push(`index.d.ts says "any" ${anys} times (at most 10)`);
if (typeof entry.default !== "function") problems.push("the default export is not loadWasm");
if (problems.length) {
  console.error(problems.join("\n"));
  process.exit(1);
}
console.log(`index.d.ts types all ${exported.size} exports of index.js; "any" appears ${anys} times`);
