import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const packageRoot = resolve(fileURLToPath(new URL(".", import.meta.url)), "..");
const repoRoot = resolve(packageRoot, "../..");

describe("README example", () => {
  it("runs as written and prints the report it shows", () => {
    const readme = readFileSync(join(packageRoot, "README.md"), "utf8");
    const example = /## Example[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    const shown = /It prints[\s\S]*?```text\n([\s\S]*?)\.\.\.\n```/.exec(readme)?.[1];
    expect(example).toBeDefined();
    expect(shown).toBeDefined();
    // Under the repository's node_modules so that `@keel/*` resolve as they would for a user.
    const directory = join(repoRoot, "node_modules", `.keel-telemetry-readme-${process.pid}`);
    mkdirSync(directory, { recursive: true });
    try {
      const file = join(directory, "example.mts");
      writeFileSync(file, example ?? "");
      const run = spawnSync(process.execPath, ["--import", "tsx", "--conditions=@keel/source", file], {
        cwd: repoRoot,
        encoding: "utf8",
        env: { ...process.env, NO_COLOR: "1" },
        timeout: 60_000,
      });
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
      expect(run.stdout.startsWith(shown ?? "-")).toBe(true);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
