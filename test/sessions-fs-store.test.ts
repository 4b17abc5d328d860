import { mkdirSync, rmSync, writeFileSync, existsSync } from "node:fs";
import path from "node:path";
import { createEventBus, type RoleSessionWarningEvent } from "@keel/core";
import { createRoleSessions, type TurnOutcome, type RoleSessionTurnRequest } from "@keel/sessions";
import { createFsStore } from "@keel/store-fs";
import { okAsync } from "neverthrow";
import { afterEach, describe, expect, it } from "vitest";
import { temporaryDirectory } from "./support/sessions-fixture-dirs.js";

const request: RoleSessionTurnRequest = { missionId: "m1", role: "engineer", backend: { id: "codex", resumable: true }, model: null, branch: "main", objectiveRevision: 1 };
const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function directory() {
  const { dir, remove } = temporaryDirectory("fs");
  cleanups.push(remove);
  return dir;
}

function open(dir: string) {
  const store = createFsStore({ dir });
  const events = createEventBus();
  const warnings: RoleSessionWarningEvent[] = [];
  events.on("role.session.warning", (event) => warnings.push(event));
  const sessions = createRoleSessions({ store, events, policy: "rolling" });
  return { store, sessions, warnings };
}

const outcome = (threadId: string): TurnOutcome => ({ text: "answer", threadId, usage: null, promptBytes: 300, openCheckpointItems: ["next"] });
const keepThread = (fallback: string) => (plan: { threadId: string | null }) => okAsync(outcome(plan.threadId ?? fallback));

describe("on the filesystem store", () => {
  it("keeps the capsule at <dir>/missions/<mission>/role-sessions/<role>.json", async () => {
    const dir = directory();
    const { store, sessions } = open(dir);
    (await sessions.runTurn(request, keepThread("t-1")))._unsafeUnwrap();
    await store.close();
    expect(existsSync(path.join(dir, "missions", "m1", "role-sessions", "engineer.json"))).toBe(true);
  });

  it("a new instance on the same directory continues the rolling session: same thread, same counters", async () => {
    const dir = directory();
    const first = open(dir);
    (await first.sessions.initMissionCheckpoint("m1"))._unsafeUnwrap();
    for (let index = 0; index < 3; index++) (await first.sessions.runTurn(request, keepThread("t-1")))._unsafeUnwrap();
    await first.store.close();
    const second = open(dir);
    const result = (await second.sessions.runTurn(request, keepThread("t-2")))._unsafeUnwrap();
    expect(result.plan).toMatchObject({ action: "resumed", threadId: "t-1", turn: 4 });
    expect(result.warnings).toEqual([]);
    const capsule = (await second.sessions.readCapsule("m1", "engineer"))._unsafeUnwrap()!;
    expect(capsule.counters).toMatchObject({ turnsSinceRotation: 4, totalTurns: 4, observedInputTokens: 400 });
    await second.store.close();
  });
});

describe("initMissionCheckpoint on the filesystem store", () => {
  it("two initializers (separate store instances) racing a role writer never lose the role's items", async () => {
    const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    for (let run = 0; run < 6; run++) {
      const dir = directory();
      const [a, b, c] = [open(dir), open(dir), open(dir)];
      const [first, second, written] = await Promise.all([
        later((run * 7) % 11).then(() => a.sessions.initMissionCheckpoint("m1")),
        later((run * 5) % 13).then(() => b.sessions.initMissionCheckpoint("m1")),
        c.sessions.runTurn(request, () => okAsync(outcome(`t-${run}`))),
      ]);
      expect(written._unsafeUnwrap().warnings.filter((warning) => warning.operation === "write")).toEqual([]);
      expect([first, second].filter((result) => result._unsafeUnwrap().created).length).toBeLessThanOrEqual(1);
      const final = (await a.sessions.readMissionCheckpoint("m1"))._unsafeUnwrap()!;
      expect(final.checkpoint.roles.engineer?.openItems).toEqual(["next"]);
      await Promise.all([a.store.close(), b.store.close(), c.store.close()]);
    }
  });
});

describe("real file faults on the filesystem store never change a successful result", () => {
  async function prepared() {
    const dir = directory();
    const opened = open(dir);
    (await opened.sessions.initMissionCheckpoint("m1"))._unsafeUnwrap();
    (await opened.sessions.runTurn(request, keepThread("t-1")))._unsafeUnwrap();
    cleanups.push(() => opened.store.close());
    return { dir, ...opened, capsuleFile: path.join(dir, "missions", "m1", "role-sessions", "engineer.json"), checkpointFile: path.join(dir, "missions", "m1", "checkpoint.json") };
  }
  const shapes = (warnings: { target: string; operation: string; code: string }[]) => warnings.map(({ target, operation, code }) => ({ target, operation, code }));

  it("an unwritable capsule path (the role-sessions directory replaced by a file)", async () => {
    const { dir, sessions, warnings } = await prepared();
    const roleSessions = path.join(dir, "missions", "m1", "role-sessions");
    rmSync(roleSessions, { recursive: true });
    writeFileSync(roleSessions, "not a directory");
    const expected = outcome("t-1");
    const result = (await sessions.runTurn(request, () => okAsync(expected)))._unsafeUnwrap();
    expect(result.outcome).toBe(expected);
    expect(shapes(result.warnings)).toEqual([
      { target: "capsule", operation: "read", code: "io_failed" },
      { target: "capsule", operation: "write", code: "io_failed" },
    ]);
    expect(shapes(warnings)).toEqual(shapes(result.warnings));
  });

  it("a readable but unwritable capsule (its backup path blocked by a directory)", async () => {
    const { capsuleFile, sessions } = await prepared();
    rmSync(`${capsuleFile}.bak`, { force: true });
    mkdirSync(`${capsuleFile}.bak`);
    writeFileSync(path.join(`${capsuleFile}.bak`, "x"), "in the way");
    const expected = outcome("t-1");
    const result = (await sessions.runTurn(request, () => okAsync(expected)))._unsafeUnwrap();
    expect(result.outcome).toBe(expected);
    expect(result.plan).toMatchObject({ action: "resumed", threadId: "t-1" });
    expect(shapes(result.warnings)).toEqual([{ target: "capsule", operation: "write", code: "io_failed" }]);
    // The old capsule is intact.
    expect((await sessions.readCapsule("m1", "engineer"))._unsafeUnwrap()?.counters.totalTurns).toBe(1);
  });

  it("an unreadable (corrupt) capsule, its backup corrupt too", async () => {
    const { capsuleFile, sessions } = await prepared();
    writeFileSync(capsuleFile, "{ torn");
    writeFileSync(`${capsuleFile}.bak`, "{ torn too");
    const expected = outcome("t-9");
    const result = (await sessions.runTurn(request, () => okAsync(expected)))._unsafeUnwrap();
    expect(result.outcome).toBe(expected);
    expect(result.plan).toMatchObject({ action: "fresh", capsule: null });
    expect(shapes(result.warnings)).toEqual([{ target: "capsule", operation: "read", code: "corrupt" }]);
    // The save replaced the damaged capsule (its bytes kept in the store's quarantine): the next turn resumes.
    const next = (await sessions.runTurn(request, keepThread("t-9")))._unsafeUnwrap();
    expect(next.warnings.filter((warning) => warning.target === "capsule")).toEqual([]);
    expect(next.plan).toMatchObject({ action: "resumed", threadId: "t-9" });
  });

  it("a capsule that is valid JSON but not a valid capsule is ignored, then replaced", async () => {
    const { store, sessions } = await prepared();
    const key = ["missions", "m1", "role-sessions", "engineer"];
    const doc = (await store.docs.get(key))._unsafeUnwrap()!;
    (await store.docs.put(key, { ...(doc.value as object), transcript: ["a whole conversation"] }, { expectedVersion: doc.version }))._unsafeUnwrap();
    const result = (await sessions.runTurn(request, keepThread("t-2")))._unsafeUnwrap();
    expect(shapes(result.warnings)).toEqual([{ target: "capsule", operation: "read", code: "corrupt" }]);
    expect(result.plan).toMatchObject({ action: "fresh", reason: "first_turn" });
    expect((await sessions.readCapsule("m1", "engineer"))._unsafeUnwrap()?.thread.threadId).toBe("t-2");
  });

  it("a missing capsule (its file and backup removed between turns)", async () => {
    const { capsuleFile, sessions } = await prepared();
    rmSync(capsuleFile);
    rmSync(`${capsuleFile}.bak`, { force: true });
    const result = (await sessions.runTurn(request, keepThread("t-2")))._unsafeUnwrap();
    expect(shapes(result.warnings)).toEqual([{ target: "capsule", operation: "read", code: "not_found" }]);
    expect(result.outcome.threadId).toBe("t-2");
  });

  it("a capsule deleted during the turn is not brought back", async () => {
    const { store, sessions } = await prepared();
    const result = (
      await sessions.runTurn(request, (plan) =>
        store.docs.delete(["missions", "m1", "role-sessions", "engineer"], { unconditional: true }).map(() => outcome(plan.threadId ?? "t-2")),
      )
    )._unsafeUnwrap();
    expect(shapes(result.warnings)).toEqual([{ target: "capsule", operation: "write", code: "deleted" }]);
    expect((await sessions.readCapsule("m1", "engineer"))._unsafeUnwrap()).toBeUndefined();
  });

  it("a missing checkpoint (its file and backup removed)", async () => {
    const { checkpointFile, sessions } = await prepared();
    rmSync(checkpointFile);
    rmSync(`${checkpointFile}.bak`, { force: true });
    const expected = outcome("t-1");
    const result = (await sessions.runTurn(request, () => okAsync(expected)))._unsafeUnwrap();
    expect(result.outcome).toBe(expected);
    expect(shapes(result.warnings)).toEqual([{ target: "checkpoint", operation: "read", code: "not_found" }]);
  });

  it("a checkpoint deleted during the turn is not brought back", async () => {
    const { store, sessions } = await prepared();
    const expected = outcome("t-1");
    const result = (await sessions.runTurn(request, () => store.docs.delete(["missions", "m1", "checkpoint"], { unconditional: true }).map(() => expected)))._unsafeUnwrap();
    expect(result.outcome).toBe(expected);
    expect(shapes(result.warnings)).toEqual([{ target: "checkpoint", operation: "write", code: "deleted" }]);
    expect((await sessions.readMissionCheckpoint("m1"))._unsafeUnwrap()).toBeUndefined();
  });

  it("an unreadable and unwritable checkpoint (its file replaced by a directory: corrupt, as the fs store answers any entry that is not a regular file)", async () => {
    const { checkpointFile, sessions } = await prepared();
    rmSync(checkpointFile);
    rmSync(`${checkpointFile}.bak`, { force: true });
    mkdirSync(checkpointFile);
    writeFileSync(path.join(checkpointFile, "x"), "in the way");
    const expected = outcome("t-1");
    const result = (await sessions.runTurn(request, () => okAsync(expected)))._unsafeUnwrap();
    expect(result.outcome).toBe(expected);
    expect(shapes(result.warnings)).toEqual([
      { target: "checkpoint", operation: "read", code: "corrupt" },
      { target: "checkpoint", operation: "write", code: "corrupt" },
    ]);
  });

  it("a readable but unwritable checkpoint (its backup path blocked by a directory)", async () => {
    const { checkpointFile, sessions } = await prepared();
    rmSync(`${checkpointFile}.bak`, { force: true });
    mkdirSync(`${checkpointFile}.bak`);
    writeFileSync(path.join(`${checkpointFile}.bak`, "x"), "in the way");
    const expected = outcome("t-1");
    const result = (await sessions.runTurn(request, () => okAsync(expected)))._unsafeUnwrap();
    expect(result.outcome).toBe(expected);
    expect(shapes(result.warnings)).toEqual([{ target: "checkpoint", operation: "write", code: "io_failed" }]);
  });
});
