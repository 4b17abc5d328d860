import { expect, it } from "vitest";
import { readmePrinted, runReadmeExample } from "../../../test/support/run-ts.js";

// The README's example is run as it is written, so it can never rot.
it("runs the @keel/ai-sdk README example", async () => {
  const output = await runReadmeExample("ai-sdk", "packages/ai-sdk/README.md");
  expect(output, "the README has the example").toBeDefined();
  expect(output!.stderr).toBe("");
  expect(output!.code).toBe(0);
  expect(output!.stdout).toBe(await readmePrinted("packages/ai-sdk/README.md", "It prints:"));
});
