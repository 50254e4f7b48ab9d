// `node reference.mjs <index.d.ts> <out.md>`: the API reference, generated from the package's
// types. Sections follow the `// ---` headings of index.d.ts; each function is listed with its
// signatures (overloads included) and its TSDoc, each type with its declaration. `cargo xtask
// test` regenerates it and fails if docs/reference.md differs.
import { readFileSync, writeFileSync } from "node:fs";
import ts from "typescript";

const [input, output] = process.argv.slice(2);
const text = readFileSync(input, "utf8");
const source = ts.createSourceFile(input, text, ts.ScriptTarget.Latest, true);

/** The TSDoc of a node as markdown: its comment text, then its examples. */
function doc(node) {
  const parts = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc);
  return parts
    .map((jsdoc) => {
      const comment = ts.getTextOfJSDocComment(jsdoc.comment) ?? "";
      return comment.replace(/\{@link (\w+)\}/g, "[`$1`](#$1)");
    })
    .join("\n\n")
    .trim();
}

/** The node's own text without its leading TSDoc, `export` and `declare`. */
function signature(node) {
  const start = node.getStart(source, false);
  return text
    .slice(start, node.end)
    .replace(/^(export )?(declare )?(default )?/, "")
    .replace(/\n\s*\*\//g, " */");
}

/** A section heading from a `// ---` block: the comment line between two rules. */
function heading(node) {
  const comments = ts.getLeadingCommentRanges(text, node.pos) ?? [];
  const lines = comments.map((c) => text.slice(c.pos, c.end));
  const rule = lines.findIndex((l) => /^\/\/ -{20,}/.test(l));
  if (rule < 0 || !lines[rule + 1]) return null;
  return lines[rule + 1].replace(/^\/\/\s*/, "");
}

// Declarations exported under another name (`export { variance as var }`, for a reserved
// word): listed under the exported name.
const renamed = new Map();
for (const node of source.statements) {
  if (!ts.isExportDeclaration(node) || !node.exportClause || !ts.isNamedExports(node.exportClause)) continue;
  for (const element of node.exportClause.elements) {
    if (element.propertyName) renamed.set(element.propertyName.text, element.name.text);
  }
}

const sections = [];
let current = null;
const seen = new Map();
for (const node of source.statements) {
  const title = heading(node);
  if (title) {
    current = { title, entries: [] };
    sections.push(current);
  }
  if (!current || !node.name) continue;
  const own = node.name.text;
  const name = renamed.get(own) ?? own;
  const kind = ts.isFunctionDeclaration(node) ? "function" : ts.isClassDeclaration(node) ? "class" : "type";
  const key = `${kind} ${name}`;
  if (seen.has(key)) {
    seen.get(key).signatures.push(signature(node));
    continue;
  }
  const shown = own === name ? signature(node) : signature(node).replace(`function ${own}(`, `function ${name}(`);
  const entry = { name, kind, doc: doc(node), signatures: [shown] };
  seen.set(key, entry);
  current.entries.push(entry);
}

const out = [
  "# tandem API reference",
  "",
  "Generated from the package's types (`npm/index.d.ts`) by `docs/tools/reference.mjs`; do not",
  "edit by hand. Every function takes its options object last; the types give each op's result",
  "dtype. See also: [getting started](getting-started.md), [streams and unified memory in the",
  "browser](streams-and-unified-memory.md), [managing memory](managing-memory.md), and the",
  "[MLX and PyTorch name map](name-map.md).",
  "",
  "## Contents",
  "",
  ...sections.map((s) => `- [${s.title}](#${s.title.toLowerCase().replace(/[^a-z0-9 _-]/g, "").replace(/ /g, "-")})`),
];
for (const section of sections) {
  out.push("", `## ${section.title}`);
  for (const entry of section.entries) {
    out.push("", `<a id="${entry.name}"></a>`, `### \`${entry.name}\``, "");
    if (entry.kind === "function") {
      out.push("```ts", ...entry.signatures.map((s) => s.replace(/\s*\/\*\*[\s\S]*?\*\/\s*/g, "")), "```");
      if (entry.doc) out.push("", entry.doc);
    } else {
      if (entry.doc) out.push(entry.doc, "");
      out.push("```ts", ...entry.signatures.map((s) => s.replace(/^\s*\/\*\*[\s\S]*?\*\/\n/, "")), "```");
    }
  }
}
writeFileSync(output, `${out.join("\n")}\n`);
console.log(`${output}: ${sections.length} sections, ${seen.size} entries`);
