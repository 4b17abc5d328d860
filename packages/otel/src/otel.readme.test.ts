import { expect, it } from "vitest";
import { readmePrinted, runReadmeExample } from "../../../test/support/run-ts.js";

// The README's example runs as written (in a child process), so it cannot rot.
it("runs the README's example as written and prints the trace it shows", async () => {
  const output = await runReadmeExample("readme", "packages/otel/README.md");
  expect(output, "the README has the example").toBeDefined();
  expect(output!.stderr).toBe("");
  expect(output!.code).toBe(0);
  expect(output!.stdout).toBe(await readmePrinted("packages/otel/README.md", "It prints:"));
});
