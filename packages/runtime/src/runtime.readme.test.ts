import { expect, it } from "vitest";
import { readmePrinted, runReadmeExample } from "../../../test/support/run-ts.js";

// The README's examples run as written (each in a child process), so they cannot rot.
it("runs the README's example, whose loop branches on superseded, and prints what it shows", async () => {
  const output = await runReadmeExample("runtime", "packages/runtime/README.md");
  expect(output, "the README has the example").toBeDefined();
  expect(output!.stderr).toBe("");
  expect(output!.code).toBe(0);
  expect(output!.stdout).toBe(await readmePrinted("packages/runtime/README.md", "approve` \\}\\)\\],[\\s\\S]*?It prints:"));
});

it("runs the README's cancelling-and-watching example and prints what it shows", async () => {
  const output = await runReadmeExample("progress", "packages/runtime/README.md");
  expect(output, "the README has the example").toBeDefined();
  expect(output!.stderr).toBe("");
  expect(output!.code).toBe(0);
  expect(output!.stdout).toBe(await readmePrinted("packages/runtime/README.md", "cancelled\\.error\\.code[\\s\\S]*?It prints:"));
});
