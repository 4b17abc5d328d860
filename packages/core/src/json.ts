import { createHash } from "node:crypto";
import stringify from "fast-json-stable-stringify";
import { KeelError } from "./errors.js";

/** A JSON value: what Keel stores, hashes and sends in events. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/**
 * Checks that `value` is plain JSON: no `undefined`, no non-finite numbers, no cycles, no class
 * instances (Date, Map, Buffer…), no functions, symbols or bigints. Returns the path of the first
 * offending part, or `undefined` when the value is plain JSON.
 */
export function findNonJson(value: unknown): string | undefined {
  const seen = new Set<object>();
  const walk = (node: unknown, path: string): string | undefined => {
    if (node === null) return undefined;
    switch (typeof node) {
      case "string":
      case "boolean":
        return undefined;
      case "number":
        return Number.isFinite(node) ? undefined : `${path} is ${String(node)}`;
      case "object": {
        if (seen.has(node)) return `${path} is a cycle`;
        const proto = Object.getPrototypeOf(node);
        const isArray = Array.isArray(node);
        if (!isArray && proto !== Object.prototype && proto !== null) {
          return `${path} is a ${(node as object).constructor?.name ?? "non-plain object"}, not plain JSON`;
        }
        seen.add(node);
        if (isArray) {
          for (let index = 0; index < node.length; index++) {
            const problem = walk(node[index], `${path}[${index}]`);
            if (problem) return problem;
          }
        } else {
          for (const key of Object.keys(node)) {
            const problem = walk((node as Record<string, unknown>)[key], `${path}.${key}`);
            if (problem) return problem;
          }
        }
        seen.delete(node);
        return undefined;
      }
      default:
        return `${path} is ${typeof node === "undefined" ? "undefined" : `a ${typeof node}`}`;
    }
  };
  return walk(value, "$");
}

/** True when `value` is plain JSON (see {@link findNonJson}). */
export function isJsonValue(value: unknown): value is JsonValue {
  return findNonJson(value) === undefined;
}

/**
 * Canonical JSON text of a value: keys sorted, no whitespace, so equal values give equal text.
 * Throws `KeelError` `invalid_input` for anything that is not plain JSON (undefined, NaN,
 * Infinity, cycles, class instances).
 */
export function canonicalJson(value: unknown): string {
  const problem = findNonJson(value);
  if (problem) {
    throw new KeelError("invalid_input", `value is not plain JSON: ${problem}`, { details: { problem } });
  }
  return stringify(value);
}

/**
 * A content digest of a JSON value: `"sha256:<hex>"` over its canonical JSON.
 * Throws like {@link canonicalJson}.
 */
export function digest(value: unknown): string {
  return `sha256:${createHash("sha256").update(canonicalJson(value)).digest("hex")}`;
}

/** UTF-8 byte length of a string. */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}
