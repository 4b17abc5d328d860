import { KeelError, createEventBus, createManualClock, type JsonValue, type KeelEvent, type RoleSessionTurnEvent } from "@keel/core";
import { createMemoryStore, type KeelStore } from "@keel/store";
import { createFaultyStore } from "@keel/testkit";
import { errAsync, okAsync, type ResultAsync } from "neverthrow";
import { describe, expect, it } from "vitest";
import { CapsuleSchema } from "./capsule-schema.js";
import { createRoleSessions, type RoleSessionsOptions } from "./role-sessions.js";
import { roleLeaseName } from "./session-keys.js";
import type { Execute, TurnOutcome, TurnPlan, RoleSessionTurnRequest } from "./turn-types.js";

const request: RoleSessionTurnRequest = { missionId: "m1", role: "engineer", backend: { id: "codex", resumable: true }, model: "gpt-5", branch: "main", objectiveRevision: 1 };

function setup(options: Partial<RoleSessionsOptions> = {}, store: KeelStore = createMemoryStore()) {
  const clock = createManualClock();
  const events = createEventBus({ clock });
  const seen: KeelEvent[] = [];
  events.on("*", (event) => seen.push(event));
  const sessions = createRoleSessions({ store, events, clock, ...options });
  const turns = () => seen.filter((event): event is RoleSessionTurnEvent => event.type === "role.session.turn");
  const warnings = () => seen.filter((event) => event.type === "role.session.warning");
  return { store, clock, sessions, seen, turns, warnings };
}

/** A provider stand-in: a new thread per fresh turn, input tokens growing with the thread. */
function provider(tokensPerTurn = 100) {
  let threads = 0;
  const sizes = new Map<string, number>();
  const plans: TurnPlan[] = [];
  const execute = (plan: TurnPlan): ResultAsync<TurnOutcome, KeelError> => {
    plans.push(plan);
    const threadId = plan.threadId ?? `thread-${++threads}`;
    const size = (sizes.get(threadId) ?? 0) + tokensPerTurn;
    sizes.set(threadId, size);
    return okAsync({
      text: `turn ${plan.turn}`,
      threadId,
      usage: { inputUncached: size, cacheRead: 0, cacheWrite: 0, output: 10, reasoning: null, costUsd: null },
      promptBytes: plan.action === "resumed" ? 40 : 400,
      decisiveOutput: `output of turn ${plan.turn}`,
      paths: { referenced: [`src/file-${plan.turn}.ts`], inspected: ["README.md"] },
    });
  };
  return { execute, plans, forget: (threadId: string) => sizes.delete(threadId), sizes };
}

describe("runTurn", () => {
  it("starts fresh, then resumes the same thread, keeping the capsule at the documented key", async () => {
    const { sessions, store, turns } = setup({ policy: "rolling" });
    const { execute, plans } = provider();
    const first = (await sessions.runTurn(request, execute))._unsafeUnwrap();
    expect(first.plan).toMatchObject({ action: "fresh", reason: "first_turn", threadId: null, capsule: null, policy: "rolling", turn: 1 });
    expect(first.warnings.map((warning) => warning.target)).toEqual(["checkpoint"]); // no checkpoint yet
    const second = (await sessions.runTurn(request, execute))._unsafeUnwrap();
    expect(second.plan).toMatchObject({ action: "resumed", reason: "continuing", threadId: "thread-1", capsule: null, turn: 2 });
    expect(plans).toHaveLength(2);
    const stored = (await store.docs.get(["missions", "m1", "role-sessions", "engineer"]))._unsafeUnwrap();
    const capsule = CapsuleSchema.parse(stored?.value);
    expect(capsule.thread).toEqual({ backend: "codex", model: "gpt-5", branch: "main", threadId: "thread-1" });
    expect(capsule.counters).toEqual({ turnsSinceRotation: 2, observedInputTokens: 300, rotations: 0, resumeFailures: 0, totalTurns: 2 });
    expect(capsule.decisiveOutput).toBe("output of turn 2");
    expect(capsule.referencedPaths).toEqual(["src/file-1.ts", "src/file-2.ts"]);
    expect(capsule.inspectedPaths).toEqual(["README.md"]);
    const events = turns();
    expect(events).toHaveLength(2);
    expect(events[1]).toEqual({
      type: "role.session.turn",
      at: expect.any(Number),
      missionId: "m1",
      role: "engineer",
      policy: "rolling",
      action: "resumed",
      rotationReason: "continuing",
      backend: "codex",
      model: "gpt-5",
      promptBytes: 40,
      usage: { inputUncached: 200, cacheRead: 0, cacheWrite: 0, output: 10, reasoning: null, costUsd: null },
      wallMs: 0,
      capsulePath: "missions/m1/role-sessions/engineer",
      threadId: "thread-1",
      turn: 2,
      resumeFailed: false,
      capsuleWritten: true,
      superseded: false,
    });
  });

  it("seeds a rotated turn with the capsule and rotates at maxTurns, counting from the rotation", async () => {
    const { sessions } = setup({ policy: "rolling", limits: { maxTurns: 3 } });
    const { execute, plans } = provider();
    for (let index = 0; index < 7; index++) (await sessions.runTurn(request, execute))._unsafeUnwrap();
    expect(plans.map((plan) => plan.action)).toEqual(["fresh", "resumed", "resumed", "rotated", "resumed", "resumed", "rotated"]);
    expect(plans[3]).toMatchObject({ reason: "max_turns", threadId: null });
    expect(plans[3]!.capsule?.decisiveOutput).toBe("output of turn 3");
    expect(plans[3]!.capsule?.role).toBe("engineer");
    const capsule = (await sessions.readCapsule("m1", "engineer"))._unsafeUnwrap()!;
    expect(capsule.counters).toMatchObject({ turnsSinceRotation: 1, rotations: 2, totalTurns: 7 });
    expect(capsule.thread.threadId).toBe("thread-3");
  });

  it("hands plans a copy of the capsule: a host that changes one changes nothing a later turn sees", async () => {
    const { sessions } = setup({ policy: "rolling", limits: { maxTurns: 1 } });
    const { execute, plans } = provider();
    const first = (await sessions.runTurn(request, execute))._unsafeUnwrap();
    const second = (await sessions.runTurn(request, execute))._unsafeUnwrap();
    expect(second.plan).toMatchObject({ action: "rotated", reason: "max_turns" });
    second.plan.capsule!.decisiveOutput = "changed by the host";
    second.plan.capsule!.counters.totalTurns = 99;
    (await sessions.runTurn(request, execute))._unsafeUnwrap();
    expect(plans[2]!.capsule).toMatchObject({ decisiveOutput: "output of turn 2", counters: { totalTurns: 2 } });
    expect(first.plan.capsule).toBeNull();
  });

  it("rotates when the observed input tokens reach maxInputTokens", async () => {
    const { sessions } = setup({ policy: "rolling", limits: { maxInputTokens: 1_000 } });
    const { execute, plans } = provider(300);
    for (let index = 0; index < 4; index++) (await sessions.runTurn(request, execute))._unsafeUnwrap();
    // Thread input 300, then 600 (900 observed), then 900 (1,800 observed): rotate.
    expect(plans.map((plan) => `${plan.action}:${plan.reason}`)).toEqual(["fresh:first_turn", "resumed:continuing", "resumed:continuing", "rotated:max_input_tokens"]);
  });

  it("rotates under mission only on a change of branch, objective, backend or model", async () => {
    const { sessions } = setup({ policy: "mission", limits: { maxTurns: 2, maxInputTokens: 1 } });
    const { execute, plans } = provider();
    for (let index = 0; index < 4; index++) (await sessions.runTurn(request, execute))._unsafeUnwrap();
    (await sessions.runTurn({ ...request, branch: "feature" }, execute))._unsafeUnwrap();
    (await sessions.runTurn({ ...request, branch: "feature", objectiveRevision: 2 }, execute))._unsafeUnwrap();
    (await sessions.runTurn({ ...request, branch: "feature", objectiveRevision: 2, model: "gpt-6" }, execute))._unsafeUnwrap();
    (await sessions.runTurn({ ...request, branch: "feature", objectiveRevision: 2, model: "gpt-6", backend: { id: "pi", resumable: true } }, execute))._unsafeUnwrap();
    expect(plans.map((plan) => `${plan.action}:${plan.reason}`)).toEqual([
      "fresh:first_turn",
      "resumed:continuing",
      "resumed:continuing",
      "resumed:continuing",
      "rotated:branch_changed",
      "rotated:objective_revised",
      "rotated:model_changed",
      "rotated:backend_changed",
    ]);
  });

  it("auto is rolling on a resumable backend and fresh on a fresh-only one", async () => {
    const { sessions } = setup();
    const { execute, plans } = provider();
    (await sessions.runTurn(request, execute))._unsafeUnwrap();
    (await sessions.runTurn(request, execute))._unsafeUnwrap();
    (await sessions.runTurn({ ...request, role: "reviewer", backend: { id: "deepseek", resumable: false } }, execute))._unsafeUnwrap();
    expect(plans.map((plan) => `${plan.policy}:${plan.action}:${plan.reason}`)).toEqual(["rolling:fresh:first_turn", "rolling:resumed:continuing", "fresh:fresh:policy_fresh"]);
    expect((await sessions.readCapsule("m1", "reviewer"))._unsafeUnwrap()).toBeUndefined();
  });

  it("keeps and seeds the capsule for a fresh-only backend under mission, never resuming", async () => {
    const { sessions } = setup({ policy: "mission" });
    const { execute, plans } = provider();
    const freshOnly = { ...request, backend: { id: "deepseek", resumable: false } };
    for (let index = 0; index < 3; index++) (await sessions.runTurn(freshOnly, execute))._unsafeUnwrap();
    expect(plans.map((plan) => `${plan.action}:${plan.reason}`)).toEqual(["fresh:fresh_only_backend", "fresh:fresh_only_backend", "fresh:fresh_only_backend"]);
    expect(plans[2]!.capsule?.decisiveOutput).toBe("output of turn 2");
  });

  it("under fresh ignores capsules entirely: none is read or written", async () => {
    const faulty = createFaultyStore(createMemoryStore());
    const { sessions: rolling } = setup({ policy: "rolling" }, faulty);
    (await rolling.runTurn(request, provider().execute))._unsafeUnwrap();
    const before = (await faulty.docs.get(["missions", "m1", "role-sessions", "engineer"]))._unsafeUnwrap();
    faulty.faults.add({ operation: ["docs.get", "docs.put", "docs.delete", "leases.acquire"], code: "io_failed" });
    const { sessions, seen } = setup({ policy: "fresh" }, faulty);
    const { execute, plans } = provider();
    for (let index = 0; index < 2; index++) {
      const result = (await sessions.runTurn(request, execute))._unsafeUnwrap();
      expect(result.warnings).toEqual([]);
    }
    expect(faulty.faults.hits()).toEqual([]);
    expect(plans.map((plan) => [plan.action, plan.reason, plan.capsule, plan.threadId, plan.turn])).toEqual([
      ["fresh", "policy_fresh", null, null, 1],
      ["fresh", "policy_fresh", null, null, 2],
    ]);
    expect(seen.filter((event) => event.type === "role.session.warning")).toEqual([]);
    faulty.faults.clear();
    expect((await faulty.docs.get(["missions", "m1", "role-sessions", "engineer"]))._unsafeUnwrap()).toEqual(before);
    // The capsule can go without effect on fresh turns.
    await faulty.docs.delete(["missions", "m1", "role-sessions", "engineer"], { unconditional: true });
    expect((await sessions.runTurn(request, execute))._unsafeUnwrap().plan.turn).toBe(3);
  });

  it("refuses a bad request with invalid_input before anything runs", async () => {
    const { sessions } = setup();
    const { execute, plans } = provider();
    const bad = [
      { ...request, role: "../planner" },
      { ...request, missionId: "" },
      { ...request, backend: { id: "codex" } },
      { ...request, objectiveRevision: -1 },
      { ...request, extra: true },
    ];
    for (const candidate of bad) {
      const result = await sessions.runTurn(candidate as RoleSessionTurnRequest, execute);
      expect(result._unsafeUnwrapErr().code).toBe("invalid_input");
    }
    expect((await sessions.runTurn(request, "nope" as unknown as Execute))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(plans).toEqual([]);
  });

  it("throws invalid_input at once for bad options", () => {
    const store = createMemoryStore();
    expect(() => createRoleSessions({ store, policy: "sometimes" as "auto" })).toThrow(KeelError);
    expect(() => createRoleSessions({ store, limits: { maxTurns: 0 } })).toThrow(expect.objectContaining({ code: "invalid_input" }));
    expect(() => createRoleSessions({} as RoleSessionsOptions)).toThrow(expect.objectContaining({ code: "invalid_input" }));
  });
});

describe("resume failure and other failures", () => {
  it("drops the thread and retries once fresh from the capsule; the event says so", async () => {
    const { sessions, turns } = setup({ policy: "rolling" });
    const inner = provider();
    const execute: Execute = (plan) => {
      if (plan.threadId !== null && !inner.sizes.has(plan.threadId)) {
        return errAsync(new KeelError("resume_failed", `no conversation found with session ID ${plan.threadId}`));
      }
      return inner.execute(plan);
    };
    (await sessions.runTurn(request, execute))._unsafeUnwrap();
    (await sessions.runTurn(request, execute))._unsafeUnwrap();
    inner.forget("thread-1");
    const result = (await sessions.runTurn(request, execute))._unsafeUnwrap();
    expect(result.plan).toMatchObject({ action: "fresh", reason: "resume_failed", threadId: null });
    expect(result.plan.capsule?.decisiveOutput).toBe("output of turn 2");
    expect(result.outcome.threadId).toBe("thread-2");
    expect(inner.plans.map((plan) => plan.action)).toEqual(["fresh", "resumed", "fresh"]);
    expect(turns()[2]).toMatchObject({ action: "fresh", rotationReason: "resume_failed", resumeFailed: true, threadId: "thread-2", turn: 3 });
    const capsule = (await sessions.readCapsule("m1", "engineer"))._unsafeUnwrap()!;
    expect(capsule.thread.threadId).toBe("thread-2");
    expect(capsule.counters).toMatchObject({ resumeFailures: 1, turnsSinceRotation: 1, totalTurns: 3, rotations: 0 });
    expect((await sessions.runTurn(request, execute))._unsafeUnwrap().plan).toMatchObject({ action: "resumed", threadId: "thread-2" });
  });

  it("returns the retry's failure as is, with the dropped thread recorded", async () => {
    const { sessions } = setup({ policy: "rolling" });
    const { execute } = provider();
    (await sessions.runTurn(request, execute))._unsafeUnwrap();
    let calls = 0;
    const failing: Execute = (plan) => {
      calls++;
      return plan.action === "resumed" ? errAsync(new KeelError("resume_failed", "thread gone")) : errAsync(new KeelError("timeout", "killed after 60 s"));
    };
    expect((await sessions.runTurn(request, failing))._unsafeUnwrapErr().code).toBe("timeout");
    expect(calls).toBe(2);
    const capsule = (await sessions.readCapsule("m1", "engineer"))._unsafeUnwrap()!;
    expect(capsule.thread.threadId).toBeNull();
    expect(capsule.counters).toMatchObject({ resumeFailures: 1, totalTurns: 1 });
    expect(capsule.lastFailure).toMatchObject({ code: "timeout" });
  });

  it("returns any other failure as is, without a retry, keeping the thread and recording the failure", async () => {
    const { sessions, turns } = setup({ policy: "rolling" });
    const { execute } = provider();
    (await sessions.runTurn(request, execute))._unsafeUnwrap();
    let calls = 0;
    const failing: Execute = () => {
      calls++;
      return errAsync(new KeelError("backend_failed", "exit 1"));
    };
    expect((await sessions.runTurn(request, failing))._unsafeUnwrapErr().code).toBe("backend_failed");
    expect(calls).toBe(1);
    const capsule = (await sessions.readCapsule("m1", "engineer"))._unsafeUnwrap()!;
    expect(capsule.thread.threadId).toBe("thread-1");
    expect(capsule.lastFailure).toMatchObject({ code: "backend_failed", message: "exit 1" });
    expect(capsule.counters.totalTurns).toBe(1);
    expect(turns()).toHaveLength(1);
  });

  it("turns a throwing execute into backend_failed and a malformed outcome into invalid_input", async () => {
    const { sessions } = setup({ policy: "rolling" });
    const throwing: Execute = () => {
      throw new Error("boom");
    };
    expect((await sessions.runTurn(request, throwing))._unsafeUnwrapErr().code).toBe("backend_failed");
    const rejecting: Execute = () => Promise.reject(new Error("async boom"));
    expect((await sessions.runTurn(request, rejecting))._unsafeUnwrapErr().code).toBe("backend_failed");
    const malformed = (() => okAsync({ text: "x", threadId: 7, usage: null, promptBytes: -1 })) as unknown as Execute;
    expect((await sessions.runTurn(request, malformed))._unsafeUnwrapErr().code).toBe("invalid_input");
    const notAResult = (() => Promise.resolve({ text: "x" })) as unknown as Execute;
    expect((await sessions.runTurn(request, notAResult))._unsafeUnwrapErr().code).toBe("invalid_input");
  });
});

describe("capsule writes", () => {
  it("retries a concurrent writer's conflict from a fresh read: no lost update", async () => {
    const { sessions, store } = setup({ policy: "rolling" });
    const { execute } = provider();
    (await sessions.runTurn(request, execute))._unsafeUnwrap();
    const key = ["missions", "m1", "role-sessions", "engineer"];
    const racing: Execute = (plan) =>
      // Another writer (an operator tool updating the repository map) commits during the turn.
      store.docs.get(key).andThen((doc) => {
        const value = CapsuleSchema.parse(doc!.value);
        return store.docs.put(key, { ...value, repositoryMap: "src/: parser, lexer" } as unknown as JsonValue, { expectedVersion: doc!.version }).andThen(() => execute(plan));
      });
    const result = (await sessions.runTurn(request, racing))._unsafeUnwrap();
    expect(result.warnings.filter((warning) => warning.target === "capsule")).toEqual([]);
    const capsule = (await sessions.readCapsule("m1", "engineer"))._unsafeUnwrap()!;
    expect(capsule.repositoryMap).toBe("src/: parser, lexer");
    expect(capsule.counters).toMatchObject({ totalTurns: 2, turnsSinceRotation: 2 });
    expect(capsule.decisiveOutput).toBe("output of turn 2");
  });

  it("retries a reported conflict (fault injection) and still saves the turn", async () => {
    const faulty = createFaultyStore(createMemoryStore(), [{ operation: "docs.put", keyPrefix: ["missions", "m1", "role-sessions"], code: "conflict", times: 2 }]);
    const { sessions } = setup({ policy: "rolling" }, faulty);
    const result = (await sessions.runTurn(request, provider().execute))._unsafeUnwrap();
    expect(result.warnings.filter((warning) => warning.target === "capsule")).toEqual([]);
    expect(faulty.faults.hits()).toHaveLength(2);
    expect((await sessions.readCapsule("m1", "engineer"))._unsafeUnwrap()?.counters.totalTurns).toBe(1);
  });

  it("truncates oversize content with a marker and a warning, returning the outcome unchanged", async () => {
    const { sessions, warnings } = setup({ policy: "rolling" });
    const huge = "line\n".repeat(20_000);
    const outcome = { text: "ok", threadId: "t-1", usage: null, promptBytes: 10, decisiveOutput: huge, paths: { referenced: Array.from({ length: 200 }, (_, index) => `src/${index}.ts`) } };
    const result = (await sessions.runTurn(request, () => okAsync(outcome)))._unsafeUnwrap();
    expect(result.outcome).toBe(outcome);
    expect(result.warnings.filter((warning) => warning.target === "capsule")).toEqual([
      expect.objectContaining({ target: "capsule", operation: "truncate", code: "too_large" }),
    ]);
    expect(warnings()).toHaveLength(2); // the missing checkpoint, and the truncation
    const capsule = (await sessions.readCapsule("m1", "engineer"))._unsafeUnwrap()!;
    expect(capsule.decisiveOutput).toContain("…[truncated by keel:");
    expect(capsule.referencedPaths[0]).toBe("…[truncated by keel: 136 earlier entries dropped]");
    expect(capsule.referencedPaths.at(-1)).toBe("src/199.ts");
  });

  it("estimates observed input tokens from the prompt bytes when usage is unknown", async () => {
    const { sessions } = setup({ policy: "rolling" });
    (await sessions.runTurn(request, () => okAsync({ text: "ok", threadId: "t-1", usage: null, promptBytes: 3_001 })))._unsafeUnwrap();
    expect((await sessions.readCapsule("m1", "engineer"))._unsafeUnwrap()?.counters.observedInputTokens).toBe(1_001);
  });
});

describe("runTurn's signal", () => {
  it("ends the wait for a lease another host holds: aborted at once, execute not called, nothing written", async () => {
    const store = createMemoryStore();
    // Another host's turn of the role holds its lease.
    const held = (await store.leases.acquire(roleLeaseName("m1", "engineer"), "another-host", { ttlMs: 60_000 }))._unsafeUnwrap();
    const { sessions, turns } = setup({ policy: "mission", lease: { waitMs: 600_000 } }, store);
    const { execute, plans } = provider();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const started = Date.now();
    const result = await sessions.runTurn(request, execute, { signal: controller.signal });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result._unsafeUnwrapErr().code).toBe("aborted");
    expect(plans).toEqual([]);
    expect(turns()).toEqual([]);
    expect((await sessions.readCapsule("m1", "engineer"))._unsafeUnwrap()).toBeUndefined();
    expect((await store.leases.current(held.name))._unsafeUnwrap()).toEqual(held);
    await sessions.close();
  });

  it("is refused with invalid_input when it is not an AbortSignal, on the sessions and on a role handle", async () => {
    const { sessions } = setup({ policy: "mission" });
    const { execute, plans } = provider();
    const bad = { signal: { aborted: false } } as unknown as { signal: AbortSignal };
    expect((await sessions.runTurn(request, execute, bad))._unsafeUnwrapErr().code).toBe("invalid_input");
    const handle = sessions.forRole("m1", "engineer")._unsafeUnwrap();
    const { missionId: _m, role: _r, ...handleRequest } = request;
    expect((await handle.runTurn(handleRequest, execute, bad))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await handle.runTurn(handleRequest, execute, { signal: new AbortController().signal }))._unsafeUnwrap().outcome.text).toBe("turn 1");
    expect(plans).toHaveLength(1);
  });
});
