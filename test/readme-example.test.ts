import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { repoRoot, runTs } from "./support/run-ts.js";

// The README's embedding example is run as it is written, so it can never rot.
it("runs the README's embedding example", async () => {
  const readme = await readFile(join(repoRoot, "README.md"), "utf8");
  const block = /<!-- example:embedding[^>]*-->\s*```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(block, "the README has the embedding example").toBeTruthy();
  const file = join(repoRoot, "test", ".readme-example.ts");
  await writeFile(file, block!);
  try {
    const output = await runTs(file, []);
    expect(output.stderr).toBe("");
    expect(output.code).toBe(0);
    const lines = output.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^fresh \d+ Worked on: Plan the --json flag\.$/);
    expect(lines[1]).toMatch(/^resumed \d+ Worked on: Implement it\.$/);
    expect(lines[2]).toMatch(/^resumed \d+ Worked on: Add tests\.$/);
    expect(lines[3]).toBe("step 3 done");
    // The normal path has no warnings: the example throws on any, and prints the session's count.
    expect(lines[4]).toBe("3 turns in the work session");
    const bytes = lines.slice(0, 3).map((line) => Number(line.split(" ")[1]));
    expect(bytes[1]).toBeLessThan(bytes[0]!);
  } finally {
    await rm(file, { force: true });
  }
});
