import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// The real-CLI suite (`pnpm test:clis`, through scripts/run-clis.mjs). Its files are `*.spec.ts`
// so that the root `vitest run` (which collects `test/**/*.test.ts`) never starts a real CLI.
const conditions = ["@keel/source", "node", "import", "module", "default"];
// As in the root config: without "import"/"module" for Node's own resolution, so pg's
// `require("pg-pool")` (reached through @keel/cli's store-postgres) gets the class.
const nodeConditions = conditions.filter((condition) => condition !== "import" && condition !== "module");

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  resolve: { conditions },
  ssr: { resolve: { conditions: nodeConditions, externalConditions: nodeConditions } },
  test: {
    include: ["src/**/*.spec.ts"],
    // Two CLIs at a time on a 2-core machine; the tests of one CLI run in order (resume follows fresh).
    maxWorkers: 2,
    testTimeout: 300_000,
    hookTimeout: 60_000,
  },
});
