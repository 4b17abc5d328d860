import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { reviveParsedJson } from "./json-plus-revival.js";
import { expectSame, value } from "./json-values.testing.js";

const serde = new JsonPlusSerializer();
const decoder = new TextDecoder();

/** How a load ended: its value, or its error's class and message. */
async function settle(loading: () => unknown): Promise<{ value: unknown } | { error: string }> {
  try {
    return { value: await loading() };
  } catch (error) {
    return { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}

/** The LangChain records (objects with an `"lc"` key) of a parsed value, outermost only. */
function recordsIn(node: unknown, into: unknown[] = []): unknown[] {
  if (typeof node !== "object" || node === null) return into;
  if (!Array.isArray(node) && Object.hasOwn(node, "lc")) into.push(node);
  else for (const item of Object.values(node)) recordsIn(item, into);
  return into;
}

describe("reviveParsedJson", () => {
  it("gives what LangGraph's serializer gives wherever it decides, and leaves the rest to it", async () => {
    const seen = { decided: 0, withMessages: 0, failed: 0, deferred: 0 };
    await fc.assert(
      fc.asyncProperty(value, async (input) => {
        const [type, bytes] = await serde.dumpsTyped(input);
        if (type !== "json") return;
        const text = decoder.decode(bytes);
        const expected = await settle(() => serde.loadsTyped("json", text));
        const revived = reviveParsedJson(JSON.parse(text));
        if (revived === undefined) {
          seen.deferred += 1;
          return;
        }
        seen.decided += 1;
        if (text.includes('"lc":1')) seen.withMessages += 1;
        const actual = await settle(() => revived.value);
        if ("error" in expected) {
          seen.failed += 1;
          // With several records that fail to load, which one the serializer names depends on
          // the order its walk's promises settle in (an array's items at once, an object's keys
          // in turn), not on the value: both fail, each with the serializer's own error for one
          // of the value's records.
          const errors = await Promise.all(recordsIn(JSON.parse(text)).map((record) => settle(() => serde.loadsTyped("json", JSON.stringify(record)))));
          expect(errors).toContainEqual(expected);
          expect(errors).toContainEqual(actual);
          return;
        }
        expect("value" in actual, JSON.stringify(actual)).toBe(true);
        if ("value" in actual) expectSame(actual.value, expected.value);
      }),
      { numRuns: 500 },
    );
    // Each kind of answer was exercised, not only one.
    expect(seen.withMessages).toBeGreaterThan(50);
    expect(seen.deferred).toBeGreaterThan(50);
    expect(seen.failed).toBeGreaterThan(0);
  });

  it("loads LangChain messages in plain JSON as the classes they were", async () => {
    const history = { messages: [new HumanMessage("hi"), new AIMessage({ content: "hello", id: "m-2" })], step: 3 };
    const [, bytes] = await serde.dumpsTyped(history);
    const revived = reviveParsedJson(JSON.parse(decoder.decode(bytes)));
    expect(revived).toBeDefined();
    const loaded = (await revived!.value) as typeof history;
    expect(loaded.messages[0]).toBeInstanceOf(HumanMessage);
    expect(loaded.messages[1]).toBeInstanceOf(AIMessage);
    expect(loaded.messages[1]!.id).toBe("m-2");
    expect(loaded.step).toBe(3);
    expectSame(loaded, await serde.loadsTyped("json", decoder.decode(bytes)));
  });

  it("leaves to the serializer every record it revives itself, nested records and prototype keys", () => {
    for (const text of [
      '{"lc":2,"type":"undefined"}',
      '[{"lc":2,"type":"constructor","id":["Set"],"args":[[1]]}]',
      '{"lc":1,"type":"secret","id":["KEY"]}',
      '{"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],"kwargs":{"content":"x","extra":{"lc":2,"type":"undefined"}}}',
      '{"a":{"__proto__":{"x":1}}}',
      '{"\\u006cc":2,"type":"undefined"}',
    ]) {
      expect(reviveParsedJson(JSON.parse(text)), text).toBeUndefined();
    }
  });

  it("returns a plain value itself, without a copy or a promise", () => {
    const parsed = { messages: [{ role: "user", content: "hi" }], lcx: 1 };
    expect(reviveParsedJson(parsed)?.value).toBe(parsed);
  });
});
