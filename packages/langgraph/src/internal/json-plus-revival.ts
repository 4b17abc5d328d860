/**
 * LangGraph's `JsonPlusSerializer` revival, without its walk where the outcome is known: the
 * serializer walks every node of a stored value with a promise each, and hands each LangChain
 * object it meets back to `@langchain/core`'s `load` as JSON text. Here, a parsed value's plain
 * parts are kept as they are and each LangChain object is handed to `load` directly; anything
 * else the serializer revives is left to it.
 */
import { load } from "@langchain/core/load";

/**
 * What `JsonPlusSerializer.loadsTyped("json", text)` gives for `parsed = JSON.parse(text)`, or
 * undefined when the serializer must decide. It is decided here for a value in which every
 * object with an `"lc"` key is a LangChain constructor record (`lc: 1`, `type: "constructor"`,
 * an `id` array) with no other such object inside it, and no object has a `"__proto__"` key:
 * the serializer copies such a value's plain parts node by node (the same value, fresh as
 * `parsed` is) and loads each record with `load(JSON.stringify(record))`, which is done here.
 * Everything else (`lc: 2` records for undefined, Set, Map, RegExp, Error, bytes and delta
 * snapshots; secrets; nested records; a `"__proto__"` key, which the serializer's walk would
 * assign as a prototype) is left to the serializer. `parsed` is used, not copied: pass a value
 * no one else holds.
 */
export function reviveParsedJson(parsed: unknown): { value: unknown } | undefined {
  // Decided before any load starts, so none is left running (or failing) unobserved.
  return isDecided(parsed) ? { value: revive(parsed) } : undefined;
}

/**
 * True when no object in `node` has a `"__proto__"` key and every one with an `"lc"` key is a
 * LangChain constructor record (where `records` allows one) with no `"lc"` object inside it.
 */
function isDecided(node: unknown, records = true): boolean {
  if (typeof node !== "object" || node === null) return true;
  if (Array.isArray(node)) return (node as unknown[]).every((item) => isDecided(item, records));
  const record = node as Record<string, unknown>;
  if (Object.hasOwn(record, "__proto__")) return false;
  if (Object.hasOwn(record, "lc")) {
    return records && record.lc === 1 && record.type === "constructor" && Array.isArray(record.id) && Object.keys(record).every((name) => isDecided(record[name], false));
  }
  return Object.keys(record).every((name) => isDecided(record[name], records));
}

/** A decided node revived: itself when plain, else a promise of a new node with each LangChain record loaded. */
function revive(node: unknown): unknown {
  if (typeof node !== "object" || node === null) return node;
  if (Array.isArray(node)) {
    let pending = false;
    const revived = (node as unknown[]).map((item) => {
      const value = revive(item);
      if (value instanceof Promise) pending = true;
      return value;
    });
    return pending ? Promise.all(revived) : node;
  }
  const record = node as Record<string, unknown>;
  if (Object.hasOwn(record, "lc")) return load(JSON.stringify(record));
  let pending: Promise<void>[] | undefined;
  let copy: Record<string, unknown> | undefined;
  for (const name of Object.keys(record)) {
    const value = revive(record[name]);
    if (!(value instanceof Promise)) continue;
    // A new object with the same keys in the same order, as the serializer builds one.
    copy ??= { ...record };
    const target = copy;
    (pending ??= []).push(
      value.then((revived: unknown) => {
        target[name] = revived;
      }),
    );
  }
  return pending === undefined ? node : Promise.all(pending).then(() => copy);
}
