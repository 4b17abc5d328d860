import { defineConfig } from "tsup";

const adapters = ["claude-code", "codex", "pi", "opencode", "copilot", "cursor", "gemini", "grok", "qoder", "deepseek", "scripted"];

export default defineConfig({
  entry: ["src/index.ts", ...adapters.map((name) => `src/${name}/index.ts`)],
  format: ["esm"],
  dts: true,
  clean: true,
  sourcemap: true,
  target: "node20",
});
