import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decideAdmission, type VerificationSummary } from "./skill-admission.js";
import { decideLibraryUpdate, type LibrarySkillFacts } from "./skill-library-decision.js";

const digestArb = fc.constantFrom("sha256:" + "a".repeat(64), "sha256:" + "b".repeat(64), "sha256:" + "c".repeat(64));
const factsArb: fc.Arbitrary<LibrarySkillFacts> = fc.record({
  name: fc.constant("pdf"),
  recorded: fc.option(fc.record({ library: fc.constantFrom("/lib", "/other"), digest: digestArb, withdrawn: fc.boolean() }), { nil: null }),
  current: fc.option(digestArb, { nil: null }),
  upstream: fc.option(fc.oneof(fc.record({ digest: digestArb }), fc.record({ invalid: fc.constant("bad") })), { nil: null }),
});
const flagsArb = fc.record({ force: fc.boolean(), prune: fc.boolean() });

describe("decideLibraryUpdate (property)", () => {
  it("never touches a locally modified or foreign skill without force, never removes without prune, installs only valid upstream", () => {
    fc.assert(
      fc.property(factsArb, flagsArb, (facts, flags) => {
        const entry = decideLibraryUpdate(facts, "/lib", flags);
        const ours = facts.recorded?.library === "/lib" ? facts.recorded : null;
        const upstreamValid = facts.upstream !== null && "digest" in facts.upstream;
        if (entry.operation === "install") {
          expect(upstreamValid).toBe(true);
          expect(ours?.withdrawn ?? false).toBe(false);
          const untouched = ours ? facts.current === ours.digest : facts.current === null;
          if (!untouched) expect(flags.force).toBe(true);
        }
        if (entry.operation === "remove") {
          expect(flags.prune).toBe(true);
          expect(facts.upstream).toBeNull();
          if (ours && facts.current !== ours.digest) expect(flags.force).toBe(true);
        }
        if (entry.action === "invalid" || entry.action === "withdrawn" || entry.action === "unchanged") expect(entry.operation).toBe("none");
        expect(decideLibraryUpdate(facts, "/lib", flags)).toEqual(entry);
      }),
      { numRuns: 500 },
    );
  });

  it("the four digest cases", () => {
    const [a, b, c] = ["a", "b", "c"].map((letter) => "sha256:" + letter.repeat(64)) as [string, string, string];
    const recorded = { library: "/lib", digest: a, withdrawn: false };
    const off = { force: false, prune: false };
    expect(decideLibraryUpdate({ name: "x", recorded, current: a, upstream: { digest: b } }, "/lib", off)).toMatchObject({ action: "update", operation: "install" });
    expect(decideLibraryUpdate({ name: "x", recorded, current: c, upstream: { digest: b } }, "/lib", off)).toMatchObject({ action: "conflict", operation: "none" });
    expect(decideLibraryUpdate({ name: "x", recorded, current: a, upstream: null }, "/lib", off)).toMatchObject({ action: "removed", operation: "none" });
    expect(decideLibraryUpdate({ name: "x", recorded: null, current: null, upstream: { digest: b } }, "/lib", off)).toMatchObject({ action: "add", operation: "install" });
  });
});

describe("decideAdmission (property)", () => {
  const summaryArb: fc.Arbitrary<VerificationSummary> = fc.record({
    backends: fc.array(fc.record({ backend: fc.constantFrom("pi", "codex"), cases: fc.nat(10), status: fc.constantFrom("passed", "failed", "blocked"), required: fc.boolean() }), { maxLength: 4 }),
    unresolved: fc.record({ critical: fc.nat(2), high: fc.nat(2), medium: fc.nat(2), low: fc.nat(2) }),
  }) as fc.Arbitrary<VerificationSummary>;
  it("refuses exactly when a required backend is blocked or failed or a high/critical failure is open, unless decided manually", () => {
    fc.assert(
      fc.property(fc.option(summaryArb, { nil: undefined }), fc.boolean(), (summary, manual) => {
        const verdict = decideAdmission(summary, manual ? { kind: "manual", by: "me" } : undefined);
        const required = summary?.backends.filter((backend) => backend.required) ?? [];
        const serious = summary !== undefined && (required.some((backend) => backend.status !== "passed") || summary.unresolved.high + summary.unresolved.critical > 0);
        expect(verdict.admitted).toBe(manual || !serious);
        const evidence = (backend: { status: string; cases: number }) => backend.status === "passed" && backend.cases > 0;
        const evidenced = summary !== undefined && summary.backends.some(evidence) && required.every(evidence);
        if (verdict.admitted) expect(verdict.decision).toBe(manual ? "manual" : evidenced ? "verified" : "unverified");
        if (!verdict.admitted) {
          const codes = verdict.refusals.map((refusal) => refusal.code);
          expect(codes.includes("backend_failed")).toBe(required.some((backend) => backend.status === "failed"));
          expect(codes.includes("backend_blocked")).toBe(required.some((backend) => backend.status === "blocked"));
        }
      }),
      { numRuns: 500 },
    );
  });

  const clean = { critical: 0, high: 0, medium: 0, low: 0 };
  it("a required backend that failed refuses admission, as a blocked one does", () => {
    const verdict = decideAdmission({ backends: [{ backend: "pi", cases: 4, status: "failed", required: true }, { backend: "codex", cases: 4, status: "passed", required: false }], unresolved: clean }, undefined);
    expect(verdict).toMatchObject({ admitted: false, refusals: [{ code: "backend_failed" }] });
  });

  it("a summary with no backend evidence is unverified, never verified", () => {
    const cases: VerificationSummary["backends"][] = [
      [],
      [{ backend: "pi", cases: 0, status: "passed", required: true }],
      [{ backend: "pi", cases: 0, status: "passed", required: false }],
      [{ backend: "codex", cases: 3, status: "blocked", required: false }],
      [{ backend: "codex", cases: 3, status: "failed", required: false }],
      // one backend passed cases, but a required one ran none
      [{ backend: "pi", cases: 3, status: "passed", required: false }, { backend: "codex", cases: 0, status: "passed", required: true }],
    ];
    for (const backends of cases) expect(decideAdmission({ backends, unresolved: clean }, undefined)).toEqual({ admitted: true, decision: "unverified" });
    expect(decideAdmission({ backends: [{ backend: "pi", cases: 1, status: "passed", required: true }], unresolved: clean }, undefined)).toEqual({ admitted: true, decision: "verified" });
  });
});
