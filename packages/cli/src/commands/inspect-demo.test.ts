import path from "node:path";
import { runCli } from "@keel/cli";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { countDamaged, type StoreInspection } from "../internal/inspect-model.js";
import { captureIo, temporaryDirectory } from "../../../../test/support/cli-harness.js";

let scratch: { dir: string; remove: () => void };
beforeEach(() => {
  scratch = temporaryDirectory("inspect-demo");
});
afterEach(() => scratch.remove());

describe("keel inspect after keel demo", () => {
  it("reads everything the demo left in its store, and keel report reads its events", async () => {
    const demo = captureIo({ cwd: scratch.dir });
    expect(await runCli(["demo", "--dir", "demo", "--policies", "fresh,rolling", "--rounds", "1"], demo)).toBe(0);
    const io = captureIo({ cwd: scratch.dir });
    expect(await runCli(["inspect", path.join("demo", "store"), "--json"], io)).toBe(0);
    const inspection = JSON.parse(io.out) as StoreInspection;
    expect(countDamaged(inspection)).toBe(0);
    expect(inspection.warnings).toEqual([]);
    expect(inspection.missions.length).toBe(2);
    // Under `rolling` every role has a capsule bound to the scripted backend's thread.
    const rolling = inspection.missions.find((mission) => mission.id.includes("rolling"));
    expect(rolling?.roles.length).toBeGreaterThan(0);
    for (const role of rolling?.roles ?? []) {
      expect(role.capsule).toMatchObject({ status: "ok", value: { thread: { backend: expect.any(String), threadId: expect.any(String) } } });
    }
    expect(inspection.budgets.length).toBeGreaterThan(0);
    expect(inspection.budgets.every((ledger) => ledger.status === "ok")).toBe(true);
    const report = captureIo({ cwd: scratch.dir });
    expect(await runCli(["report", path.join("demo", "events.jsonl")], report)).toBe(0);
    expect(report.out).toMatch(/^rolling +\d+ /m);
  });
});
