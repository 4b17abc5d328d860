/**
 * One home for the hostile-input suites (`test/*-hostile.test.ts`): fast-check arbitraries of
 * values a careless or hostile caller hands a public entry point, and the one assertion every
 * such suite makes — the call answers with a typed `KeelError` (never a synchronous throw, a
 * TypeError, a crash or a silent default).
 *
 * A suite takes a valid argument, swaps one field at a time for a hostile value
 * ({@link withHostileField}), calls the entry point and checks {@link expectRefused}; then it
 * checks that nothing was written (a store read, a directory listing, a byte-for-byte decoy).
 */
import { KeelError, type KeelErrorCode } from "@keel/core";
import type { KeelStore } from "@keel/store";
import fc from "fast-check";
import type { Result } from "neverthrow";
import { expect } from "vitest";

/** An object whose named property throws when read (a getter a host's proxy or model left). */
export function throwingGetter(key = "value"): Record<string, unknown> {
  const target: Record<string, unknown> = {};
  Object.defineProperty(target, key, {
    enumerable: true,
    get() {
      throw new Error(`hostile getter ${key}`);
    },
  });
  return target;
}

/** Strings no name, path, id or text field should take as they are: NUL, traversal, huge, lone surrogates. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "",
    "\0",
    "a\0b",
    "../x",
    "../../etc/passwd",
    "/abs",
    "a/b",
    "\\x",
    ".",
    "..",
    " ",
    "\n",
    "\uD800",
    "__proto__",
    "constructor",
  ),
  fc.string({ minLength: 1, maxLength: 8 }).map((text) => `${text}\0${text}`),
  fc.constantFrom(1_000_000, 4_000_000).map((length) => "x".repeat(length)),
);

/** Numbers outside what any count, limit, timestamp or version accepts. */
export const hostileNumber: fc.Arbitrary<number> = fc.constantFrom(
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  -1,
  -0.5,
  0.5,
  1.5,
  Number.MAX_SAFE_INTEGER + 2,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  8.64e15 + 1,
);

/** Objects with prototype keys, as JSON.parse makes them (own `__proto__`) and as code does. */
export const prototypeObject: fc.Arbitrary<Record<string, unknown>> = fc.constantFrom(
  JSON.parse('{"__proto__":{"polluted":true}}') as Record<string, unknown>,
  JSON.parse('{"constructor":{"prototype":{"polluted":true}}}') as Record<string, unknown>,
  { prototype: { polluted: true } },
);

/**
 * Values of the wrong type for any field: null and undefined, wrong primitives, BigInt and
 * symbols, functions, class instances, arrays for objects and objects for arrays, prototype keys,
 * throwing getters, cycles, and the hostile strings and numbers above.
 */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    null,
    undefined,
    true,
    false,
    0,
    1n,
    Symbol("hostile"),
    () => 1,
    new Date(Number.NaN),
    new Map([["a", 1]]),
    new Set([1]),
    new Uint8Array([0, 1]),
    [],
    [null],
    {},
    Object.create(null) as unknown,
    (() => {
      const cycle: Record<string, unknown> = {};
      cycle.self = cycle;
      return cycle;
    })(),
  ),
  fc.constant(null).map(() => throwingGetter()),
  hostileString,
  hostileNumber,
  prototypeObject,
);

/**
 * Values whose very reading is hostile, for a table a suite walks with every entry point: a
 * proxy whose every property read throws, an array proxy whose items throw when read, an object
 * with a throwing getter, cycles (an object, an array), a huge array of items that are not what
 * any item should be, and a revoked proxy (even `Array.isArray` throws on it). An entry point
 * answers each with a typed refusal (or `false`, for a predicate), never a throw.
 *
 * Left out: a proxy whose `getPrototypeOf` trap throws. Where a record is expected it reads as an
 * empty one and is accepted; where it is refused, zod reads it again while it words its issue,
 * which `@keel/core`'s `validate` guards (its own test covers that case and the revoked proxy
 * where a primitive is expected).
 */
export function hostileStructures(): [label: string, value: unknown][] {
  const trap = (): never => {
    throw new Error("hostile proxy trap");
  };
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  const cyclicArray: unknown[] = [];
  cyclicArray.push(cyclicArray);
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  return [
    ["a proxy whose reads throw", new Proxy({}, { get: trap, has: trap, ownKeys: trap, getOwnPropertyDescriptor: trap })],
    ["an array proxy whose items throw", new Proxy([1, 2, 3], { get: (target, key) => (key === "length" ? target.length : typeof key === "string" && /^\d+$/.test(key) ? trap() : Reflect.get(target, key)) })],
    ["a throwing getter", throwingGetter("type")],
    ["a cyclic object", cycle],
    ["a cyclic array", cyclicArray],
    ["a huge array", new Array(200_000).fill({ huge: true })],
    ["a revoked proxy", revoked.proxy],
  ];
}

/**
 * Variants of a valid argument object with one field changed: each own key (recursively into
 * plain nested objects, to `depth`) set to a hostile value, or an unknown key added, or a
 * prototype key added. Shrinks towards the first key.
 */
export function withHostileField<T extends Record<string, unknown>>(valid: T, depth = 2): fc.Arbitrary<Record<string, unknown>> {
  const paths = fieldPaths(valid, depth);
  const replaced = fc
    .tuple(fc.constantFrom(...(paths.length > 0 ? paths : [["unknownField"]])), hostileValue)
    .map(([fieldPath, value]) => setAt(valid, fieldPath, value));
  const extraKey = fc.constantFrom("unknownOption", "__proto__", "constructor").map((key) => {
    const copy: Record<string, unknown> = { ...valid };
    Object.defineProperty(copy, key, { value: { polluted: true }, enumerable: true, writable: true, configurable: true });
    return copy;
  });
  return fc.oneof({ weight: 4, arbitrary: replaced }, { weight: 1, arbitrary: extraKey });
}

/**
 * Which top-level field a {@link withHostileField} variant of `valid` changed (a key it removed
 * included), or the key it added (`added`); `undefined` when the swap left it equal. Lets a
 * suite decide whether the field may take the value (then {@link settle}) or must refuse it.
 */
export function changedField(valid: Record<string, unknown>, variant: Record<string, unknown>): { key: string; added: boolean } | undefined {
  for (const key of Object.keys(variant)) {
    if (!Object.hasOwn(valid, key)) return { key, added: true };
    if (!Object.is(variant[key], valid[key])) return { key, added: false };
  }
  for (const key of Object.keys(valid)) if (!Object.hasOwn(variant, key)) return { key, added: false };
  return undefined;
}

function fieldPaths(value: Record<string, unknown>, depth: number, prefix: string[] = []): string[][] {
  const paths: string[][] = [];
  for (const [key, child] of Object.entries(value)) {
    const here = [...prefix, key];
    paths.push(here);
    if (depth > 1 && child !== null && typeof child === "object" && !Array.isArray(child)) {
      paths.push(...fieldPaths(child as Record<string, unknown>, depth - 1, here));
    }
  }
  return paths;
}

function setAt(value: Record<string, unknown>, fieldPath: string[], replacement: unknown): Record<string, unknown> {
  const [head, ...rest] = fieldPath;
  if (head === undefined) return value;
  const copy: Record<string, unknown> = { ...value };
  copy[head] = rest.length === 0 ? replacement : setAt((value[head] ?? {}) as Record<string, unknown>, rest, replacement);
  return copy;
}

/**
 * Calls `call` and asserts it answered with a typed refusal: no synchronous throw, no rejected
 * promise, a failed `Result` whose error is a `KeelError` (with one of `codes` when given).
 * Accepts a plain value, a promise, a `Result` or a `ResultAsync`. Returns the error.
 */
export async function expectRefused(call: () => unknown, codes: readonly KeelErrorCode[] = ["invalid_input"]): Promise<KeelError> {
  let outcome: unknown;
  try {
    outcome = await call();
  } catch (error) {
    throw new Error(`expected a typed refusal, got a throw: ${describe(error)}`);
  }
  const result = outcome as { isErr?: () => boolean; error?: unknown; value?: unknown } | undefined;
  if (typeof result?.isErr !== "function") throw new Error(`expected a Result, got ${describe(outcome)}`);
  if (!result.isErr()) throw new Error(`expected a typed refusal, got success: ${describe(result.value)}`);
  const error = result.error;
  expect(KeelError.is(error), `a KeelError, not ${describe(error)}`).toBe(true);
  const code = (error as KeelError).code;
  expect(codes, `refused with ${code}: ${(error as KeelError).message}`).toContain(code);
  return error as KeelError;
}

/**
 * Calls a function whose contract is to throw a `KeelError` (a constructor's bad options) and
 * asserts it did, with one of `codes`.
 */
export function expectThrowsKeel(call: () => unknown, codes: readonly KeelErrorCode[] = ["invalid_input"]): KeelError {
  try {
    call();
  } catch (error) {
    expect(KeelError.is(error), `a KeelError, not ${describe(error)}`).toBe(true);
    expect(codes).toContain((error as KeelError).code);
    return error as KeelError;
  }
  throw new Error("expected a KeelError to be thrown, got a return");
}

/**
 * Calls `call`, whose contract is a Promise (an SDK interface Keel implements, as LangGraph's
 * checkpointer or the Agents SDK's Session, where a refusal cannot be a `Result`), and asserts it
 * rejected with a `KeelError` (with one of `codes`): not a synchronous throw, a resolution, or
 * another error. For an async generator, call its `next()`. Returns the error.
 */
export async function expectRejectedKeel(call: () => unknown, codes: readonly KeelErrorCode[] = ["invalid_input"]): Promise<KeelError> {
  let pending: unknown;
  try {
    pending = call();
  } catch (error) {
    throw new Error(`expected a rejected promise, got a synchronous throw: ${describe(error)}`);
  }
  if (!(pending instanceof Promise)) throw new Error(`expected a promise, got ${describe(pending)}`);
  let value: unknown;
  try {
    value = await pending;
  } catch (error) {
    expect(KeelError.is(error), `a KeelError, not ${describe(error)}`).toBe(true);
    const code = (error as KeelError).code;
    expect(codes, `rejected with ${code}: ${(error as KeelError).message}`).toContain(code);
    return error as KeelError;
  }
  throw new Error(`expected a rejected promise, got a resolution: ${describe(value)}`);
}

/**
 * Awaits `call`, a Promise API's method, where either outcome may be right (a field that may
 * take the hostile value): undefined when it resolved, else the `KeelError` it rejected with,
 * asserted to have one of `codes`; any other error fails. {@link settle} for a Promise API.
 */
export async function settleRejection(call: () => Promise<unknown>, codes: readonly KeelErrorCode[] = ["invalid_input"]): Promise<KeelError | undefined> {
  const error = await call().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (error === undefined) return undefined;
  expect(KeelError.is(error), `a KeelError, not ${describe(error)}`).toBe(true);
  expect(codes, `rejected with ${(error as KeelError).code}: ${(error as KeelError).message}`).toContain((error as KeelError).code);
  return error as KeelError;
}

function describe(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  try {
    const text = JSON.stringify(value, (_key, item: unknown) => (typeof item === "bigint" ? `${item}n` : item));
    return text === undefined ? String(value) : text.slice(0, 200);
  } catch {
    return String(value).slice(0, 200);
  }
}

/** What {@link settle} saw: a success, or a typed refusal. */
export type Settled = { ok: true; value: unknown } | { ok: false; error: KeelError };

/**
 * Calls `call` and asserts it answered with a result, never a throw or a rejection, and that a
 * failure is a `KeelError`: for a field that may take the hostile value (an empty string where
 * any string is fine), where either a success or a typed refusal is right.
 */
export async function settle(call: () => unknown): Promise<Settled> {
  let outcome: unknown;
  try {
    outcome = await call();
  } catch (error) {
    throw new Error(`expected a result, got a throw: ${describe(error)}`);
  }
  const result = outcome as { isErr?: () => boolean; error?: unknown; value?: unknown } | undefined;
  if (typeof result?.isErr !== "function") throw new Error(`expected a Result, got ${describe(outcome)}`);
  if (!result.isErr()) return { ok: true, value: result.value };
  expect(KeelError.is(result.error), `a KeelError, not ${describe(result.error)}`).toBe(true);
  return { ok: false, error: result.error as KeelError };
}

/**
 * Everything a store holds, as one string: every document (key, version, value) and every log
 * record (key, seq, id, value). Equal before and after a refused call proves it wrote nothing.
 */
export async function storeSnapshot(store: Pick<KeelStore, "docs" | "logs">): Promise<string> {
  const unwrap = <T>(result: Result<T, KeelError>): T => {
    if (result.isErr()) throw new Error(`the store could not be read: ${describe(result.error)}`);
    return result.value;
  };
  const documents: unknown[] = [];
  let after: string | undefined;
  do {
    const page = unwrap(await store.docs.list([], after === undefined ? {} : { after }));
    for (const item of page.items) documents.push(unwrap(await store.docs.get(item.key)));
    after = page.next;
  } while (after !== undefined);
  const logs: unknown[] = [];
  for (const key of unwrap(await store.logs.list([]))) logs.push({ key, records: unwrap(await store.logs.read(key)) });
  return JSON.stringify({ documents, logs });
}
