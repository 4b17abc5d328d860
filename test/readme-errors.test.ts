import { expect, it } from "vitest";
import { runReadmeExample } from "./support/run-ts.js";

// The README's "Errors and results" example is run as it is written, so it can never rot.
it("runs the README's errors-and-results example", async () => {
  const output = await runReadmeExample("errors");
  expect(output, "the README has the errors-and-results example").toBeDefined();
  if (!output) return;
  expect(output.stderr).toBe("");
  expect(output.code).toBe(0);
  const lines = output.stdout.trim().split("\n");
  expect(lines).toHaveLength(4);
  // isErr() with the error's code: the turn without a work session is refused, not thrown.
  expect(lines[0]).toMatch(/^no_session: task "m1\/engineer" declared a budget but no work session is open/);
  // unwrapOrThrow returned the value of an Ok.
  expect(lines[1]).toBe("work session open: m1");
  // match took the Ok branch: a fresh session, no warnings, the backend's text.
  expect(lines[2]).toBe("fresh, 0 warnings: Decision: plan written");
  // unwrapOrThrow threw the Err's KeelError with its code.
  expect(lines[3]).toMatch(/^invalid_input: role "no\/such\/role" is not a safe name/);
});
