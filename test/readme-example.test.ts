import { expect, it } from "vitest";
import { runReadmeExample } from "./support/run-ts.js";

// The README's embedding example is run as it is written, so it can never rot.
it("runs the README's embedding example", async () => {
  const output = await runReadmeExample("embedding");
  expect(output, "the README has the embedding example").toBeDefined();
  if (!output) return;
  expect(output.stderr).toBe("");
  expect(output.code).toBe(0);
  const lines = output.stdout.trim().split("\n");
  expect(lines[0]).toMatch(/^fresh \d+ Worked on: Plan the --json flag\.$/);
  expect(lines[1]).toMatch(/^resumed \d+ Worked on: Implement it\.$/);
  expect(lines[2]).toMatch(/^resumed \d+ Worked on: Add tests\.$/);
  expect(lines[3]).toBe("step 3 done");
  // The normal path has no warnings (the example prints each to stderr) and no failed turn.
  expect(lines[4]).toBe("3 turns in the work session");
  const bytes = lines.slice(0, 3).map((line) => Number(line.split(" ")[1]));
  expect(bytes[1]).toBeLessThan(bytes[0]!);
});
