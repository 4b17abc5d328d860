import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { repoRoot, runTs } from "./support/run-ts.js";

// The transcript README's example is run as it is written, so it can never rot.
it("runs the @keel/transcript README example", async () => {
  const readme = await readFile(join(repoRoot, "packages", "transcript", "README.md"), "utf8");
  const block = /<!-- example:transcript[^>]*-->\s*```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  const printed = /It prints:\s*```\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(block, "the README has the example").toBeTruthy();
  const file = join(repoRoot, "test", ".transcript-readme-example.ts");
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
