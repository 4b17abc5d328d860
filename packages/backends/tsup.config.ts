import { defineConfig } from "tsup";
import { keelPackageConfig } from "../../tsup.base.js";

const adapters = ["claude-code", "codex", "pi", "opencode", "copilot", "cursor", "gemini", "grok", "qoder", "deepseek", "scripted"];

export default defineConfig(keelPackageConfig(["src/index.ts", ...adapters.map((name) => `src/${name}/index.ts`)]));
