import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEventBus, KeelError, type KeelEvent, type KeelEventMap } from "@keel/core";
import { createKeel } from "@keel/runtime";
import { createMemoryStore } from "@keel/store";
import { createJsonlEventSink, readEventsJsonl } from "@keel/telemetry";
import { describe, expect, it } from "vitest";
import { createFakeBackend } from "../../../test/support/runtime-fake-backend.js";

const collect = () => {
  const events = createEventBus();
  const seen: KeelEvent[] = [];
  events.on("*", (event) => seen.push(event));
  const failures = () => seen.filter((event): event is KeelEventMap["backend.turn.failed"] => event.type === "backend.turn.failed");
  return { events, seen, failures };
};

describe("backend.turn.failed", () => {
  it("is emitted once when the backend call fails the turn, with its code, backend, mission and role", async () => {
    const backend = createFakeBackend({ fail: () => new KeelError("backend_failed", "the CLI exited with 1") });
    const { events, seen, failures } = collect();
    const keel = createKeel({ store: createMemoryStore(), backends: [backend], events });
    const result = await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Fix it." });
    expect(result.isErr() && result.error.code).toBe("backend_failed");

    expect(failures()).toEqual([
      {
        type: "backend.turn.failed",
        at: expect.any(Number),
        backend: "fake",
        code: "backend_failed",
        resumeFailed: false,
        message: "the CLI exited with 1",
        missionId: "m1",
        role: "engineer",
        retryable: false,
      },
    ]);
    // A failed turn reports no turn of its own.
    expect(seen.some((event) => event.type === "role.session.turn")).toBe(false);
    await keel.close();
  });

  it("reaches the JSONL event log as it was emitted", async () => {
    const directory = await mkdtemp(join(tmpdir(), "keel-failed-"));
    try {
      const file = join(directory, "events.jsonl");
      const sink = createJsonlEventSink({ file });
      const events = createEventBus();
      sink.attach(events);
      const keel = createKeel({ store: createMemoryStore(), backends: [createFakeBackend({ id: "codex", fail: () => new KeelError("backend_failed", "exit 1") })], events });
      expect((await keel.runRoleTurn({ missionId: "m2", role: "planner", prompt: "Plan." })).isErr()).toBe(true);
      await keel.close();
      expect((await sink.close()).isOk()).toBe(true);

      const logged = (await readEventsJsonl(file))._unsafeUnwrap().events.filter((event) => event.type === "backend.turn.failed");
      expect(logged).toEqual([expect.objectContaining({ backend: "codex", code: "backend_failed", resumeFailed: false, missionId: "m2", role: "planner", retryable: false })]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it("is not emitted for a resume that fails and is retried fresh successfully", async () => {
    const backend = createFakeBackend();
    const { events, seen, failures } = collect();
    const keel = createKeel({ store: createMemoryStore(), backends: [backend], policy: "rolling", events });
    (await keel.runRoleTurn({ missionId: "m1", role: "reviewer", prompt: "Review.", objective: "O" }))._unsafeUnwrap();
    backend.forgetThreads();
    const turn = (await keel.runRoleTurn({ missionId: "m1", role: "reviewer", prompt: "Review again.", objective: "O" }))._unsafeUnwrap();
    expect(turn.plan.reason).toBe("resume_failed");

    expect(failures()).toEqual([]);
    const reported = seen.filter((event): event is KeelEventMap["role.session.turn"] => event.type === "role.session.turn");
    expect(reported.map((event) => event.resumeFailed ?? false)).toEqual([false, true]);
    await keel.close();
  });

  it("names the fresh retry's error, with resumeFailed, when the retry after a failed resume fails too", async () => {
    let failFresh = false;
    const backend = createFakeBackend({ fail: (request) => (failFresh && request.threadId === undefined ? new KeelError("timeout", "no answer in time") : undefined) });
    const { events, failures } = collect();
    const keel = createKeel({ store: createMemoryStore(), backends: [backend], policy: "rolling", events });
    (await keel.runRoleTurn({ missionId: "m1", role: "reviewer", prompt: "Review.", objective: "O" }))._unsafeUnwrap();
    backend.forgetThreads();
    failFresh = true;
    const result = await keel.runRoleTurn({ missionId: "m1", role: "reviewer", prompt: "Review again.", objective: "O" });
    expect(result.isErr() && result.error.code).toBe("timeout");
    // The resume, then the fresh retry: two calls, one failed turn.
    expect(backend.requests).toHaveLength(3);

    expect(failures()).toEqual([expect.objectContaining({ backend: "fake", code: "timeout", resumeFailed: true, retryable: true, missionId: "m1", role: "reviewer" })]);
    await keel.close();
  });

  it("is not emitted for a turn refused before its backend ran", async () => {
    const backend = createFakeBackend();
    const { events, failures } = collect();
    const keel = createKeel({ store: createMemoryStore(), backends: [backend], budget: { mission: { calls: 1 } }, events });
    (await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "One." }))._unsafeUnwrap();
    const refused = await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Two." });
    expect(refused.isErr() && refused.error.code).toBe("budget_exceeded");

    expect(backend.requests).toHaveLength(1);
    expect(failures()).toEqual([]);
    await keel.close();
  });
});
