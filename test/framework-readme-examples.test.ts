import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { repoRoot, runTs } from "./support/run-ts.js";

// The framework adapters' README examples are run as they are written, so they can never rot.
async function runExample(readmePath: string, marker: string): Promise<string[]> {
  const readme = await readFile(join(repoRoot, readmePath), "utf8");
  const block = new RegExp(`<!-- example:${marker} -->\\s*\`\`\`ts\\n([\\s\\S]*?)\`\`\``).exec(readme)?.[1];
  expect(block, `${readmePath} has its example`).toBeTruthy();
  const file = join(repoRoot, "test", `.readme-example-${marker}.ts`);
  await writeFile(file, block!);
  try {
    const output = await runTs(file, []);
    expect(output.code, output.stderr).toBe(0);
    return output.stdout.trim().split("\n");
  } finally {
    await rm(file, { force: true });
  }
}

it("runs the @keel/langgraph README example", async () => {
  expect(await runExample("packages/langgraph/README.md", "langgraph")).toEqual(["what is your name?", "Hello, Ada!"]);
});

it("runs the @keel/openai-agents README example", async () => {
  const lines = await runExample("packages/openai-agents/README.md", "openai-agents");
  expect(lines[0]).toBe("1");
  expect(JSON.parse(lines[1] ?? "null")).toMatchObject({ role: "assistant" });
  expect(lines[2]).toBe("1");
});
