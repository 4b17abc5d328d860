import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  AcquireSchema,
  DeleteConditionSchema,
  LeaseSchema,
  PutConditionSchema,
  RecordIdSchema,
  acceptAcquireOptions,
  acceptDeleteCondition,
  acceptLease,
  acceptPutCondition,
  acceptRecordId,
  validateAcquire,
  validateLease,
  validatePutCondition,
} from "./validation.js";

/**
 * The fast paths of the hot validations (`validateFast` in @keel/core) may answer only for input
 * that the zod schema accepts, and must answer the schema's own output. Inputs are drawn near
 * the valid shapes: right and wrong field values, missing and extra keys, `undefined` held by a
 * key, objects without a prototype and class instances.
 */

/** Field values around the edges of counts, strings and the other types. */
const anyValue = fc.oneof(
  fc.constantFrom(0, 1, 7, -1, 0.5, Number.MAX_SAFE_INTEGER, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY, -0),
  fc.integer({ min: -5, max: 1_000_000 }),
  fc.constantFrom("", "l", "lease-a", "holder\u0001", "x".repeat(256), "x".repeat(257), "h\u007f"),
  fc.string({ maxLength: 8 }),
  fc.constantFrom(true, false, null, undefined),
  fc.constant({ lease: "l", token: 1 }),
  fc.constant({ lease: "", token: 1 }),
  fc.constant({ lease: "l", token: 1, extra: 1 }),
  fc.constant([]),
);

/**
 * Objects over `shape` (each key's usually valid values): mostly with every key, a value now and
 * then replaced by any value; sometimes with keys missing, sometimes with one of `extra` added;
 * as literals, and now and then prototype-less or a class instance.
 */
function objectsOf(shape: Record<string, fc.Arbitrary<unknown>>, extra: readonly string[] = ["extra"]): fc.Arbitrary<unknown> {
  const fields = Object.fromEntries(Object.entries(shape).map(([key, valid]) => [key, fc.oneof({ arbitrary: valid, weight: 12 }, { arbitrary: anyValue, weight: 1 })]));
  const records = fc.oneof({ arbitrary: fc.record(fields), weight: 3 }, { arbitrary: fc.record(fields, { requiredKeys: [] }), weight: 1 });
  const added = fc.oneof({ arbitrary: fc.constant(undefined), weight: 5 }, { arbitrary: fc.tuple(fc.constantFrom(...extra), anyValue), weight: 1 });
  class Shaped {}
  const kinds = fc.constantFrom("literal", "literal", "literal", "null-prototype", "instance");
  return fc.tuple(records, added, kinds).map(([record, extraField, kind]) => {
    const value: Record<string, unknown> = kind === "null-prototype" ? Object.create(null) : kind === "instance" ? new Shaped() : {};
    Object.assign(value, record);
    if (extraField) value[extraField[0]] = extraField[1];
    return value;
  });
}

const counts = fc.integer({ min: 0, max: 1_000_000 });
const fences = fc.oneof({ arbitrary: objectsOf({ lease: fc.constantFrom("l", "missions.m.r"), token: counts }), weight: 4 }, { arbitrary: anyValue, weight: 1 });
const VARIANTS = { expectedVersion: counts, create: fc.constant(true), unconditional: fc.constant(true) };
/** Conditions: one variant's key (a second one added now and then), with or without a fence. */
const conditions = fc.oneof(
  {
    arbitrary: fc
      .constantFrom(...(Object.keys(VARIANTS) as (keyof typeof VARIANTS)[]))
      .chain((variant) => objectsOf({ [variant]: VARIANTS[variant], fence: fences }, ["extra", ...Object.keys(VARIANTS).filter((key) => key !== variant)])),
    weight: 9,
  },
  { arbitrary: anyValue, weight: 1 },
);

/** Asserts: whenever `accept` answers, the schema accepts the same input with an equal output. */
function agrees<T>(schema: z.ZodType, accept: (value: unknown) => T | undefined, values: fc.Arbitrary<unknown>): number {
  let answered = 0;
  fc.assert(
    fc.property(values, (value) => {
      const accepted = accept(value);
      if (accepted === undefined) return;
      answered++;
      const parsed = schema.safeParse(value);
      expect(parsed.success).toBe(true);
      expect(accepted).toStrictEqual(parsed.data);
    }),
    { numRuns: 3000 },
  );
  return answered;
}

describe("the fast paths of the store's validations agree with their zod schemas", () => {
  it("put conditions", () => {
    const values = conditions;
    expect(agrees(PutConditionSchema, acceptPutCondition, values)).toBeGreaterThan(100);
  });

  it("delete conditions (no `create`)", () => {
    const values = conditions;
    expect(agrees(DeleteConditionSchema, acceptDeleteCondition, values)).toBeGreaterThan(100);
    expect(acceptDeleteCondition({ create: true })).toBeUndefined();
  });

  it("lease holders (record ids)", () => {
    expect(agrees(RecordIdSchema, acceptRecordId, fc.oneof(anyValue, fc.string({ maxLength: 300, unit: "binary" })))).toBeGreaterThan(100);
  });

  it("acquire options", () => {
    expect(agrees(AcquireSchema, acceptAcquireOptions, fc.oneof({ arbitrary: objectsOf({ ttlMs: counts, waitMs: counts }), weight: 9 }, { arbitrary: anyValue, weight: 1 }))).toBeGreaterThan(100);
  });

  it("leases handed back", () => {
    expect(agrees(LeaseSchema, acceptLease, fc.oneof({ arbitrary: objectsOf({ name: fc.constantFrom("l", ""), holder: fc.string({ maxLength: 4 }), token: counts, expiresAt: fc.oneof(counts, fc.double()) }), weight: 9 }, { arbitrary: anyValue, weight: 1 }))).toBeGreaterThan(100);
  });

  it("answer the common well-formed input themselves, each as a copy", () => {
    const fenced = { expectedVersion: 3, fence: { lease: "missions.m.role", token: 9 } };
    const accepted = acceptPutCondition(fenced);
    expect(accepted).toStrictEqual(fenced);
    expect(accepted).not.toBe(fenced);
    expect(accepted?.fence).not.toBe(fenced.fence);
    expect(acceptPutCondition({ create: true })).toStrictEqual({ create: true });
    expect(acceptAcquireOptions({ ttlMs: 30_000, waitMs: 10_000 })).toStrictEqual({ ttlMs: 30_000, waitMs: 10_000 });
    expect(acceptLease({ name: "l", holder: "h", token: 1, expiresAt: 5 })).toStrictEqual({ name: "l", holder: "h", token: 1, expiresAt: 5 });
    expect(acceptRecordId("keel-holder-1")).toBe("keel-holder-1");
  });

  it("leave everything else to the schema, whose errors stay as they were", () => {
    const bad = validatePutCondition({ expectedVersion: 1, create: undefined });
    expect(bad._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(bad._unsafeUnwrapErr().message).toContain("put condition");
    expect(validateAcquire("l", "h", { ttlMs: 0 })._unsafeUnwrapErr().message).toContain("acquire options");
    expect(validateAcquire("l", "h\u0000", { ttlMs: 1 })._unsafeUnwrapErr().message).toContain("lease holder");
    expect(validateLease({ name: "l", holder: "h", token: -1, expiresAt: 0 })._unsafeUnwrapErr().details).toMatchObject({ what: "lease" });
    // The lease's name is still checked as a safe name after its shape passes.
    expect(validateLease({ name: "../x", holder: "h", token: 1, expiresAt: 0 })._unsafeUnwrapErr().message).toContain("lease name");
  });
});
