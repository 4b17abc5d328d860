import { describe, expect, it } from "vitest";
import { makeEngine, reviewTask } from "../../../test/support/workflow-harness.js";
import { classifyEvidenceChange } from "./evidence-change.js";
import type { EvidenceSnapshot } from "./schemas.js";

const snapshot = (extra: Partial<EvidenceSnapshot> = {}): EvidenceSnapshot => ({ context: "", diff: "", testOutput: "", validationStatus: "not_run", revision: "", files: [], ...extra });
const excerpt = (hash: string, text = "x") => ({ path: "a.ts", firstLine: 1, lastLine: 2, text, hash });

describe("task flags request the security and resource reviews", () => {
  it("a low-risk, small task runs a review stage only when its flag asks for it", async () => {
    const { engine, calls } = makeEngine();
    const plain = (await engine.plan(reviewTask("plain")))._unsafeUnwrap();
    expect(plain.stages.filter((stage) => stage.status === "skipped").map((stage) => stage.id)).toEqual(["security_review", "resource_review"]);
    const flagged = (await engine.plan(reviewTask("flags", { security_review: true })))._unsafeUnwrap();
    expect(flagged.stages.filter((stage) => stage.status === "skipped").map((stage) => stage.id)).toEqual(["resource_review"]);
    const run = (await engine.start(reviewTask("both", { security_review: true, resource_review: true })))._unsafeUnwrap();
    const step = (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    expect(calls.map((call) => call.stage)).toEqual(["explore", "review", "security_review", "resource_review"]);
    expect(step.status.stages.some((stage) => stage.status === "skipped")).toBe(false);
    // The flags belong to the task's identity: the same task id cannot drop them.
    expect((await engine.start(reviewTask("both", { security_review: true })))._unsafeUnwrapErr()).toMatchObject({ code: "conflict", details: { changed: ["resource_review"] } });
    expect((await engine.plan(reviewTask("bad", { security_review: "yes" })))._unsafeUnwrapErr().code).toBe("invalid_input");
  });
});

describe("evidence a step brings", () => {
  it("changed evidence is refused outside a checkpoint and changes nothing; the same evidence again restarts nothing", async () => {
    const { engine, calls } = makeEngine();
    const run = (await engine.start(reviewTask("changed", { evidence: { context: "the pager", diff: "+a" } })))._unsafeUnwrap();
    const refused = await engine.step(run.runId, { version: 1, evidence: { diff: "+b" } });
    expect(refused._unsafeUnwrapErr()).toMatchObject({ code: "conflict", retryable: false, details: { reason: "evidence_changed", fields: ["diff"] } });
    expect(calls).toHaveLength(0);
    expect((await engine.status(run.runId))._unsafeUnwrap()).toMatchObject({ version: 1, status: "ready" });
    const step = (await engine.step(run.runId, { version: 1, evidence: { diff: "+a", validationStatus: "passed" } }))._unsafeUnwrap();
    expect(step.status.status).toBe("awaiting_checkpoint");
    expect(JSON.parse(calls[0]!.prompt).evidence).toMatchObject({ diff: "+a", validationStatus: "passed" });
  });

  it("a passed-back packet from an older cycle is refused with why it is stale", async () => {
    const { engine } = makeEngine();
    const run = (await engine.start(reviewTask("stale")))._unsafeUnwrap();
    const first = (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    const old = first.ran[0]!;
    const revised = (await engine.checkpoint(run.runId, { version: first.status.version, action: "revise", evidence: { diff: "+newer" } }))._unsafeUnwrap();
    const refused = (await engine.step(run.runId, { version: revised.version, packets: [{ digest: old.packetDigest!, packet: old.packet! }] }))._unsafeUnwrapErr();
    expect(refused).toMatchObject({ code: "invalid_input", details: { reason: "stale_packet", why: "older_cycle" } });
    expect(refused.message).toMatch(/correction cycle 0 .* cycle 1/);
    const other = { ...old.packet!, runId: "another-run" };
    const { digest } = await import("@keel/core");
    const foreign = (await engine.step(run.runId, { version: revised.version, packets: [{ digest: digest(other), packet: other }] }))._unsafeUnwrapErr();
    expect(foreign).toMatchObject({ details: { reason: "stale_packet", why: "other_run" } });
    expect(foreign.message).toContain("belongs to run another-run");
  });

  it("classifies a step's evidence: same, added, refreshed or changed", () => {
    expect(classifyEvidenceChange(snapshot({ diff: "+a" }), snapshot({ diff: "+a" }))._unsafeUnwrap()).toEqual({ kind: "same" });
    expect(classifyEvidenceChange(snapshot({ context: "c" }), snapshot({ context: "c", diff: "+a", validationStatus: "failed" }))._unsafeUnwrap()).toEqual({ kind: "added", fields: ["diff", "validationStatus"] });
    expect(classifyEvidenceChange(snapshot(), snapshot({ files: [excerpt("h1")] }))._unsafeUnwrap()).toEqual({ kind: "added", fields: ["files"] });
    expect(classifyEvidenceChange(snapshot({ files: [excerpt("h1")] }), snapshot({ files: [excerpt("h2", "y")] }))._unsafeUnwrap()).toEqual({ kind: "refreshed", files: ["a.ts"] });
    expect(classifyEvidenceChange(snapshot({ diff: "+a" }), snapshot({ diff: "+b" }))._unsafeUnwrap()).toEqual({ kind: "changed", fields: ["diff"] });
    expect(classifyEvidenceChange(snapshot({ validationStatus: "passed" }), snapshot({ validationStatus: "failed" }))._unsafeUnwrap()).toEqual({ kind: "changed", fields: ["validationStatus"] });
    expect(classifyEvidenceChange(snapshot({ files: [excerpt("h1")] }), snapshot({ files: [] }))._unsafeUnwrap()).toEqual({ kind: "changed", fields: ["files"] });
    expect(classifyEvidenceChange(snapshot(), "x" as never)._unsafeUnwrapErr().code).toBe("invalid_input");
  });
});
