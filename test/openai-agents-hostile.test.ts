/**
 * What a hostile or careless caller can hand `@keel/openai-agents`' session (issue 29 §4): the
 * factory's options and the items and limit of the `Session` methods, one field at a time swapped
 * for a hostile value (wrong types, prototype keys, NUL, huge strings and numbers, BigInt, cycles,
 * throwing getters, unknown keys). The Session API is Promise-based, so a refusal is a promise
 * rejected with a `KeelError` (the factory throws one). What the SDK's own `MemorySession` takes
 * and Keel can store answers as `MemorySession` answers, side by side; the rest is refused and
 * leaves the store exactly as it was; nothing pollutes `Object.prototype`.
 *
 * No entry point takes a path: the session lives in the store it is given, under a SafeName, so
 * there are no symlink cases here.
 */
import { isJsonValue, isSafeName, KeelError } from "@keel/core";
import { createKeelSession } from "@keel/openai-agents";
import { createMemoryStore } from "@keel/store";
import { MemorySession, type AgentInputItem } from "@openai/agents";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { expectRejectedKeel, expectThrowsKeel, hostileValue, settleRejection, storeSnapshot, throwingGetter, withHostileField } from "./support/hostile.js";

const RUNS = { numRuns: 150 };
/** How a refusal may answer: bad input, or an item past the store's size limit (a 4 MB string). */
const REFUSALS: KeelError["code"][] = ["invalid_input", "too_large"];

afterEach(() => {
  expect((Object.prototype as Record<string, unknown>)["polluted"]).toBeUndefined();
});

const validItems = [
  { role: "user", content: "My name is Ada." },
  { role: "assistant", status: "completed", content: [{ type: "output_text", text: "Hello, Ada." }] },
] as AgentInputItem[];

/** True for what JSON can hold (a throwing getter cannot be read: false). */
function isJson(value: unknown): boolean {
  try {
    return isJsonValue(value);
  } catch {
    return false;
  }
}
const isItem = (value: unknown) => typeof value === "object" && value !== null && !Array.isArray(value) && isJson(value);

/** A Keel session and a MemorySession holding the same two items. */
async function pair() {
  const store = createMemoryStore();
  const keel = createKeelSession({ store, sessionId: "s" });
  const reference = new MemorySession({ sessionId: "s" });
  await keel.addItems(validItems);
  await reference.addItems(validItems);
  return { store, keel, reference };
}


describe("@keel/openai-agents given hostile input", () => {
  it("createKeelSession throws invalid_input for a wrong-typed or unknown option", () => {
    const store = createMemoryStore();
    const valid = { store, sessionId: "s", prefix: ["app"], maxPopAttempts: 5 };
    const takes: Record<string, (value: unknown) => boolean> = {
      store: () => false,
      sessionId: (value) => typeof value === "string" && isSafeName(value),
      prefix: (value) => value === undefined,
      maxPopAttempts: (value) => value === undefined || (Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= 10_000),
    };
    fc.assert(
      fc.property(withHostileField(valid, 1), (options) => {
        const added = Object.keys(options).find((key) => !Object.hasOwn(valid, key));
        const changed = Object.keys(valid).find((key) => !Object.is(options[key], valid[key as keyof typeof valid]));
        if (added === undefined && (changed === undefined || takes[changed]?.(options[changed]))) {
          expect(createKeelSession(options as never)).toBeDefined();
          return;
        }
        expectThrowsKeel(() => createKeelSession(options as never));
      }),
      RUNS,
    );
    for (const options of [null, undefined, "s", { store, sessionId: "s", session: "t" }, { store, sessionId: "s", maxPopAttempts: 0 }]) {
      expectThrowsKeel(() => createKeelSession(options as never));
    }
  });

  it("addItems stores what MemorySession takes and JSON holds, as MemorySession returns it; refuses the rest, writing nothing", async () => {
    const whole = hostileValue.map((items) => ({ items, accepted: Array.isArray(items) && items.every(isItem) }));
    const oneItem = fc.tuple(fc.nat({ max: 1 }), hostileValue).map(([index, item]) => {
      const items: unknown[] = [...validItems];
      items[index] = item;
      return { items, accepted: isItem(item) };
    });
    const oneField = fc.tuple(fc.nat({ max: 1 }), fc.nat({ max: 1 })).chain(([index]) =>
      withHostileField(validItems[index] as Record<string, unknown>, 2).map((item) => {
        const items: unknown[] = [...validItems];
        items[index] = item;
        return { items, accepted: isItem(item) };
      }),
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(whole, oneItem, oneField), async ({ items, accepted }) => {
        const { store, keel, reference } = await pair();
        const before = await storeSnapshot(store);
        const error = accepted ? await settleRejection(() => keel.addItems(items as AgentInputItem[]), REFUSALS) : await expectRejectedKeel(() => keel.addItems(items as AgentInputItem[]));
        if (accepted) expect(error?.code, error?.message).not.toBe("invalid_input"); // too_large: a 4 MB string
        if (error !== undefined) {
          expect(await storeSnapshot(store)).toBe(before);
          return;
        }
        await reference.addItems(items as AgentInputItem[]);
        expect(await keel.getItems()).toEqual(await reference.getItems());
      }),
      RUNS,
    );
  });

  it("getItems reads any number as MemorySession does and refuses anything else, writing nothing", async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(hostileValue, fc.double(), fc.integer({ min: -5, max: 5 })), async (limit) => {
        const { store, keel, reference } = await pair();
        const before = await storeSnapshot(store);
        if (limit === undefined || typeof limit === "number") {
          expect(await keel.getItems(limit)).toEqual(await reference.getItems(limit));
        } else {
          await expectRejectedKeel(() => keel.getItems(limit as number));
        }
        expect(await storeSnapshot(store)).toBe(before);
      }),
      RUNS,
    );
  });
});

describe("@keel/openai-agents: the cases found from outside", () => {
  it("refuses an item with a throwing getter as invalid_input, not an untyped Error, writing nothing", async () => {
    const { store, keel } = await pair();
    const before = await storeSnapshot(store);
    const item = { role: "user", content: "hi" } as Record<string, unknown>;
    Object.defineProperty(item, "providerData", {
      enumerable: true,
      get() {
        throw new Error("hostile getter");
      },
    });
    for (const items of [[item], [validItems[0], item], [throwingGetter("role")], [{ role: "user", content: throwingGetter() }]]) {
      await expectRejectedKeel(() => keel.addItems(items as AgentInputItem[]));
    }
    const getters = [1, 2];
    Object.defineProperty(getters, 0, {
      get() {
        throw new Error("hostile index");
      },
    });
    await expectRejectedKeel(() => keel.addItems(getters as unknown as AgentInputItem[]));
    expect(await storeSnapshot(store)).toBe(before);
  });

  it("refuses unknown options", () => {
    expectThrowsKeel(() => createKeelSession({ store: createMemoryStore(), sessionId: "s", maxPopAttemps: 3 } as never));
  });

  it("answers a negative or fractional limit as MemorySession does", async () => {
    const { keel, reference } = await pair();
    for (const limit of [-1, -0.5, -0, 0.5, 1.5, 2.5, Number.NaN, Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY]) {
      expect(await keel.getItems(limit), `limit ${limit}`).toEqual(await reference.getItems(limit));
    }
  });
});
