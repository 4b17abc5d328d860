import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  CheckpointInputSchema,
  NewVersionsInputSchema,
  RunnableConfigInputSchema,
  acceptCheckpoint,
  acceptConfig,
  acceptNewVersions,
} from "./checkpoint-input.js";

/**
 * The fast paths of the checks every `put` meets may answer only for input that the zod schema
 * accepts (and, for the config, whose fields the saver reads, with the schema's values). Inputs
 * are drawn near the valid shapes: right and wrong field values, missing and extra keys, a
 * "__proto__" key, objects without a prototype, class instances and Maps.
 */

const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(0, 1, -1, 0.5, Number.MAX_SAFE_INTEGER, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY, -0),
  fc.constantFrom("", "abc", "1f0a-b", "../x", "a\0b", "x".repeat(200)),
  fc.constantFrom(true, null, undefined, 1n),
  fc.constantFrom({}, [], [1], new Map(), Object.create(null) as object, JSON.parse('{"__proto__":1}') as object),
);

/** Objects over `shape`: mostly every key with a valid value, now and then one replaced or missing, a key added, a prototype-less object or an instance. */
function objectsOf(shape: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> {
  const fields = Object.fromEntries(Object.entries(shape).map(([key, valid]) => [key, fc.oneof({ arbitrary: valid, weight: 10 }, { arbitrary: anyValue, weight: 1 })]));
  const records = fc.oneof({ arbitrary: fc.record(fields), weight: 4 }, { arbitrary: fc.record(fields, { requiredKeys: [] }), weight: 1 });
  class Shaped {}
  return fc.tuple(records, fc.constantFrom("literal", "literal", "literal", "null-prototype", "instance", "proto-key", "extra")).map(([record, kind]) => {
    const value: Record<string, unknown> = kind === "null-prototype" ? Object.create(null) : kind === "instance" ? new Shaped() : {};
    Object.assign(value, record);
    if (kind === "proto-key") Object.defineProperty(value, "__proto__", { value: {}, enumerable: true });
    if (kind === "extra") value.extra = 1;
    return value;
  });
}

/** Maps of `values` by channel name, near-valid the same way. */
function mapsOf(values: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.oneof({ arbitrary: fc.dictionary(fc.constantFrom("messages", "step", "__start__", "a"), values, { maxKeys: 3 }).chain((shape) => objectsOf(Object.fromEntries(Object.entries(shape).map(([key, value]) => [key, fc.constant(value)])))), weight: 8 }, { arbitrary: anyValue, weight: 1 });
}

const versions = fc.oneof(fc.integer({ min: 0, max: 100 }), fc.constantFrom("1.0", "v2"));
const ids = fc.constantFrom("1ef4f797-8335-6428-8001-8a1503f9b875", "a", "");

const checkpoints = objectsOf({
  v: fc.constantFrom(1, 4),
  id: ids,
  ts: fc.constantFrom("2026-01-01T00:00:00.000Z"),
  channel_values: mapsOf(anyValue),
  channel_versions: mapsOf(versions),
  versions_seen: mapsOf(mapsOf(versions)),
});

const configs = fc.oneof(
  { arbitrary: objectsOf({ configurable: fc.oneof(objectsOf({ thread_id: fc.constantFrom("t", ""), checkpoint_ns: fc.constantFrom("", "ns"), checkpoint_id: ids, thread_ts: ids }), fc.constant(null)) }), weight: 9 },
  { arbitrary: anyValue, weight: 1 },
);

/** Asserts: whenever `accept` answers, the schema accepts the same input; `same`, when given, compares the answers. */
function agrees(schema: z.ZodType, accept: (value: unknown) => unknown, values: fc.Arbitrary<unknown>, same?: (fast: unknown, parsed: unknown) => void): number {
  let answered = 0;
  fc.assert(
    fc.property(values, (value) => {
      const accepted = accept(value);
      if (accepted === undefined) return;
      answered++;
      const parsed = schema.safeParse(value);
      expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
      same?.(accepted, parsed.data);
    }),
    { numRuns: 1500 },
  );
  return answered;
}

describe("the fast paths of the saver's input checks", () => {
  it("acceptCheckpoint answers only for checkpoints the schema accepts", () => {
    expect(agrees(CheckpointInputSchema, acceptCheckpoint, checkpoints)).toBeGreaterThan(10);
  });

  it("acceptNewVersions answers only for version maps the schema accepts", () => {
    expect(agrees(NewVersionsInputSchema, acceptNewVersions, mapsOf(versions))).toBeGreaterThan(10);
  });

  it("acceptConfig answers only for configs the schema accepts, with the fields the schema gives", () => {
    const fields = (config: unknown) => {
      const configurable = (config as { configurable?: Record<string, unknown> | null }).configurable;
      return configurable === undefined || configurable === null
        ? configurable
        : [configurable.thread_id, configurable.checkpoint_ns, configurable.checkpoint_id, configurable.thread_ts];
    };
    const answered = agrees(RunnableConfigInputSchema, acceptConfig, configs, (fast, parsed) => expect(fields(fast)).toEqual(fields(parsed)));
    expect(answered).toBeGreaterThan(10);
  });
});
