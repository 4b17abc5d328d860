import { createEventBus, type RoleSessionWarningEvent } from "@keel/core";
import { createRoleSessions, type Execute, type TurnOutcome, type RoleSessionTurnRequest } from "@keel/sessions";
import { createMemoryStore } from "@keel/store";
import { createFaultyStore, type FaultyStore } from "@keel/testkit";
import { ResultAsync, okAsync } from "neverthrow";
import { describe, expect, it } from "vitest";

const request: RoleSessionTurnRequest = { missionId: "m1", role: "engineer", backend: { id: "codex", resumable: true }, model: null, branch: "main", objectiveRevision: 1 };
const capsuleKey = ["missions", "m1", "role-sessions", "engineer"];
const checkpointKey = ["missions", "m1", "checkpoint"];

function outcomeOf(threadId: string): TurnOutcome {
  return { text: "the answer", threadId, usage: null, promptBytes: 100, decisiveOutput: "answer", openCheckpointItems: ["next"] };
}

async function prepared() {
  const store = createFaultyStore(createMemoryStore());
  const events = createEventBus();
  const warnings: RoleSessionWarningEvent[] = [];
  events.on("role.session.warning", (event) => warnings.push(event));
  const sessions = createRoleSessions({ store, events, policy: "rolling" });
  (await sessions.initMissionCheckpoint("m1"))._unsafeUnwrap();
  const first = (await sessions.runTurn(request, () => okAsync(outcomeOf("t-1"))))._unsafeUnwrap();
  expect(first.warnings).toEqual([]);
  return { store, sessions, warnings };
}

interface FaultCase {
  name: string;
  /** Sets the fault up before the turn (and may return an execute that acts during the turn). */
  arrange(store: FaultyStore): Execute | void;
  expected: { target: "capsule" | "checkpoint"; operation: "read" | "write"; code: string }[];
}

const during =
  (store: FaultyStore, key: string[]): Execute =>
  () =>
    store.docs.delete(key, { unconditional: true }).map(() => outcomeOf("t-1"));

const cases: FaultCase[] = [
  {
    name: "a missing capsule (deleted between turns)",
    arrange: (store) => void store.docs.delete(capsuleKey, { unconditional: true }),
    expected: [{ target: "capsule", operation: "read", code: "not_found" }],
  },
  {
    name: "a capsule deleted during the turn",
    arrange: (store) => during(store, capsuleKey),
    expected: [{ target: "capsule", operation: "write", code: "deleted" }],
  },
  {
    name: "an unreadable (corrupt) capsule",
    arrange: (store) => store.faults.add({ operation: "docs.get", keyPrefix: capsuleKey, code: "corrupt" }),
    // The save replaces a damaged capsule (an unconditional, fenced put): only the read warns.
    expected: [{ target: "capsule", operation: "read", code: "corrupt" }],
  },
  {
    name: "a capsule read failing once",
    arrange: (store) => store.faults.add({ operation: "docs.get", keyPrefix: capsuleKey, code: "io_failed", times: 1 }),
    expected: [{ target: "capsule", operation: "read", code: "io_failed" }],
  },
  {
    name: "an unwritable capsule",
    arrange: (store) => store.faults.add({ operation: "docs.put", keyPrefix: capsuleKey, code: "io_failed" }),
    expected: [{ target: "capsule", operation: "write", code: "io_failed" }],
  },
  {
    name: "a capsule write that succeeded but reported failure",
    arrange: (store) => store.faults.add({ operation: "docs.put", keyPrefix: capsuleKey, code: "unavailable", when: "after", times: 1 }),
    expected: [{ target: "capsule", operation: "write", code: "unavailable" }],
  },
  {
    name: "a missing checkpoint",
    arrange: (store) => void store.docs.delete(checkpointKey, { unconditional: true }),
    expected: [{ target: "checkpoint", operation: "read", code: "not_found" }],
  },
  {
    name: "a checkpoint deleted during the turn",
    arrange: (store) => during(store, checkpointKey),
    expected: [{ target: "checkpoint", operation: "write", code: "deleted" }],
  },
  {
    name: "an unreadable (corrupt) checkpoint",
    arrange: (store) => store.faults.add({ operation: "docs.get", keyPrefix: checkpointKey, code: "corrupt" }),
    expected: [
      { target: "checkpoint", operation: "read", code: "corrupt" },
      { target: "checkpoint", operation: "write", code: "corrupt" },
    ],
  },
  {
    name: "an unwritable checkpoint",
    arrange: (store) => store.faults.add({ operation: "docs.put", keyPrefix: checkpointKey, code: "io_failed" }),
    expected: [{ target: "checkpoint", operation: "write", code: "io_failed" }],
  },
];

describe("persistence faults never change a successful result (fault injection)", () => {
  it.each(cases)("$name: a warning, and the outcome unchanged", async ({ arrange, expected }) => {
    const { store, sessions, warnings } = await prepared();
    const outcome = outcomeOf("t-1");
    const execute = arrange(store) ?? (() => okAsync(outcome));
    const result = await sessions.runTurn(request, (plan) =>
      ResultAsync.fromSafePromise(Promise.resolve(execute(plan))).andThen((inner) => inner).map(() => outcome),
    );
    expect(result.isOk()).toBe(true);
    const value = result._unsafeUnwrap();
    expect(value.outcome).toBe(outcome);
    const shape = (warning: { target: string; operation: string; code: string }) => ({ target: warning.target, operation: warning.operation, code: warning.code });
    expect(value.warnings.map(shape)).toEqual(expected);
    expect(warnings.map(shape)).toEqual(expected);
    for (const event of warnings) expect(event).toMatchObject({ type: "role.session.warning", missionId: "m1", role: "engineer", message: expect.any(String) });
  });

  it("recovers on the next turn once the fault is gone", async () => {
    const { store, sessions } = await prepared();
    store.faults.add({ operation: "docs.put", keyPrefix: capsuleKey, code: "io_failed", times: 1 });
    (await sessions.runTurn(request, (plan) => okAsync(outcomeOf(plan.threadId ?? "t-2"))))._unsafeUnwrap();
    const next = (await sessions.runTurn(request, (plan) => okAsync(outcomeOf(plan.threadId ?? "t-3"))))._unsafeUnwrap();
    expect(next.warnings).toEqual([]);
    // The unsaved turn is lost to the counters, the thread is not.
    expect(next.plan).toMatchObject({ action: "resumed", threadId: "t-1" });
    expect((await sessions.readCapsule("m1", "engineer"))._unsafeUnwrap()?.counters.totalTurns).toBe(2);
  });

  it("a lease store that fails before the turn runs returns the error and runs nothing", async () => {
    const { store, sessions } = await prepared();
    store.faults.add({ operation: "leases.acquire", code: "unavailable" });
    let ran = false;
    const result = await sessions.runTurn(request, () => {
      ran = true;
      return okAsync(outcomeOf("t-1"));
    });
    expect(result._unsafeUnwrapErr().code).toBe("unavailable");
    expect(ran).toBe(false);
  });
});
