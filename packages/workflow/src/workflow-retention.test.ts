import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KeelStore } from "@keel/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeEngine, reviewTask, scriptedExecutor } from "../../../test/support/workflow-harness.js";

const CONTEXT = "SECRET-CONTEXT the pager skips the last item";
const DIFF = "--- a/pager.ts\n+++ b/pager.ts\n+SECRET-DIFF const last = items.length - 1;\n";
const SOURCE = "export const SECRET_SOURCE_LINE = 1;\n";
const answer = (stage: string) => `SECRET-ANSWER of ${stage}`;

/** Every document and log record of the store, as one JSON text. */
async function storeText(store: KeelStore): Promise<string> {
  const parts: string[] = [];
  for (const prefix of [["workflow-runs"], ["workflow-tasks"], ["workflow-index"]]) {
    const listed = (await store.docs.list(prefix))._unsafeUnwrap();
    for (const item of listed.items) parts.push(JSON.stringify((await store.docs.get(item.key))._unsafeUnwrap()?.value));
  }
  for (const log of (await store.logs.list([]))._unsafeUnwrap()) parts.push(JSON.stringify((await store.logs.read(log))._unsafeUnwrap()));
  return parts.join("\n");
}

describe("retention per engine", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "keel-retention-"));
    await writeFile(join(root, "pager.ts"), SOURCE);
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const task = (taskId: string) => reviewTask(taskId, { evidence: { context: CONTEXT, diff: DIFF, validationStatus: "passed", files: [{ path: "pager.ts", firstLine: 1, lastLine: 1 }] } });

  it('"digests" keeps no raw text: the caller passes evidence and packets back, each checked against its digest', async () => {
    const executor = scriptedExecutor({ text: (call) => answer(call.stage) });
    const calls = executor.calls;
    const { engine, store } = makeEngine({ retention: "digests", sourceRoot: root, executeStage: executor.executeStage });
    const run = (await engine.start(reviewTask("held", { evidence: { context: CONTEXT, files: [{ path: "pager.ts", firstLine: 1, lastLine: 1 }] } })))._unsafeUnwrap();
    // The run holds the context as a digest: a step without it, or with another text, is refused and runs nothing.
    expect((await engine.step(run.runId, { version: 1 }))._unsafeUnwrapErr()).toMatchObject({ code: "not_found", details: { reason: "evidence_missing", fields: ["context"] } });
    expect((await engine.step(run.runId, { version: 1, evidence: { context: "another context" } }))._unsafeUnwrapErr()).toMatchObject({ code: "invalid_input", details: { reason: "evidence_mismatch", fields: ["context"] } });
    expect(calls).toHaveLength(0);
    // With it: explore runs on the whole evidence (the excerpt read again from the source root); the review waits for a diff.
    const blocked = (await engine.step(run.runId, { version: 1, evidence: { context: CONTEXT } }))._unsafeUnwrap();
    expect(blocked.status.outcome).toMatchObject({ reason: "missing_evidence" });
    const explorePrompt = JSON.parse(calls[0]!.prompt) as { evidence: { context: string; files: { text: string }[] } };
    expect(explorePrompt.evidence.context).toBe(CONTEXT);
    expect(explorePrompt.evidence.files[0]!.text).toContain("SECRET_SOURCE_LINE");
    const explore = blocked.ran[0]!;
    // The store cannot rebuild the explore packet the review reads: the caller passes it back.
    const withDiff = { version: blocked.status.version, evidence: { context: CONTEXT, diff: DIFF } };
    expect((await engine.step(run.runId, withDiff))._unsafeUnwrapErr()).toMatchObject({ code: "not_found", details: { reason: "packets_missing", digests: [explore.packetDigest] } });
    const tampered = { ...explore.packet!, text: "no findings" };
    expect((await engine.step(run.runId, { ...withDiff, packets: [{ digest: explore.packetDigest!, packet: tampered }] }))._unsafeUnwrapErr()).toMatchObject({ details: { reason: "digest_mismatch" } });
    const reviewed = (await engine.step(run.runId, { ...withDiff, packets: [{ digest: explore.packetDigest!, packet: explore.packet! }] }))._unsafeUnwrap();
    expect(reviewed.status.status).toBe("awaiting_checkpoint");
    expect(calls.map((call) => call.stage)).toEqual(["explore", "review"]);
    expect((JSON.parse(calls[1]!.prompt) as { packets: { text: string }[] }).packets.map((packet) => packet.text)).toEqual([answer("explore")]);
    // A revise brings a new diff, held as its digest; the next step passes back the context and that diff.
    const revised = (await engine.checkpoint(run.runId, { version: reviewed.status.version, action: "revise", evidence: { diff: `${DIFF}+SECRET-DIFF again\n` } }))._unsafeUnwrap();
    expect((await engine.step(run.runId, { version: revised.version, evidence: { context: CONTEXT, diff: DIFF } }))._unsafeUnwrapErr()).toMatchObject({ details: { reason: "evidence_mismatch", fields: ["diff"] } });
    const again = (await engine.step(run.runId, { version: revised.version, evidence: { context: CONTEXT, diff: `${DIFF}+SECRET-DIFF again\n` } }))._unsafeUnwrap();
    expect(again.status.status).toBe("awaiting_checkpoint");
    const kept = await storeText(store);
    for (const secret of ["SECRET-CONTEXT", "SECRET-DIFF", "SECRET_SOURCE_LINE", "SECRET-ANSWER"]) expect(kept).not.toContain(secret);
  });

  it('"digests" cannot keep packet contents, and refuses an unknown mode', () => {
    expect(() => makeEngine({ retention: "digests", retainPacketContents: true })).toThrow(expect.objectContaining({ code: "invalid_input" }));
    expect(() => makeEngine({ retention: "none" as never })).toThrow(expect.objectContaining({ code: "invalid_input" }));
  });

  it("full is the default and keeps the evidence and answers; telemetry carries no raw text in either mode", async () => {
    for (const retention of ["full", "digests"] as const) {
      const { engine, store, events } = makeEngine({ retention, sourceRoot: root, executeStage: scriptedExecutor({ text: (call) => answer(call.stage) }).executeStage });
      const run = (await engine.start(task(`t-${retention}`)))._unsafeUnwrap();
      const given = retention === "digests" ? { evidence: { context: CONTEXT, diff: DIFF } } : {};
      const step = (await engine.step(run.runId, { version: 1, ...given }))._unsafeUnwrap();
      expect(step.status.status).toBe("awaiting_checkpoint");
      expect(step.ran.map((call) => call.packet?.text)).toEqual([answer("explore"), answer("review")]);
      const kept = await storeText(store);
      for (const secret of ["SECRET-CONTEXT", "SECRET-DIFF", "SECRET_SOURCE_LINE", "SECRET-ANSWER"]) expect(kept.includes(secret), `${retention} store holds ${secret}`).toBe(retention === "full");
      expect(JSON.stringify(events)).not.toMatch(/SECRET/);
    }
  });
});
