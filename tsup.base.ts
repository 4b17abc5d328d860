import { cp, stat } from "node:fs/promises";
import type { Options } from "tsup";

/**
 * Copies the declarations `tsc -b tsconfig.build.json` wrote to `.tsbuild/` into `dist/`, beside
 * the bundles (their maps point at `../src`, which is published too). One `tsc -b` over the
 * workspace types every package at once; tsup's own declaration build ran a whole TypeScript
 * program per package and took several times as long.
 */
async function copyDeclarations(): Promise<void> {
  const exists = await stat(".tsbuild").then(
    () => true,
    () => false,
  );
  if (!exists) throw new Error("no .tsbuild/ declarations: run `tsc -b tsconfig.build.json` first (`pnpm run build` at the root does)");
  await cp(".tsbuild", "dist", { recursive: true, filter: (source) => !source.endsWith(".tsbuildinfo") });
}

/**
 * The one tsup configuration of every `@keel/*` package: ESM for Node 20. tsup bundles the
 * JavaScript; the declarations come from the workspace's `tsc -b` (see `copyDeclarations`), so
 * `pnpm build` at the root runs `tsc -b tsconfig.build.json` first.
 */
export function keelPackageConfig(entry: readonly string[]): Options {
  return {
    entry: [...entry],
    format: ["esm"],
    dts: false,
    clean: true,
    sourcemap: true,
    target: "node20",
    onSuccess: copyDeclarations,
  };
}
