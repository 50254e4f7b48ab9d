// `node check-blocks.mjs <repository root>`: every JS and TS code block of the README, the npm
// README and docs/ that uses tandem type-checks against the package's types (npm/index.d.ts),
// as do the examples in the types' own doc comments (which docs/reference.md shows). Run by
// `cargo xtask test`; prints one line, or each error with the file and line of its block, and
// exits 1.
//
// A document's blocks are read as one module, in order, because later blocks use what earlier
// ones made; each block is nested in the scope of the one before, so that a later block may
// also name a variable again. A block that imports "tandem" starts a new module. A block that
// neither imports "tandem" nor calls `tn.` (a bundler's config, a shell line) is not checked.
// ```js blocks are checked as JavaScript (`checkJs`: types flow from the package, parameters
// need no annotations), ```ts blocks as TypeScript. The examples in index.d.ts's comments may
// use `x`, `a` and `b`, float32 arrays, without making them.
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

const root = process.argv[2] ?? "../..";
const TYPES = join(root, "npm/index.d.ts");
const FENCE = /^```(js|ts|javascript|typescript)\s*$/;

/**
 * The fenced JS/TS blocks of markdown `lines`: their text, first line (1-based) and whether
 * they are TypeScript.
 */
function fencedBlocks(lines) {
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    if (!FENCE.test(lines[i])) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !lines[end].startsWith("```")) end++;
    const ts = /ts|typescript/.test(lines[i].slice(3));
    blocks.push({ text: lines.slice(start, end).join("\n"), line: start + 1, ts });
    i = end;
  }
  return blocks;
}

const markdownBlocks = (path) => fencedBlocks(readFileSync(path, "utf8").split("\n"));

/** The examples inside the doc comments of index.d.ts: its lines without the comments' ` * `
 * are markdown, line for line. */
const typeDocBlocks = (path) =>
  fencedBlocks(readFileSync(path, "utf8").split("\n").map((l) => l.replace(/^\s*\* ?/, "")));

const usesTandem = (text) => /from "tandem"|\btn\./.test(text);
const IMPORT = 'import * as tn from "tandem";';
const importsTandem = (text) => text.includes('from "tandem"');

/**
 * The modules to check: each is the blocks of one document from one that imports "tandem" (or
 * from the first) to the next that does, each block nested in the previous one's scope, with a
 * line map back to the document. Imports move to the top, where a module must have them.
 */
function modules(doc, blocks, preamble = []) {
  const groups = [];
  for (const block of blocks.filter((b) => usesTandem(b.text))) {
    if (!groups.length || importsTandem(block.text)) groups.push([]);
    groups[groups.length - 1].push(block);
  }
  return groups.map((group, k) => {
    const lines = [IMPORT, ...preamble];
    const origin = lines.map(() => 0);
    const typescript = group.some((b) => b.ts);
    for (const block of group) {
      lines.push("{");
      origin.push(0);
      for (const [j, line] of block.text.split("\n").entries()) {
        const isImport = /^import .* from "tandem";?$/.test(line.trim());
        lines.push(isImport ? "" : line);
        origin.push(block.line + j);
      }
    }
    lines.push("}".repeat(group.length));
    origin.push(0);
    const ext = typescript ? "ts" : "js";
    return { name: `/virtual/${doc.replace(/\W/g, "_")}_${k}.${ext}`, doc, text: lines.join("\n"), origin };
  });
}

function documents() {
  const docs = ["README.md", "npm/README.md"];
  for (const name of readdirSync(join(root, "docs"))) {
    if (name.endsWith(".md") && name !== "reference.md") docs.push(`docs/${name}`);
  }
  return docs;
}

const all = [];
for (const doc of documents()) all.push(...modules(doc, markdownBlocks(join(root, doc))));
// Each example of the types is a module of its own: they are unrelated snippets.
for (const block of typeDocBlocks(TYPES)) {
  all.push(
    ...modules("npm/index.d.ts", [block], [
      'declare const x: tn.NDArray<"float32">, a: tn.NDArray<"float32">, b: tn.NDArray<"float32">;',
    ]).map((m) => ({ ...m, name: m.name.replace("_0.", `_${block.line}.`) })),
  );
}

const base = {
  strict: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ["lib.es2022.d.ts", "lib.dom.d.ts", "lib.esnext.disposable.d.ts"],
  types: ["@webgpu/types"],
  typeRoots: [join(process.cwd(), "node_modules")],
  noEmit: true,
  allowJs: true,
  checkJs: true,
  skipLibCheck: true,
  paths: { tandem: [TYPES] },
};
// JavaScript as a page writes it: no annotations on parameters, `catch (e)` of any type.
const javascript = { ...base, noImplicitAny: false, useUnknownInCatchVariables: false };

/** The errors of `modules` under `options`, each with its document and line. */
function check(modules, options) {
  const host = ts.createCompilerHost(options);
  const virtual = new Map(modules.map((m) => [m.name, m.text]));
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version) =>
    virtual.has(name) ? ts.createSourceFile(name, virtual.get(name), version, true) : getSourceFile(name, version);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => virtual.has(name) || fileExists(name);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => virtual.get(name) ?? readFile(name);
  const program = ts.createProgram([...virtual.keys()], options, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
    const module = modules.find((m) => m.name === diagnostic.file?.fileName);
    if (!module) {
      return `${diagnostic.file ? relative(root, diagnostic.file.fileName) : "(options)"}: ${message}`;
    }
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
    return `${module.doc}:${module.origin[line] || "?"}: ${message}`;
  });
}

const problems = [
  ...check(all.filter((m) => m.name.endsWith(".js")), javascript),
  ...check(all.filter((m) => m.name.endsWith(".ts")), base),
];
if (problems.length) {
  console.error(problems.join("\n"));
  process.exit(1);
}
console.log(`${all.length} modules of code blocks type-check against npm/index.d.ts`);
