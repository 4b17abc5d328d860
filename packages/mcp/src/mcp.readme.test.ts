import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { repoRoot, runTs } from "../../../test/support/run-ts.js";

// The README's example runs as written (in a child process), so it cannot rot.
it("runs the README's example and prints what the README says", { timeout: 120_000 }, async () => {
  const readme = await readFile(join(repoRoot, "packages", "mcp", "README.md"), "utf8");
  const block = /<!-- example:readme -->\s*```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  const printed = /\nprints\n\n```\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(block, "the README has the example").toBeTruthy();
  // Inside the package, so that the SDK resolves from its node_modules.
  const dir = join(repoRoot, "packages", "mcp", ".tsbuild");
  await mkdir(dir, { recursive: true });
  const file = join(dir, "readme-example.ts");
  await writeFile(file, block!);
  try {
    const output = await runTs(file, []);
    expect(output.stderr).toBe("");
    expect(output.code).toBe(0);
    expect(output.stdout).toBe(printed);
  } finally {
    await rm(file, { force: true });
  }
});
