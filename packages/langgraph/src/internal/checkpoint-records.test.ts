import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isPlainJsonText } from "./checkpoint-records.js";
import { expectSame, value } from "./json-values.testing.js";

const serde = new JsonPlusSerializer();

const decoder = new TextDecoder();

describe("isPlainJsonText", () => {
  it("is true only where LangGraph's serializer loads exactly what JSON.parse gives", async () => {
    const seen = { plain: 0, revived: 0 };
    await fc.assert(
      fc.asyncProperty(value, async (input) => {
        const [type, bytes] = await serde.dumpsTyped(input);
        if (type !== "json") return;
        const text = decoder.decode(bytes);
        const loading = serde.loadsTyped("json", text);
        if (!isPlainJsonText(text)) {
          await loading.catch(() => undefined); // a record it cannot revive: the serializer's to answer
          seen.revived += 1;
          return;
        }
        seen.plain += 1;
        expectSame(JSON.parse(text), await loading);
      }),
      { numRuns: 500 },
    );
    // Both sides of the answer were exercised, not only one.
    expect(seen.plain).toBeGreaterThan(50);
    expect(seen.revived).toBeGreaterThan(50);
  });

  it("leaves to the serializer every value it revives, and any text that could spell a revived key", () => {
    for (const text of ['{"lc":2,"type":"undefined"}', '[{"a":{"lc":1}}]', '{"\\u006cc":2}', '{"__proto__":{"x":1}}', '"\\ud800"']) {
      expect(isPlainJsonText(text)).toBe(false);
    }
    for (const text of ['{"messages":[{"role":"user","content":"hi"}]}', "[1,2,3]", '"lc is a word"', "null"]) expect(isPlainJsonText(text)).toBe(true);
  });
});
