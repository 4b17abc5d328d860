import { readFileSync } from "node:fs";
import { defineConfig } from "tsup";
import { keelPackageConfig } from "../../tsup.base.js";

// One entry per `exports` subpath (the kit, the scripted backend and every adapter folder).
const manifest = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8")) as { exports: Record<string, unknown> };
const subpaths = Object.keys(manifest.exports).filter((key) => key !== "." && key !== "./package.json" && !key.includes("*"));

export default defineConfig(keelPackageConfig(["src/index.ts", ...subpaths.map((key) => `src/${key.slice(2)}/index.ts`)]));
