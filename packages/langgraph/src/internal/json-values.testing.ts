/** Test helpers: values as LangGraph's serializer writes them, and a node-by-node comparison. */
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import fc from "fast-check";
import { expect } from "vitest";

/**
 * The same value, node by node: same prototype, same own keys in the same order, same
 * primitives (`toStrictEqual` reads an own `constructor` key as the class, so it cannot judge
 * `{"constructor":{}}`).
 */
export function expectSame(actual: unknown, expected: unknown, path = "$"): void {
  if (typeof actual !== "object" || actual === null) {
    expect(actual, path).toBe(expected);
    return;
  }
  expect(typeof expected === "object" && expected !== null, path).toBe(true);
  expect(Object.getPrototypeOf(actual), path).toBe(Object.getPrototypeOf(expected));
  expect(Reflect.ownKeys(actual), path).toEqual(Reflect.ownKeys(expected as object));
  for (const name of Object.keys(actual)) expectSame((actual as Record<string, unknown>)[name], (expected as Record<string, unknown>)[name], `${path}.${name}`);
}

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
  fc.record({ lc: fc.constant(1), type: fc.constant("constructor"), id: fc.constantFrom(["langchain_core", "nowhere", "X"], ["elsewhere", "X"]), kwargs: fc.jsonValue({ maxDepth: 1 }) }),
);
/** LangChain messages, which the serializer writes as `lc: 1` constructor records. */
const message = fc.oneof(
  fc.string().map((content) => new HumanMessage(content)),
  fc.record({ content: fc.string(), id: fc.option(fc.string(), { nil: undefined }) }).map(({ content, id }) => new AIMessage(id === undefined ? { content } : { content, id })),
  fc.record({ content: fc.string(), args: fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }) }).map(
    ({ content, args }) => new AIMessage({ content, tool_calls: [{ id: "call-1", name: "look", args, type: "tool_call" }] }),
  ),
  fc.string().map((content) => new ToolMessage({ content, tool_call_id: "call-1" })),
  fc.record({ text: fc.string(), extra: fc.jsonValue({ maxDepth: 2 }) }).map(({ text, extra }) => new HumanMessage({ content: [{ type: "text", text }], additional_kwargs: { extra } })),
);
export const value = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: "small" },
    fc.jsonValue({ maxDepth: 2 }),
    fc.string({ unit: "binary" }),
    revivable,
    message,
    fc.array(tie("node"), { maxLength: 4 }),
    fc.dictionary(key, tie("node"), { maxKeys: 4 }),
  ),
})).node;

