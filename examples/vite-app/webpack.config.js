// The same app under webpack 5, into dist-webpack/. webpack resolves the package's
// `new URL("tandem_bg.wasm", import.meta.url)` as an asset by itself.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import HtmlWebpackPlugin from "html-webpack-plugin";

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
// index.html's script tag is Vite's entry; webpack injects its own bundle instead.
const page = readFileSync(here("index.html"), "utf8").replace(/\s*<script type="module" src="\/src\/main.ts"><\/script>/, "");

export default {
  mode: "production",
  entry: here("src/main.ts"),
  output: { path: here("dist-webpack"), filename: "main.[contenthash].js", clean: true },
  resolve: { extensions: [".ts", ".js"] },
  module: {
    rules: [{ test: /\.ts$/, loader: "ts-loader", options: { compilerOptions: { noEmit: false } } }],
  },
  plugins: [new HtmlWebpackPlugin({ templateContent: page, scriptLoading: "module" })],
  performance: { hints: false },
};
