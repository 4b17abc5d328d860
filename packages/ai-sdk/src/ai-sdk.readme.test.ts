import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readmePrinted, repoRoot, runReadmeExample } from "../../../test/support/run-ts.js";

const README = "packages/ai-sdk/README.md";

/** Each example of the README (its marker) and the lead of the block that says what it prints. */
const EXAMPLES = [
  { marker: "ai-sdk", printed: "It prints:" },
  { marker: "own-loop", printed: "The thread it stored:" },
  { marker: "progress", printed: "It streams:" },
];

// The README's examples are run as they are written (on ai 6, and on ai 7 in the ai-sdk-ai7
// project), so they can never rot.
describe("the @keel/ai-sdk README", () => {
  it.each(EXAMPLES)("runs the $marker example and prints what it says", async ({ marker, printed }) => {
    const output = await runReadmeExample(marker, README);
    expect(output, "the README has the example").toBeDefined();
    expect(output!.stderr).toBe("");
    expect(output!.code).toBe(0);
    const said = await readmePrinted(README, printed);
    expect(said, `the README says what the ${marker} example prints`).toBeDefined();
    expect(output!.stdout).toBe(said);
  });

  it("runs every TypeScript block: each one is one of the examples above", async () => {
    const text = await readFile(join(repoRoot, README), "utf8");
    const blocks = [...text.matchAll(/^(?:<!-- example:([\w-]+)[^>]*-->\s*)?```ts$/gm)].map((match) => match[1] ?? "(no example marker)");
    expect(blocks).toEqual(EXAMPLES.map((example) => example.marker));
  });
});
