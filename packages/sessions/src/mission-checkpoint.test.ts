import type { KeelError } from "@keel/core";
import { createMemoryStore, type KeelStore } from "@keel/store";
import { ResultAsync, okAsync } from "neverthrow";
import { describe, expect, it } from "vitest";
import { createRoleSessions } from "./role-sessions.js";
import type { Execute, RoleSessionTurnRequest } from "./turn-types.js";

const request = (role: string): RoleSessionTurnRequest => ({ missionId: "m1", role, backend: { id: "codex", resumable: true }, model: null, branch: "main", objectiveRevision: 1 });
const withItems =
  (items: string[]): Execute =>
  () =>
    okAsync({ text: "ok", threadId: "t", usage: null, promptBytes: 1, openCheckpointItems: items });

/** Delays every document operation by a random few milliseconds, so concurrent callers interleave differently each run. */
function jittery(store: KeelStore, random: () => number): KeelStore {
  const later = <T>(call: () => ResultAsync<T, KeelError>) =>
    ResultAsync.fromSafePromise(new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 4)))).andThen(call);
  return {
    ...store,
    docs: {
      get: (key) => later(() => store.docs.get(key)),
      put: (key, value, condition) => later(() => store.docs.put(key, value, condition)),
      delete: (key, condition) => later(() => store.docs.delete(key, condition)),
      list: (prefix, page) => later(() => store.docs.list(prefix, page)),
    },
  };
}

function seeded(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe("initMissionCheckpoint", () => {
  it("creates the empty placeholder once and then returns it unchanged", async () => {
    const sessions = createRoleSessions({ store: createMemoryStore(), policy: "rolling" });
    const first = (await sessions.initMissionCheckpoint("m1"))._unsafeUnwrap();
    expect(first).toMatchObject({ created: true, version: 1, checkpoint: { missionId: "m1", placeholder: true, roles: {} } });
    const second = (await sessions.initMissionCheckpoint("m1"))._unsafeUnwrap();
    expect(second).toMatchObject({ created: false, version: 1, checkpoint: first.checkpoint });
    expect((await sessions.initMissionCheckpoint("../m1"))._unsafeUnwrapErr().code).toBe("invalid_input");
  });

  it("never overwrites later role-authored state", async () => {
    const sessions = createRoleSessions({ store: createMemoryStore(), policy: "rolling" });
    await sessions.initMissionCheckpoint("m1");
    const turn = (await sessions.runTurn(request("planner"), withItems(["write the parser"])))._unsafeUnwrap();
    expect(turn.warnings).toEqual([]);
    const again = (await sessions.initMissionCheckpoint("m1"))._unsafeUnwrap();
    expect(again.created).toBe(false);
    expect(again.checkpoint.placeholder).toBe(false);
    expect(again.checkpoint.roles.planner?.openItems).toEqual(["write the parser"]);
    // The capsule points at the checkpoint version it wrote.
    expect((await sessions.readCapsule("m1", "planner"))._unsafeUnwrap()?.checkpoint).toEqual({ version: again.version });
  });

  it("two initializers racing a role writer never lose the role's items (many interleavings)", async () => {
    const orders = new Set<string>();
    for (let run = 0; run < 40; run++) {
      const random = seeded(run + 1);
      const store = jittery(createMemoryStore(), random);
      const sessions = createRoleSessions({ store, policy: "rolling" });
      const other = createRoleSessions({ store, policy: "rolling" });
      const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
      const [a, b, written] = await Promise.all([
        later(random() * 20).then(() => sessions.initMissionCheckpoint("m1")),
        later(random() * 20).then(() => other.initMissionCheckpoint("m1")),
        sessions.runTurn(request("engineer"), withItems([`item of run ${run}`])),
      ]);
      expect(written.isOk()).toBe(true);
      expect(written._unsafeUnwrap().warnings.filter((warning) => warning.operation === "write")).toEqual([]);
      const created = [a, b].filter((result) => result._unsafeUnwrap().created).length;
      expect(created).toBeLessThanOrEqual(1);
      orders.add(created === 1 ? "an initializer created it" : "the writer created it");
      const final = (await sessions.readMissionCheckpoint("m1"))._unsafeUnwrap()!;
      expect(final.checkpoint.roles.engineer?.openItems).toEqual([`item of run ${run}`]);
      expect(final.checkpoint.placeholder).toBe(false);
    }
    // Both orders happened, so the assertions above covered each.
    expect([...orders].sort()).toEqual(["an initializer created it", "the writer created it"]);
  });

  it("keeps every role's items when roles write concurrently (CAS retry)", async () => {
    const store = jittery(createMemoryStore(), seeded(7));
    const sessions = createRoleSessions({ store, policy: "rolling" });
    await sessions.initMissionCheckpoint("m1");
    const roles = ["planner", "engineer", "reviewer", "tester"];
    const results = await Promise.all(roles.map((role) => sessions.runTurn(request(role), withItems([`${role} item`]))));
    expect(results.every((result) => result.isOk() && result.value.warnings.length === 0)).toBe(true);
    const final = (await sessions.readMissionCheckpoint("m1"))._unsafeUnwrap()!;
    expect(Object.keys(final.checkpoint.roles).sort()).toEqual([...roles].sort());
  });
});

describe("the checkpoint a turn reads", () => {
  it("is validated again once another writer replaced it, even after this instance saw it valid", async () => {
    const store = createMemoryStore();
    const sessions = createRoleSessions({ store, policy: "rolling" });
    (await sessions.initMissionCheckpoint("m1"))._unsafeUnwrap();
    const plain: Execute = () => okAsync({ text: "ok", threadId: "t", usage: null, promptBytes: 1 });
    expect((await sessions.runTurn(request("planner"), plain))._unsafeUnwrap().warnings).toEqual([]);
    const key = ["missions", "m1", "checkpoint"];
    const doc = (await store.docs.get(key))._unsafeUnwrap()!;
    (await store.docs.put(key, { ...(doc.value as object), roles: "not roles" }, { expectedVersion: doc.version }))._unsafeUnwrap();
    const next = (await sessions.runTurn(request("planner"), plain))._unsafeUnwrap();
    expect(next.warnings).toEqual([expect.objectContaining({ target: "checkpoint", operation: "read", code: "corrupt" })]);
  });
});
