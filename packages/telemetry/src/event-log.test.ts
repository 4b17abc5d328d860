import { describe, expect, it } from "vitest";
import { KeelError, createEventBus, digest, type EventInput, type KeelEvent } from "@keel/core";
import { createMemoryStore, type KeelStore } from "@keel/store";
import { createFaultyStore } from "@keel/testkit";
import { createEventLog } from "@keel/telemetry";
import { demoEvents } from "../../../test/support/telemetry-demo-events.js";

const emitAll = (bus: ReturnType<typeof createEventBus>, events: readonly KeelEvent[]) => {
  for (const event of events) bus.emit(event as EventInput<"agent.io.read"> & { type: "agent.io.read" });
};

describe("createEventLog", () => {
  it("records every event a bus emits, in order, and reads them back", async () => {
    const store = createMemoryStore();
    const bus = createEventBus();
    const eventLog = createEventLog({ store, batchSize: 7 });
    const detach = eventLog.attach(bus);
    const events = demoEvents();
    emitAll(bus, events);
    expect((await eventLog.flush()).isOk()).toBe(true);
    expect((await eventLog.read())._unsafeUnwrap()).toEqual(events);
    expect((await store.logs.head(["telemetry", "events"]))._unsafeUnwrap()).toEqual({ lastSeq: events.length });
    detach();
    detach();
    bus.emit({ type: "agent.io.read", role: "engineer", missionId: "m1", path: "late.ts", bytes: 1, skill: null });
    await eventLog.flush();
    expect((await eventLog.read())._unsafeUnwrap()).toHaveLength(events.length);
  });

  it("replaces content fields by digest and length unless the host opts in", async () => {
    const store = createMemoryStore();
    const custom = { type: "host.prompt.sent", at: 1, role: "engineer", prompt: "SECRET source text", output: "model said" };
    const redacting = createEventLog({ store, log: ["telemetry", "redacted"] });
    expect((await redacting.append(custom)).isOk()).toBe(true);
    const [redacted] = (await redacting.read())._unsafeUnwrap() as unknown as Record<string, unknown>[];
    expect(redacted?.["prompt"]).toEqual({ redacted: true, digest: digest(custom.prompt), bytes: 18 });
    expect(JSON.stringify(redacted)).not.toContain("SECRET");
    expect(JSON.stringify(redacted)).not.toContain("model said");
    const raw = createEventLog({ store, log: ["telemetry", "raw"], includeContent: true });
    await raw.append(custom);
    expect((await raw.read())._unsafeUnwrap()).toEqual([custom]);
  });

  it("uses idempotent ids: a retried object or a replayed sequence is not recorded twice", async () => {
    const store = createMemoryStore();
    const first = createEventLog({ store });
    const event: KeelEvent = { type: "agent.io.read", at: 1, role: "engineer", missionId: "m1", path: "a.ts", bytes: 1, skill: null };
    const twin = { ...event };
    await first.append(event);
    await first.append(event);
    await first.append(twin);
    expect((await first.read())._unsafeUnwrap()).toEqual([event, twin]);
    const replay = createEventLog({ store });
    await replay.append({ ...event });
    await replay.append({ ...event });
    expect((await store.logs.head(["telemetry", "events"]))._unsafeUnwrap()).toEqual({ lastSeq: 2 });
  });

  it("loses no bus event when the store fails for a while, and writes each once", async () => {
    for (const when of ["before", "after"] as const) {
      const store = createFaultyStore(createMemoryStore(), [{ operation: "logs.append", code: "io_failed", times: 3, when }]);
      const bus = createEventBus();
      const eventLog = createEventLog({ store, batchSize: 5 });
      eventLog.attach(bus);
      const events = demoEvents({ rounds: 2 });
      emitAll(bus, events);
      const failed = await eventLog.flush();
      expect(failed._unsafeUnwrapErr().code).toBe("io_failed");
      expect(failed._unsafeUnwrapErr().retryable).toBe(true);
      let flushed = await eventLog.flush();
      for (let attempt = 0; attempt < 3 && flushed.isErr(); attempt++) flushed = await eventLog.flush();
      expect(flushed.isOk()).toBe(true);
      expect((await eventLog.read())._unsafeUnwrap()).toEqual(events);
      expect(store.faults.hits()).toHaveLength(3);
    }
  });

  it("drops an event the store can never take, reports it, and keeps the rest of its batch", async () => {
    const store = createMemoryStore({ maxValueBytes: 400 });
    const bus = createEventBus();
    const eventLog = createEventLog({ store, includeContent: true });
    eventLog.attach(bus);
    bus.emit({ type: "agent.io.read", at: 1, role: "a", missionId: "m", path: "1", bytes: 1, skill: null });
    bus.emit({ type: "agent.io.read", at: 2, role: "a", missionId: "m", path: "x".repeat(1_000), bytes: 1, skill: null });
    bus.emit({ type: "agent.io.read", at: 3, role: "a", missionId: "m", path: "3", bytes: 1, skill: null });
    const flushed = (await eventLog.flush())._unsafeUnwrapErr();
    expect(flushed.code).toBe("too_large");
    expect(flushed.details["dropped"]).toHaveLength(1);
    expect((await eventLog.read())._unsafeUnwrap().map((event) => event.at)).toEqual([1, 3]);
    expect((await eventLog.flush()).isOk()).toBe(true);
  });

  it("hands a failed append back to its caller, who owns the retry", async () => {
    const store = createFaultyStore(createMemoryStore(), [{ operation: "logs.append", code: "unavailable", times: 1 }]);
    const eventLog = createEventLog({ store });
    const event = { type: "custom.thing", at: 1 };
    expect((await eventLog.append(event))._unsafeUnwrapErr().code).toBe("unavailable");
    expect((await eventLog.flush()).isOk()).toBe(true);
    expect((await eventLog.read())._unsafeUnwrap()).toEqual([]);
    expect((await eventLog.append(event)).isOk()).toBe(true);
    expect((await eventLog.read())._unsafeUnwrap()).toEqual([event]);
  });

  it("turns a store that throws into io_failed", async () => {
    const memory = createMemoryStore();
    const throwing: Pick<KeelStore, "logs"> = {
      logs: {
        ...memory.logs,
        append: () => {
          throw new Error("boom");
        },
      },
    };
    const eventLog = createEventLog({ store: throwing });
    expect((await eventLog.append({ type: "x", at: 1 }))._unsafeUnwrapErr().code).toBe("io_failed");
  });

  it("answers bad events with invalid_input and writes nothing", async () => {
    const store = createMemoryStore();
    const eventLog = createEventLog({ store });
    expect((await eventLog.append({ type: "", at: 1 }))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await eventLog.append({ type: "x", at: -1 }))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await eventLog.append({ type: "x", at: 1, when: new Date() } as never))._unsafeUnwrapErr().code).toBe("invalid_input");
    const broken = { type: "role.session.turn", at: 1, role: "engineer" };
    expect((await eventLog.append(broken))._unsafeUnwrapErr().code).toBe("invalid_input");
    const bus = createEventBus();
    eventLog.attach(bus);
    bus.emit({ type: "agent.io.read", role: "engineer", missionId: "m", path: "p", bytes: -5, skill: null });
    expect((await eventLog.flush())._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await store.logs.head(["telemetry", "events"]))._unsafeUnwrap()).toBeUndefined();
  });

  it("detaches on close and refuses later appends", async () => {
    const store = createMemoryStore();
    const bus = createEventBus();
    const eventLog = createEventLog({ store });
    eventLog.attach(bus);
    bus.emit({ type: "custom.one", at: 1 } as never);
    expect((await eventLog.close()).isOk()).toBe(true);
    expect(bus.listenerCount("*")).toBe(0);
    expect((await eventLog.read())._unsafeUnwrap()).toHaveLength(1);
    expect((await eventLog.append({ type: "x", at: 1 }))._unsafeUnwrapErr().code).toBe("invalid_input");
  });

  it("reports a damaged record as corrupt", async () => {
    const store = createMemoryStore();
    await store.logs.append(["telemetry", "events"], [{ id: "bad", value: { not: "an event" } }]);
    const read = await createEventLog({ store }).read();
    expect(read._unsafeUnwrapErr().code).toBe("corrupt");
    expect(read._unsafeUnwrapErr().details["location"]).toBe("telemetry/events#1");
  });

  it("throws invalid_input at once for bad options", () => {
    const store = createMemoryStore();
    const code = (build: () => unknown) => {
      try {
        build();
      } catch (error) {
        return KeelError.is(error) ? error.code : "not a KeelError";
      }
      return "no error";
    };
    expect(code(() => createEventLog({} as never))).toBe("invalid_input");
    expect(code(() => createEventLog({ store, log: ["ok", "../x"] }))).toBe("invalid_input");
    expect(code(() => createEventLog({ store, batchSize: 0 }))).toBe("invalid_input");
    expect(code(() => createEventLog({ store, extra: 1 } as never))).toBe("invalid_input");
  });
});
