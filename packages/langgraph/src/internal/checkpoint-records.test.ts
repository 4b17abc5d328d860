import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isPlainJsonText } from "./checkpoint-records.js";

const serde = new JsonPlusSerializer();

/**
 * The same value, node by node: same prototype, same own keys in the same order, same
 * primitives (`toStrictEqual` reads an own `constructor` key as the class, so it cannot judge
 * `{"constructor":{}}`).
 */
function expectSame(actual: unknown, expected: unknown, path = "$"): void {
  if (typeof actual !== "object" || actual === null) {
    expect(actual, path).toBe(expected);
    return;
  }
  expect(typeof expected === "object" && expected !== null, path).toBe(true);
  expect(Object.getPrototypeOf(actual), path).toBe(Object.getPrototypeOf(expected));
  expect(Reflect.ownKeys(actual), path).toEqual(Reflect.ownKeys(expected as object));
  for (const name of Object.keys(actual)) expectSame((actual as Record<string, unknown>)[name], (expected as Record<string, unknown>)[name], `${path}.${name}`);
}
const decoder = new TextDecoder();

/** Keys that matter to LangGraph's reviver, mixed with arbitrary ones. */
const key = fc.oneof(fc.constantFrom("lc", "type", "id", "args", "kwargs", "value", "__proto__", "constructor"), fc.string({ unit: "binary" }));
/** Values LangGraph's serializer writes as records it revives, beside plain JSON. */
const revivable = fc.oneof(
  fc.constant(undefined),
  fc.array(fc.integer()).map((items) => new Set(items)),
  fc.array(fc.tuple(fc.string(), fc.integer())).map((entries) => new Map(entries)),
  fc.string().map((message) => new Error(message)),
  fc.uint8Array({ maxLength: 8 }),
  fc.constantFrom(/a+b/g, /x/),
  fc.record({ lc: fc.constantFrom(1, 2), type: fc.constantFrom("constructor", "undefined", "secret"), id: fc.array(fc.string(), { maxLength: 2 }) }),
);
const value = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: "small" },
    fc.jsonValue({ maxDepth: 2 }),
    fc.string({ unit: "binary" }),
    revivable,
    fc.array(tie("node"), { maxLength: 4 }),
    fc.dictionary(key, tie("node"), { maxKeys: 4 }),
  ),
})).node;

describe("isPlainJsonText", () => {
  it("is true only where LangGraph's serializer loads exactly what JSON.parse gives", async () => {
    const seen = { plain: 0, revived: 0 };
    await fc.assert(
      fc.asyncProperty(value, async (input) => {
        const [type, bytes] = await serde.dumpsTyped(input);
        if (type !== "json") return;
        const text = decoder.decode(bytes);
        const loaded: unknown = await serde.loadsTyped("json", text);
        if (!isPlainJsonText(text)) {
          seen.revived += 1;
          return;
        }
        seen.plain += 1;
        expectSame(JSON.parse(text), loaded);
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
