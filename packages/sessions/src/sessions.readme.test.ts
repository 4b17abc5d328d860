import { createEventBus, type KeelEvent } from "@keel/core";
import { createRoleSessions, createWorkSessions, policyFromEnv, type Execute } from "@keel/sessions";
import { createMemoryStore } from "@keel/store";
import { okAsync } from "neverthrow";
import { describe, expect, it } from "vitest";

describe("the README examples", () => {
  it("run as written", async () => {
    const settings = policyFromEnv({});
    if (settings.isErr()) throw settings.error;
    const events = createEventBus();
    const seen: KeelEvent[] = [];
    events.on("*", (event) => seen.push(event));
    const store = createMemoryStore();
    const sessions = createRoleSessions({ store, events, ...settings.value });
    await sessions.initMissionCheckpoint("m1");
    const execute: Execute = (plan) =>
      okAsync({
        text: "done",
        threadId: plan.threadId ?? "thread-1",
        usage: null,
        promptBytes: 512,
        decisiveOutput: "parser implemented",
        paths: { referenced: ["src/parser.ts"] },
        openCheckpointItems: ["add tests for the parser"],
      });
    const engineer = sessions.forRole("m1", "engineer")._unsafeUnwrap();
    const request = { backend: { id: "codex", resumable: true }, model: null, branch: "main", objectiveRevision: 1 };
    const first = await engineer.runTurn(request, execute);
    const second = await engineer.runTurn(request, execute);
    expect(first._unsafeUnwrap().plan.action).toBe("fresh");
    expect(second._unsafeUnwrap().plan.action).toBe("resumed");
    expect((await engineer.readCapsule())._unsafeUnwrap()?.counters.totalTurns).toBe(2);
    (await engineer.writeHandoff({ done: ["parser"], inFlight: [{ task: "tests", state: "started" }], nextSteps: ["review"], warnings: [] }))._unsafeUnwrap();
    await sessions.close();
    expect(seen.map((event) => event.type)).toEqual(["role.session.turn", "role.session.turn"]);

    const work = createWorkSessions({ store });
    const scope = { missionId: "m1", role: "engineer" };
    await work.open({ ...scope, model: null });
    const startedAt = Date.now();
    await work.recordTurn({ ...scope, startedAt, endedAt: startedAt + 6_000, toolCalls: 3, usage: null, model: null });
    const status = (await work.status(scope))._unsafeUnwrap();
    expect(status).toMatchObject({ state: "open", toolCalls: 3, session: { checkpointCounter: 3 }, exceeded: [] });
    expect(status.activeMinutes).toBeCloseTo(0.1);
    (await work.checkpoint({ ...scope, handoff: { done: ["parser"], inFlight: [], nextSteps: ["tests"], warnings: [] } }))._unsafeUnwrap();
    const closed = (await work.close(scope))._unsafeUnwrap();
    expect(closed.status).toMatchObject({ state: "no_session", session: null, toolCalls: null });
  });
});
