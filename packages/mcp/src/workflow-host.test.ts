import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KeelError } from "@keel/core";
import { createMemoryStore } from "@keel/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createWorkflowHost, refusalOf, whatToDo } from "./index.js";

const models = [{ id: "local-coder", strength: 50, contextWindow: 64_000, location: "installed" as const, tier: "medium" as const }];
const task = { taskId: "t1", objective: "review", workflow: "review_change", risk: "low", evidence: { diff: "-a\n+b\n", validationStatus: "passed" } };
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "keel-host-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("workflow host", () => {
  it("throws invalid_input for a malformed config", () => {
    expect(() => createWorkflowHost({ store: createMemoryStore(), config: { models, executor: { kind: "telepathy" } } as never })).toThrow(KeelError);
  });

  it("a cli executor names any adapter of @keel/backends, and nothing else", () => {
    for (const backend of ["codex", "cursor", "qoder"]) {
      expect(() => createWorkflowHost({ store: createMemoryStore(), config: { models, executor: { kind: "cli", backend } } })).not.toThrow();
    }
    for (const backend of ["scripted", "kit", "telepathy"]) {
      expect(() => createWorkflowHost({ store: createMemoryStore(), config: { models, executor: { kind: "cli", backend } } })).toThrow(expect.objectContaining({ code: "invalid_input" }));
    }
  });

  it("a catalog directory with issues: catalog reports them, every other operation refuses with invalid_input", async () => {
    await mkdir(join(dir, "skills"));
    await writeFile(join(dir, "skills", "bad.json"), JSON.stringify({ schemaVersion: 1, id: "bad", colour: "red" }));
    const host = createWorkflowHost({ store: createMemoryStore(), config: { models, executor: { kind: "scripted", reply: "ok" } }, catalogDir: dir });
    const report = (await host.run("catalog", {}))._unsafeUnwrap() as { valid: boolean; issues: { file: string }[] };
    expect(report.valid).toBe(false);
    expect(report.issues.every((issue) => issue.file === join(dir, "skills", "bad.json"))).toBe(true);
    const plan = await host.run("plan", task);
    expect(plan._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((plan._unsafeUnwrapErr().details["issues"] as unknown[]).length).toBe(report.issues.length);
  });

  it("a scripted executor without a reply for a skill fails that call, named, and hands the stage over", async () => {
    const host = createWorkflowHost({ store: createMemoryStore(), config: { models, executor: { kind: "scripted", replies: { explore: "facts" } } } });
    const started = (await host.run("start", task))._unsafeUnwrap() as { runId: string; version: number };
    const step = (await host.run("step", { runId: started.runId, version: started.version }))._unsafeUnwrap() as { ran: { skill: string; ok: boolean; error?: string }[]; status: { status: string } };
    expect(step.ran.map((call) => [call.skill, call.ok])).toEqual([
      ["explore", true],
      ["diff_review", false],
    ]);
    expect(step.ran[1]!.error).toBe("backend_failed");
  });

  it("a stale version is refused as the docs show: conflict, retryable false (the same call never succeeds; read the status and decide on the latest version)", async () => {
    const host = createWorkflowHost({ store: createMemoryStore(), config: { models, executor: { kind: "scripted", reply: "ok" } } });
    const started = (await host.run("start", task))._unsafeUnwrap() as { runId: string; version: number };
    const step = (await host.run("step", { runId: started.runId, version: started.version }))._unsafeUnwrap() as { status: { version: number } };
    for (const [operation, request] of [
      ["step", { runId: started.runId, version: started.version }],
      ["checkpoint", { runId: started.runId, version: started.version, action: "accept" }],
    ] as const) {
      const refused = (await host.run(operation, request))._unsafeUnwrapErr();
      expect(refusalOf(refused).error).toMatchObject({ code: "conflict", retryable: false, whatToDo: expect.stringContaining("latest version"), details: { reason: "stale_version", expected: started.version, actual: step.status.version } });
    }
  });

  it("says what to do for every refusal, by code", () => {
    expect(whatToDo(new KeelError("conflict", "stale"))).toContain("latest version");
    expect(whatToDo(new KeelError("conflict", "changed", { details: { reason: "source_changed" } }))).toContain("fresh evidence");
    expect(whatToDo(new KeelError("too_large", "big"))).toContain("200000");
    expect(whatToDo(new KeelError("lease_held", "busy"))).toContain("wait");
  });
});
