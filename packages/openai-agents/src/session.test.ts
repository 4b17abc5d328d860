import { KeelError } from "@keel/core";
import { createMemoryStore } from "@keel/store";
import { MemorySession, type AgentInputItem } from "@openai/agents";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createKeelSession } from "./index.js";

const message = (text: string): AgentInputItem => ({ role: "user", content: text }) as AgentInputItem;

type Command = { type: "add"; texts: string[] } | { type: "get"; limit?: number | undefined } | { type: "pop" } | { type: "clear" };

/** Limits as a caller may compute them: counts, and negative, fractional, NaN and infinite ones (read as MemorySession reads them). */
const limitArbitrary: fc.Arbitrary<number> = fc.oneof(
  { weight: 4, arbitrary: fc.nat({ max: 8 }) },
  { weight: 1, arbitrary: fc.double({ min: -10, max: 10 }) },
  { weight: 1, arbitrary: fc.constantFrom(-1, -0, 0.5, 1.5, 2.999, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY) },
);

const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ type: fc.constant("add" as const), texts: fc.array(fc.string({ maxLength: 8 }), { maxLength: 4 }) }) },
  { weight: 3, arbitrary: fc.record({ type: fc.constant("get" as const), limit: fc.option(limitArbitrary, { nil: undefined }) }, { requiredKeys: ["type"] }) },
  { weight: 2, arbitrary: fc.constant({ type: "pop" as const }) },
  { weight: 1, arbitrary: fc.constant({ type: "clear" as const }) },
);

describe("createKeelSession", () => {
  it("gives the same items as the SDK's own MemorySession for any call sequence", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(commandArbitrary, { maxLength: 30 }), async (commands) => {
        const reference = new MemorySession({ sessionId: "s" });
        const keel = createKeelSession({ store: createMemoryStore(), sessionId: "s" });
        for (const command of commands) {
          if (command.type === "add") {
            const items = command.texts.map(message);
            await reference.addItems(items);
            await keel.addItems(items);
          } else if (command.type === "get") {
            expect(await keel.getItems(command.limit)).toEqual(await reference.getItems(command.limit));
          } else if (command.type === "pop") {
            expect(await keel.popItem()).toEqual(await reference.popItem());
          } else {
            await reference.clearSession();
            await keel.clearSession();
          }
        }
        expect(await keel.getItems()).toEqual(await reference.getItems());
      }),
      { numRuns: 150 },
    );
  });

  it("returns the id it was given and creates nothing until items are added", async () => {
    const store = createMemoryStore();
    const session = createKeelSession({ store, sessionId: "user-42" });
    expect(await session.getSessionId()).toBe("user-42");
    expect((await store.logs.list(["openai-agents"])).unwrapOr(["x"])).toEqual([]);
  });

  it("rejects a session id that is not a safe name, a limit that is not a number, and an item that is not a JSON object, with invalid_input", async () => {
    expect(() => createKeelSession({ store: createMemoryStore(), sessionId: "../x" })).toThrow(expect.objectContaining({ code: "invalid_input" }));
    const session = createKeelSession({ store: createMemoryStore(), sessionId: "s" });
    await expect(session.getItems("2" as unknown as number)).rejects.toMatchObject({ code: "invalid_input" });
    await expect(session.addItems([42 as unknown as AgentInputItem])).rejects.toMatchObject({ code: "invalid_input" });
  });

  it("reads a negative or fractional limit as the SDK's MemorySession does", async () => {
    const reference = new MemorySession({ sessionId: "s" });
    const keel = createKeelSession({ store: createMemoryStore(), sessionId: "s" });
    const items = ["a", "b", "c"].map(message);
    await reference.addItems(items);
    await keel.addItems(items);
    for (const limit of [-1, -0.5, 0.5, 1.5, 2.5, 3, 7.25, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(await keel.getItems(limit), `limit ${limit}`).toEqual(await reference.getItems(limit));
    }
    expect(await keel.getItems(-1)).toEqual([]);
    expect(await keel.getItems(1.5)).toEqual([message("b"), message("c")]);
  });

  it("never returns the same item to concurrent pops, and loses none", async () => {
    const store = createMemoryStore();
    const writer = createKeelSession({ store, sessionId: "s" });
    await writer.addItems(Array.from({ length: 20 }, (_, index) => message(`m${index}`)));
    const poppers = Array.from({ length: 5 }, () => createKeelSession({ store, sessionId: "s" }));
    const popped = await Promise.all(poppers.flatMap((session) => [session.popItem(), session.popItem()]));
    const texts = popped.map((item) => (item as { content: string }).content);
    expect(new Set(texts).size).toBe(10);
    const remaining = (await writer.getItems()).map((item) => (item as { content: string }).content);
    expect(remaining).toEqual(Array.from({ length: 10 }, (_, index) => `m${index}`));
  });

  it("keeps no history of a cleared session, and a pop racing a clear decides again", async () => {
    const store = createMemoryStore();
    const log = ["openai-agents", "sessions", "s"];
    const session = createKeelSession({ store, sessionId: "s" });
    await session.addItems([message("a"), message("b")]);
    expect(await session.popItem()).toEqual(message("b"));
    await session.clearSession();
    expect((await store.logs.read(log))._unsafeUnwrap()).toEqual([]);
    expect((await store.logs.head(log))._unsafeUnwrap()).toBeUndefined();
    expect(await session.getItems()).toEqual([]);
    expect(await session.popItem()).toBeUndefined();
    await session.addItems([message("c")]);
    expect(await session.getItems()).toEqual([message("c")]);

    // A pop that read the log before a clear deleted it: its append (expectedSeq) is refused as
    // `deleted`, and the pop reads again and finds the session empty.
    await session.addItems([message("d")]);
    const racing = createKeelSession({ store, sessionId: "s" });
    const read = store.logs.read.bind(store.logs);
    let cleared = false;
    store.logs.read = (key, options) =>
      read(key, options).map(async (records) => {
        if (!cleared) {
          cleared = true;
          await session.clearSession();
        }
        return records;
      });
    expect(await racing.popItem()).toBeUndefined();
    expect(await session.getItems()).toEqual([]);
  });

  it("answers a log record that is not a session event with corrupt", async () => {
    const store = createMemoryStore();
    const session = createKeelSession({ store, sessionId: "s" });
    await store.logs.append(["openai-agents", "sessions", "s"], [{ id: "x", value: { type: "nonsense" } }]);
    const error = await session.getItems().catch((caught: unknown) => caught);
    expect(KeelError.is(error, "corrupt")).toBe(true);
  });
});
