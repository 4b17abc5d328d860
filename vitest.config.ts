import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { ai7ViteAliases } from "./packages/ai-sdk/test-support/ai7-aliases.mjs";

/** Sources of sibling packages are read through the `@keel/source` export condition: no build needed. */
const conditions = ["@keel/source", "node", "import", "module", "default"];
/**
 * Vitest hands the SSR conditions to its Node workers as `--conditions`, where "import" (and
 * "module") would make a CommonJS `require()` load a dual package's ESM build: pg's
 * `require("pg-pool")` then gets a module namespace, not the class. Node adds "import" or
 * "require" by itself, as Vite does when it resolves.
 */
const nodeConditions = conditions.filter((condition) => condition !== "import" && condition !== "module");
/** Conditions of the benchmarks run against the built packages (`dist/`), as Node resolves them for a user. */
const builtConditions = ["node", "default"];
/** The benchmarks that compare Keel with another library's published build (see the bench-built project). */
const builtBenchmarks = ["bench/langgraph.bench.ts"];
const packages = readdirSync(new URL("./packages", import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions: nodeConditions, externalConditions: nodeConditions } },
  test: {
    // The default reporter, then one plain closing line (`tests: N passed, N failed, N skipped`).
    reporters: ["default", "./test/support/summary-reporter.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      ...packages.map((name) => ({
        extends: true as const,
        test: { name, include: [`packages/${name}/src/**/*.test.ts`] },
      })),
      // @keel/ai-sdk's tests again on ai 7 (issue 33 §2): `ai`, `ai/test` and the providers resolve to
      // the ai 7 set installed beside ai 6 under npm aliases; child processes (the README example)
      // get the same map through Node's resolve hook. `aiMajor` is what the run must have loaded
      // (ai-sdk-major.test.ts checks it against the SDK's own user agent).
      {
        extends: true as const,
        resolve: { alias: ai7ViteAliases },
        test: {
          name: "ai-sdk-ai7",
          include: ["packages/ai-sdk/src/**/*.test.ts"],
          provide: { aiMajor: 7 },
          env: { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=${JSON.stringify(fileURLToPath(new URL("./packages/ai-sdk/test-support/ai7-register.mjs", import.meta.url)))}` },
        },
      },
      { extends: true as const, test: { name: "e2e", include: ["test/**/*.test.ts"], testTimeout: 300_000 } },
      { extends: true as const, test: { name: "examples", include: ["examples/**/*.test.ts"] } },
      // Benchmarks run once, in their own project (`pnpm bench`); tests never time anything.
      { extends: true as const, test: { name: "bench", include: [], benchmark: { include: ["bench/**/*.bench.ts"], exclude: builtBenchmarks } } },
      // Keel beside another library's published build: Keel's built packages too, loaded by Node
      // itself as a user's program loads them (through Vite's module runner every imported
      // binding is a getter call, a cost only the side run from source would pay). `pnpm bench`
      // builds first; run alone: `pnpm build && pnpm vitest bench --run --project bench-built`.
      {
        resolve: { conditions: builtConditions },
        ssr: { resolve: { conditions: builtConditions, externalConditions: builtConditions } },
        test: { name: "bench-built", include: [], server: { deps: { external: [/\/packages\/[^/]+\/dist\//] } }, benchmark: { include: builtBenchmarks } },
      },
    ],
    benchmark: { include: [] },
  },
});
