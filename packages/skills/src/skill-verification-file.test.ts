import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { temporaryDirectory, writeSkill } from "./__fixtures__/skill-tree.js";
import { digestSkillTree, readVerificationSummary, type VerificationBackendResult } from "./schemas.js";
import { importSkill, readSkillMetadata } from "./index.js";

let work: { dir: string; cleanup: () => void };
let layer: string;
let from: string;
beforeEach(() => {
  work = temporaryDirectory("keel-verification-");
  layer = join(work.dir, "layer");
  from = join(work.dir, "source", "pdf");
  writeSkill(from);
});
afterEach(() => work.cleanup());

const clean = { critical: 0, high: 0, medium: 0, low: 0 };
const passed: VerificationBackendResult[] = [{ backend: "pi", cases: 3, status: "passed", required: true }];

function file(name: string, content: unknown): string {
  const path = join(work.dir, name);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

describe("readVerificationSummary", () => {
  it("reads who verified, when, what was checked and the digest it covers", async () => {
    const skillDigest = (await digestSkillTree(from))._unsafeUnwrap().digest;
    const summary = { verifiedBy: "ci@example", verifiedAt: "2026-01-15T10:00:00Z", skillDigest, backends: passed, unresolved: clean };
    expect((await readVerificationSummary(file("ok.json", summary)))._unsafeUnwrap()).toEqual(summary);
  });

  it("refuses a missing file, a directory, bad JSON, a wrong shape and an oversized file with typed codes", async () => {
    expect((await readVerificationSummary(join(work.dir, "absent.json")))._unsafeUnwrapErr().code).toBe("not_found");
    mkdirSync(join(work.dir, "dir.json"));
    const cases: [string, string][] = [
      [join(work.dir, "dir.json"), "invalid_input"],
      [file("bad.json", "{ not json"), "invalid_input"],
      [file("array.json", []), "invalid_input"],
      [file("unknown.json", { backends: passed, unresolved: clean, rationale: "long text" }), "invalid_input"],
      [file("when.json", { backends: passed, unresolved: clean, verifiedAt: "yesterday" }), "invalid_input"],
      [file("digest.json", { backends: passed, unresolved: clean, skillDigest: "sha256:xyz" }), "invalid_input"],
      [file("big.json", " ".repeat(1_048_577)), "too_large"],
    ];
    for (const [path, code] of cases) {
      const error = (await readVerificationSummary(path))._unsafeUnwrapErr();
      expect(error.code, path).toBe(code);
      if (code === "invalid_input") expect(error.details, path).toMatchObject({ reason: "verification_invalid" });
    }
  });
});

describe("importSkill with a verification summary", () => {
  it("keeps who verified and when in the metadata, beside the summary's digest", async () => {
    const skillDigest = (await digestSkillTree(from))._unsafeUnwrap().digest;
    const verification = { verifiedBy: "ci@example", verifiedAt: "2026-01-15T10:00:00+01:00", skillDigest, backends: passed, unresolved: clean };
    const report = (await importSkill({ from, layer, role: "engineer", routing: "unclassified", verification }))._unsafeUnwrap();
    expect(report.metadata.admission).toMatchObject({ decision: "verified", verifiedBy: "ci@example", verifiedAt: "2026-01-15T10:00:00+01:00" });
    expect(report.metadata.digest).toBe(skillDigest);
    expect((await readSkillMetadata(report.target))._unsafeUnwrap()).toEqual(report.metadata);
  });

  it("refuses a summary of other content, and writes nothing", async () => {
    const other = `sha256:${"0".repeat(64)}`;
    for (const dryRun of [true, false]) {
      const error = (await importSkill({ from, layer, role: "engineer", routing: "unclassified", dryRun, verification: { skillDigest: other, backends: passed, unresolved: clean } }))._unsafeUnwrapErr();
      expect(error.code).toBe("invalid_input");
      expect(error.details).toMatchObject({ reason: "verification_digest_mismatch", verified: other });
    }
    expect(existsSync(layer)).toBe(false);
  });
});
