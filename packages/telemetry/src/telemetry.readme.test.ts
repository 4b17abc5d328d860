import { expect, it } from "vitest";
import { readmePrinted, runReadmeExample } from "../../../test/support/run-ts.js";

// The README's example runs as written (in a child process), so it cannot rot.
it("runs the README's example as written and prints the report it shows", async () => {
  const output = await runReadmeExample("readme", "packages/telemetry/README.md");
  const shown = (await readmePrinted("packages/telemetry/README.md", "It prints[^\\n]*"))?.replace(/\.\.\.\n$/, "");
  expect(output, "the README has the example").toBeDefined();
  expect(shown, "the README shows what it prints").toBeTruthy();
  expect(output!.stderr).toBe("");
  expect(output!.code).toBe(0);
  expect(output!.stdout.startsWith(shown!)).toBe(true);
});
