import { expect, it } from "vitest";
import { readmePrinted, runReadmeExample } from "../../../test/support/run-ts.js";

// The README's example runs as written (in a child process, from beside the README so that the
// MCP SDK resolves from this package's node_modules), so it cannot rot.
it("runs the README's example and prints what the README says", { timeout: 120_000 }, async () => {
  const output = await runReadmeExample("readme", "packages/mcp/README.md");
  expect(output, "the README has the example").toBeDefined();
  expect(output!.stderr).toBe("");
  expect(output!.code).toBe(0);
  expect(output!.stdout).toBe(await readmePrinted("packages/mcp/README.md", "\\nprints\\n"));
});
