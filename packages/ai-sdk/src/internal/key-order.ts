import { isRecord, type JsonRecord } from "./message-parts.js";

/**
 * Where keys of a JSON value are not in the order of an equal value, recorded so the order can be
 * put back. Why: the transcript validates what it stores with zod, whose output puts a schema's
 * own keys (`role`, `content`, a block's `type`) first; a message whose keys came in another
 * order would otherwise come back reordered.
 *
 * `k` is an object's key order, `c` the patches of its values by key, `i` an array's patches by
 * index. Absent means "already in order".
 */
export interface KeyOrderPatch {
  k?: string[];
  c?: Record<string, KeyOrderPatch>;
  i?: Record<string, KeyOrderPatch>;
}

/** The patch that puts `actual`'s keys in `wanted`'s order (`undefined` when they already are; the values must be equal up to key order). */
export function keyOrderPatch(wanted: unknown, actual: unknown): KeyOrderPatch | undefined {
  if (Array.isArray(wanted) && Array.isArray(actual)) {
    const items: Record<string, KeyOrderPatch> = {};
    wanted.forEach((item, index) => {
      const patch = keyOrderPatch(item, actual[index]);
      if (patch) items[index] = patch;
    });
    return Object.keys(items).length > 0 ? { i: items } : undefined;
  }
  if (!isRecord(wanted) || !isRecord(actual)) return undefined;
  const patch: KeyOrderPatch = {};
  const wantedKeys = Object.keys(wanted);
  if (wantedKeys.join("\u0000") !== Object.keys(actual).join("\u0000")) patch.k = wantedKeys;
  const children: Record<string, KeyOrderPatch> = {};
  for (const key of wantedKeys) {
    const child = keyOrderPatch(wanted[key], actual[key]);
    if (child) children[key] = child;
  }
  if (Object.keys(children).length > 0) patch.c = children;
  return patch.k || patch.c ? patch : undefined;
}

/** `value` with the key order of `patch` put back (a copy where something moves). */
export function applyKeyOrder(value: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return value;
  const { k, c, i } = patch as KeyOrderPatch;
  if (Array.isArray(value)) return isRecord(i) ? value.map((item, index) => applyKeyOrder(item, i[index])) : value;
  if (!isRecord(value)) return value;
  const keys = Array.isArray(k) ? [...k.filter((key) => Object.hasOwn(value, key)), ...Object.keys(value).filter((key) => !k.includes(key))] : Object.keys(value);
  const out: JsonRecord = {};
  for (const key of keys) out[key] = isRecord(c) ? applyKeyOrder(value[key], c[key]) : value[key];
  return out;
}
