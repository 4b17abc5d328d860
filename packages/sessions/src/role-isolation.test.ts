import { createMemoryStore } from "@keel/store";
import { okAsync } from "neverthrow";
import { describe, expect, it } from "vitest";
import { createRoleSessions } from "./role-sessions.js";
import type { Execute, RoleSessionTurnRequest, TurnPlan } from "./turn-types.js";

type HandleRequest = Omit<RoleSessionTurnRequest, "missionId" | "role">;

const request: HandleRequest = { backend: { id: "codex", resumable: true }, model: null, branch: "main", objectiveRevision: 1 };

function recorder(role: string) {
  const plans: TurnPlan[] = [];
  let count = 0;
  const execute: Execute = (plan) => {
    plans.push(plan);
    count++;
    return okAsync({
      text: "ok",
      threadId: `${role}-thread`,
      usage: null,
      promptBytes: 10,
      decisiveOutput: `${role} secret ${count}`,
      paths: { referenced: [`${role}/notes.md`] },
      openCheckpointItems: [`${role} item`],
    });
  };
  return { plans, execute };
}

describe("role isolation", () => {
  it("a role's handle reads and writes only its own capsule", async () => {
    const store = createMemoryStore();
    const sessions = createRoleSessions({ store, policy: "rolling", limits: { maxTurns: 2 } });
    const engineer = sessions.forRole("m1", "engineer")._unsafeUnwrap();
    const planner = sessions.forRole("m1", "planner")._unsafeUnwrap();
    const engineerCalls = recorder("engineer");
    const plannerCalls = recorder("planner");
    for (let index = 0; index < 3; index++) {
      (await engineer.runTurn(request, engineerCalls.execute))._unsafeUnwrap();
      (await planner.runTurn(request, plannerCalls.execute))._unsafeUnwrap();
    }
    // Every seed a planner turn got is the planner's own, and holds nothing of the engineer.
    const plannerSeeds = plannerCalls.plans.map((plan) => plan.capsule).filter((capsule) => capsule !== null);
    expect(plannerSeeds.length).toBeGreaterThan(0);
    for (const seed of plannerSeeds) {
      expect(seed.role).toBe("planner");
      expect(JSON.stringify(seed)).not.toContain("engineer");
    }
    const plannerCapsule = (await planner.readCapsule())._unsafeUnwrap()!;
    expect(plannerCapsule.role).toBe("planner");
    expect(JSON.stringify(plannerCapsule)).not.toContain("engineer");
    expect((await engineer.readCapsule())._unsafeUnwrap()?.decisiveOutput).toBe("engineer secret 3");
    // The handle has no operation that takes another role.
    expect(Object.keys(engineer).sort()).toEqual(["capsulePath", "missionId", "readCapsule", "readHandoff", "role", "runTurn", "writeHandoff"]);
  });

  it("refuses a handle request that names another mission or role, touching nothing", async () => {
    const store = createMemoryStore();
    const sessions = createRoleSessions({ store, policy: "rolling" });
    const engineer = sessions.forRole("m1", "engineer")._unsafeUnwrap();
    const planner = sessions.forRole("m1", "planner")._unsafeUnwrap();
    (await planner.runTurn(request, recorder("planner").execute))._unsafeUnwrap();
    const before = (await store.docs.get(["missions", "m1", "role-sessions", "planner"]))._unsafeUnwrap();
    const calls = recorder("engineer");
    for (const smuggled of [{ ...request, role: "planner" }, { ...request, missionId: "m2" }]) {
      const result = await engineer.runTurn(smuggled as HandleRequest, calls.execute);
      expect(result._unsafeUnwrapErr().code).toBe("invalid_input");
    }
    expect(calls.plans).toEqual([]);
    expect((await store.docs.get(["missions", "m1", "role-sessions", "planner"]))._unsafeUnwrap()).toEqual(before);
    expect(sessions.forRole("m1", "../planner")._unsafeUnwrapErr().code).toBe("invalid_input");
  });

  it("never seeds a role with a capsule found under its key that belongs to another role", async () => {
    const store = createMemoryStore();
    const sessions = createRoleSessions({ store, policy: "rolling" });
    const engineer = sessions.forRole("m1", "engineer")._unsafeUnwrap();
    (await engineer.runTurn(request, recorder("engineer").execute))._unsafeUnwrap();
    const engineerDoc = (await store.docs.get(["missions", "m1", "role-sessions", "engineer"]))._unsafeUnwrap()!;
    // Someone copies the engineer's capsule over the reviewer's key.
    await store.docs.put(["missions", "m1", "role-sessions", "reviewer"], engineerDoc.value, { create: true });
    const reviewer = sessions.forRole("m1", "reviewer")._unsafeUnwrap();
    const calls = recorder("reviewer");
    const result = (await reviewer.runTurn(request, calls.execute))._unsafeUnwrap();
    expect(calls.plans[0]).toMatchObject({ action: "fresh", reason: "first_turn", capsule: null, threadId: null });
    expect(result.warnings).toContainEqual(expect.objectContaining({ target: "capsule", operation: "read", code: "corrupt" }));
    const replaced = (await reviewer.readCapsule())._unsafeUnwrap()!;
    expect(replaced.role).toBe("reviewer");
    expect(JSON.stringify(replaced)).not.toContain("engineer");
    expect((await sessions.readCapsule("m1", "engineer"))._unsafeUnwrap()?.role).toBe("engineer");
  });
});
