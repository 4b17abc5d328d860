import { runCli } from "@keel/cli";
import { createFsStore } from "@keel/store-fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import path from "node:path";
import { captureIo, temporaryDirectory } from "../../../../test/support/cli-harness.js";

let scratch: { dir: string; remove: () => void };
beforeEach(() => {
  scratch = temporaryDirectory("demo-workflow");
});
afterEach(() => scratch.remove());

describe("keel demo --workflow", () => {
  for (const workflow of ["review_change", "implement_issue"] as const) {
    it(`runs ${workflow} end to end on the fs store, revising once and then accepting`, async () => {
      const io = captureIo({ cwd: scratch.dir });
      expect(await runCli(["demo", "--workflow", workflow, "--dir", "demo"], io)).toBe(0);
      const lines = io.out.split("\n");
      expect(lines.filter((line) => line.includes("supervisor at checkpoint")).map((line) => line.trim().split(": ")[1])).toEqual(
        workflow === "implement_issue" ? ["accept", "revise", "accept"] : ["revise", "accept"],
      );
      expect(io.out).toMatch(/stage explore +explore +completed +attempt 1 on local-coder \(live\)/);
      expect(io.out).toMatch(/→ completed at (final|decide) · version \d+ · attempts \d+ · corrections 1\/2 · calls \d+\/40/);
      if (workflow === "review_change") expect(io.out).toMatch(/stage resource_review +skipped \(condition\)/);
      expect(io.out).toContain(`${workflow}: completed after 1 correction(s)`);
      const store = createFsStore({ dir: path.join(scratch.dir, "demo", "workflow-store") });
      const runs = (await store.docs.list(["workflow-runs"]))._unsafeUnwrap().items;
      expect(runs).toHaveLength(1);
      const journal = (await store.logs.read(["workflow-journal", runs[0]!.key[1]!]))._unsafeUnwrap();
      // Six calls; the step and checkpoint commits ride in the same journal (commits alone have no callIndex).
      expect(journal.filter((record) => typeof (record.value as { callIndex?: unknown }).callIndex === "number")).toHaveLength(6);
      await store.close();
    });
  }

  it("refuses an unknown workflow as bad usage", async () => {
    const io = captureIo({ cwd: scratch.dir });
    expect(await runCli(["demo", "--workflow", "nope", "--dir", "demo"], io)).toBe(2);
    expect(io.err).toMatch(/unknown workflow "nope"/);
  });
});
