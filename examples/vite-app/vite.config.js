// Vite builds the app into dist/. The package's wasm is found through its
// `new URL("tandem_bg.wasm", import.meta.url)` and emitted as an asset.
import { defineConfig } from "vite";

export default defineConfig({
  // Relative URLs, so that the built app runs from any folder.
  base: "./",
  build: { outDir: "dist", emptyOutDir: true },
  // The dev server pre-bundles dependencies into node_modules/.vite, where the wasm beside
  // the package is no longer found: the package is served as it is instead.
  optimizeDeps: { exclude: ["tandem"] },
  // The package is linked from ../../pkg, outside this folder.
  server: { fs: { allow: ["../.."] } },
});
