import type { Options } from "tsup";

/**
 * The one tsup configuration of every `@keel/*` package: ESM for Node 20 with declarations.
 * Declarations are built against the sibling packages' published types (`dist`), not their
 * sources, so `pnpm build` builds the packages in dependency order (`pnpm -r` does).
 */
export function keelPackageConfig(entry: readonly string[]): Options {
  return {
    entry: [...entry],
    format: ["esm"],
    dts: { compilerOptions: { composite: false, customConditions: [], incremental: false } },
    clean: true,
    sourcemap: true,
    target: "node20",
  };
}
