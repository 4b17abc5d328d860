import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { temporaryDirectory, writeSkill } from "./__fixtures__/skill-tree.js";
import type { VerificationSummary } from "./skill-admission.js";
import { importSkill } from "./skill-import.js";

let work: { dir: string; cleanup: () => void };
beforeEach(() => {
  work = temporaryDirectory("keel-admission-");
});
afterEach(() => work.cleanup());

const clean = { critical: 0, high: 0, medium: 0, low: 0 };

describe("importSkill: the verification summary", () => {
  it("refuses a summary whose required backend failed, and writes nothing", async () => {
    const from = join(work.dir, "source", "pdf");
    writeSkill(from);
    const layer = join(work.dir, "layer");
    const verification: VerificationSummary = { backends: [{ backend: "pi", cases: 5, status: "failed", required: true }], unresolved: clean };
    const error = (await importSkill({ from, layer, role: "engineer", routing: "unclassified", verification }))._unsafeUnwrapErr();
    expect(error.code).toBe("invalid_input");
    expect(error.details).toMatchObject({ reason: "admission_refused", refusals: [{ code: "backend_failed" }] });
    expect(existsSync(layer)).toBe(false);
  });

  it("records a summary without backend evidence as unverified, and one with evidence as verified", async () => {
    const from = join(work.dir, "source", "pdf");
    writeSkill(from);
    const layer = join(work.dir, "layer");
    const empty: VerificationSummary = { backends: [], unresolved: clean };
    const none = (await importSkill({ from, layer, role: "engineer", routing: "unclassified", verification: empty }))._unsafeUnwrap();
    expect(none.metadata.admission.decision).toBe("unverified");
    const zero: VerificationSummary = { backends: [{ backend: "pi", cases: 0, status: "passed", required: true }], unresolved: clean };
    const idle = (await importSkill({ from, layer, role: "engineer", routing: "unclassified", verification: zero, overwrite: true }))._unsafeUnwrap();
    expect(idle.metadata.admission.decision).toBe("unverified");
    const passed: VerificationSummary = { backends: [{ backend: "pi", cases: 2, status: "passed", required: true }], unresolved: clean };
    const verified = (await importSkill({ from, layer, role: "engineer", routing: "unclassified", verification: passed, overwrite: true }))._unsafeUnwrap();
    expect(verified.metadata.admission.decision).toBe("verified");
  });
});
