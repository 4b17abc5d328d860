/**
 * Values in and out of the saver's serializer. One load path with two shortcuts, each kept for
 * a measured target of bench/README.md's langgraph notes ("at least as fast as LangGraph's own
 * SqliteSaver/PostgresSaver"); anything they cannot answer goes to the serializer.
 */
import { KeelError, toKeelError } from "@keel/core";
import { fromSerialized, isPlainJsonText, toSerialized, unrepresentable, type Serialized } from "./checkpoint-records.js";
import { reviveParsedJson } from "./json-plus-revival.js";
import type { SaverContext } from "./saver-context.js";

/**
 * A stored value, deserialized at once when it can be: under LangGraph's own serializer, JSON
 * text in which nothing can be revived (see {@link isPlainJsonText}) is what `JSON.parse`
 * gives, so the serializer's walk over every node (a promise each) is skipped. Undefined when
 * the serializer must decide ({@link loadValue}); any other serializer always does.
 */
export function loadNow(context: SaverContext, serialized: Serialized): { value: unknown } | undefined {
  // Serves the put + getTuple step and the plain listing (bench/README.md, langgraph fourth pass).
  if (context.defaultSerde && serialized.type === "json" && serialized.encoding === "utf8" && isPlainJsonText(serialized.data)) return { value: JSON.parse(serialized.data) };
  return undefined;
}

/** A stored value, deserialized: at once when {@link loadNow} can, else by the serializer. */
export async function loadValue(context: SaverContext, serialized: Serialized): Promise<unknown> {
  const now = loadNow(context, serialized);
  return now === undefined ? reviveValue(context, serialized) : now.value;
}

/**
 * A stored value, deserialized (for a caller that already tried {@link loadNow}): under
 * LangGraph's own serializer, LangChain objects in plain JSON are loaded as it would load them,
 * without its walk (see {@link reviveParsedJson}); anything else by the serializer.
 */
export async function reviveValue(context: SaverContext, serialized: Serialized): Promise<unknown> {
  // Serves the LangChain-message listing and step (bench/README.md, langgraph fifth pass).
  if (context.defaultSerde && serialized.type === "json" && serialized.encoding === "utf8") {
    const revived = reviveParsedJson(JSON.parse(serialized.data));
    if (revived !== undefined) return revived.value;
  }
  return context.serde.loadsTyped(serialized.type, fromSerialized(serialized));
}

/**
 * A value serialized for storing, or `invalid_input` naming `what`: when the serializer throws
 * (a getter that throws, bytes that are not UTF-8 under "json"), or writes a placeholder or
 * nothing where JSON cannot hold the value (see {@link unrepresentable}).
 */
export async function dumpValue(context: SaverContext, value: unknown, what: string): Promise<Serialized> {
  let serialized: Serialized;
  let problem: string | undefined;
  try {
    const [type, bytes] = await context.serde.dumpsTyped(value);
    serialized = toSerialized(type, bytes);
    problem = unrepresentable(value, serialized);
  } catch (error) {
    throw toKeelError(error, "invalid_input", `${what} cannot be serialized`);
  }
  if (problem !== undefined) throw new KeelError("invalid_input", `${what} cannot be stored: ${problem}`);
  return serialized;
}
