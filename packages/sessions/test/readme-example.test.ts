import { createEventBus, type KeelEvent } from "@keel/core";
import { createHygiene, createRoleSessions, policyFromEnv, type Execute } from "@keel/sessions";
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

    const hygiene = createHygiene({ store, missionId: "m1", role: "engineer" });
    await hygiene.open();
    await hygiene.recordToolCalls(3);
    expect(hygiene.status()).toMatchObject({ state: "open", toolCalls: 3, checkpointCounter: 3 });
    expect(hygiene.status().activeMinutes).toBeLessThan(1);
    (await hygiene.checkpoint({ done: ["parser"], inFlight: [], nextSteps: ["tests"], warnings: [] }))._unsafeUnwrap();
    await hygiene.close();
    expect(hygiene.status().state).toBe("no_session");
  });
});
