import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PermissionCase, PermissionReport, WarningShape } from "./support/sessions-permission-worker.js";
import { runWorker, temporaryDirectory } from "./support/sessions-fixture-dirs.js";

const workerFile = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "support/sessions-permission-worker.ts");

const temporary = temporaryDirectory("permissions");
let reports: Map<PermissionCase, PermissionReport>;
beforeAll(async () => {
  // Permission bits bind the worker even when the tests run as root (see `runWorker`).
  const run = await runWorker<PermissionReport>({ dir: temporary.dir }, { file: workerFile, permissionBound: true });
  if (run.code !== 0) throw new Error(`the permission worker exited with ${run.code}:\n${run.stderr}`);
  reports = new Map(run.lines.map((report) => [report.case, report]));
}, 120_000);
afterAll(() => temporary.remove());

const read = (target: string): WarningShape => ({ target, operation: "read", code: "io_failed" });
const write = (target: string): WarningShape => ({ target, operation: "write", code: "io_failed" });

/**
 * Per case: the error a plain access gets, the plan of the turn under the fault, its warnings,
 * and the capsule's total turns right after it (2 before the fault: 3 when the capsule was
 * written, 2 when it was not).
 */
const expectations: Record<PermissionCase, { probe: string; action: string; threadId: string | null; warnings: WarningShape[]; totalTurnsAfterFault: number }> = {
  // Unreadable: whether it exists is unknown, so the turn starts a new thread; the write reads it first, so it fails too.
  "capsule-unreadable": { probe: "EACCES", action: "fresh", threadId: null, warnings: [read("capsule"), write("capsule")], totalTurnsAfterFault: 2 },
  "capsule-directory-unwritable": { probe: "EACCES", action: "resumed", threadId: "t-1", warnings: [write("capsule")], totalTurnsAfterFault: 2 },
  // The outcome has checkpoint items, so the checkpoint is written too (and read first).
  "checkpoint-unreadable": { probe: "EACCES", action: "resumed", threadId: "t-1", warnings: [read("checkpoint"), write("checkpoint")], totalTurnsAfterFault: 3 },
  "mission-directory-unwritable": { probe: "EACCES", action: "resumed", threadId: "t-1", warnings: [write("checkpoint")], totalTurnsAfterFault: 3 },
};

describe("real permission faults (chmod) on the filesystem store never change a successful result", () => {
  it("runs every case", () => {
    expect([...reports.keys()].sort()).toEqual(Object.keys(expectations).sort());
  });

  for (const [name, expected] of Object.entries(expectations) as [PermissionCase, (typeof expectations)[PermissionCase]][]) {
    it(`${name}: the outcome is returned unchanged with warnings, nothing stored is lost, and the next turn recovers`, () => {
      const report = reports.get(name)!;
      // The fault is real: a plain access of the path fails with the kernel's own error.
      expect(report.probe).toBe(expected.probe);
      expect(report.sameOutcome).toBe(true);
      expect({ action: report.faulty.action, threadId: report.faulty.threadId }).toEqual({ action: expected.action, threadId: expected.threadId });
      expect(report.faulty.warnings).toEqual(expected.warnings);
      expect(report.faulty.events).toEqual(expected.warnings);
      expect(report.totalTurnsAfterFault).toBe(expected.totalTurnsAfterFault);
      // Permission given back: the role resumes its stored thread (t-1: a thread started under the fault was never stored), with no warning.
      expect(report.recovery).toEqual({
        action: "resumed",
        threadId: "t-1",
        warnings: [],
        totalTurns: expected.totalTurnsAfterFault + 1,
      });
    });
  }
});
