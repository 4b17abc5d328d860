import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  RoleTurnRequestSchema,
  TurnOutcomeSchema,
  TurnRequestSchema,
  acceptRoleTurnRequest,
  acceptTurnRequest,
  isPlainTurnOutcome,
} from "./turn-types.js";

/**
 * The fast paths of `runTurn`'s validations (`validateFast` in @keel/core) may answer only for
 * input that the zod schema accepts, and must answer the schema's own output. Inputs are drawn
 * near the valid shapes: right and wrong field values, missing and extra keys, `undefined` held
 * by a key, objects without a prototype and class instances.
 */

const wrong = fc.oneof(
  fc.constantFrom(0, -1, 0.5, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY, "", "a/b", "..", "x".repeat(513), "é".repeat(300), true, null, undefined),
  fc.constant({}),
  fc.constant([1]),
);

/**
 * Objects over `shape`: mostly with every key, each value mostly from the shape and now and then
 * wrong; sometimes with keys missing, sometimes with one of `extra` added; as literals, and now
 * and then prototype-less or a class instance.
 */
function objectsOf(shape: Record<string, fc.Arbitrary<unknown>>, extra: readonly string[] = ["extra"]): fc.Arbitrary<unknown> {
  const fields = Object.fromEntries(Object.entries(shape).map(([key, valid]) => [key, fc.oneof({ arbitrary: valid, weight: 30 }, { arbitrary: wrong, weight: 1 })]));
  const records = fc.oneof({ arbitrary: fc.record(fields), weight: 4 }, { arbitrary: fc.record(fields, { requiredKeys: [] }), weight: 1 });
  const added = fc.oneof({ arbitrary: fc.constant(null), weight: 6 }, { arbitrary: fc.tuple(fc.constantFrom(...extra), fc.oneof(wrong, fc.constant("m1"))), weight: 1 });
  class Shaped {}
  const kinds = fc.constantFrom("literal", "literal", "literal", "literal", "literal", "null-prototype", "instance");
  return fc.tuple(records, added, kinds).map(([record, extraField, kind]) => {
    const value: Record<string, unknown> = kind === "null-prototype" ? Object.create(null) : kind === "instance" ? new Shaped() : {};
    Object.assign(value, record);
    if (extraField) value[extraField[0]] = extraField[1];
    return value;
  });
}

const names = fc.constantFrom("m1", "engineer", "codex", "a.b-c_d");
const texts = fc.oneof(fc.constantFrom("main", "gpt-5", "x".repeat(512), "é".repeat(256), "é".repeat(257)), fc.string({ maxLength: 6 }));
const revisions = fc.oneof(fc.integer({ min: 0, max: 50 }), fc.constantFrom("rev-1", "", "x".repeat(128), "x".repeat(129), "é".repeat(64), "é".repeat(65), Number.MAX_SAFE_INTEGER));
const requestShape = {
  backend: objectsOf({ id: names, resumable: fc.boolean() }),
  model: fc.oneof(texts, fc.constant(null)),
  branch: fc.oneof(texts, fc.constant(null)),
  objectiveRevision: revisions,
};
const counts = fc.oneof(fc.integer({ min: 0, max: 100_000 }), fc.constant(null));
const usages = fc.oneof(
  fc.constant(null),
  objectsOf({ inputUncached: counts, cacheRead: counts, cacheWrite: counts, output: counts, reasoning: counts, costUsd: fc.oneof(fc.double({ min: 0, max: 10 }), fc.constantFrom(null, Number.POSITIVE_INFINITY, -0.5)) }),
);
const lists = fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 });
const outcomeShape = {
  text: fc.string({ maxLength: 8 }),
  threadId: fc.oneof(texts, fc.constant(null)),
  usage: usages,
  promptBytes: fc.integer({ min: 0, max: 10_000 }),
  decisiveOutput: fc.string({ maxLength: 8 }),
  paths: objectsOf({ referenced: lists, inspected: lists }),
  openCheckpointItems: lists,
  repositoryMap: fc.string({ maxLength: 8 }),
};

/** Runs the property: whenever `accept` answers, the schema accepts the input (with an equal output when `sameOutput`). */
function agrees(schema: { safeParse(value: unknown): { success: boolean; data?: unknown } }, accept: (value: unknown) => unknown, values: fc.Arbitrary<unknown>, sameOutput: boolean) {
  let answered = 0;
  fc.assert(
    fc.property(values, (value) => {
      const accepted = accept(value);
      if (accepted === undefined || accepted === false) return;
      answered++;
      const parsed = schema.safeParse(value);
      expect(parsed.success).toBe(true);
      if (sameOutput) expect(accepted).toStrictEqual(parsed.data);
    }),
    { numRuns: 4000 },
  );
  return answered;
}

describe("the fast paths of runTurn's validations agree with their zod schemas", () => {
  it("turn requests", () => {
    const values = fc.oneof({ arbitrary: objectsOf({ missionId: names, role: names, ...requestShape }), weight: 9 }, wrong);
    expect(agrees(TurnRequestSchema, acceptTurnRequest, values, true)).toBeGreaterThan(100);
  });

  it("a role handle's requests (mission and role refused)", () => {
    const values = fc.oneof({ arbitrary: objectsOf(requestShape, ["extra", "role", "missionId"]), weight: 9 }, wrong);
    expect(agrees(RoleTurnRequestSchema, acceptRoleTurnRequest, values, true)).toBeGreaterThan(100);
    expect(acceptRoleTurnRequest({ backend: { id: "codex", resumable: true }, objectiveRevision: 1, role: "engineer" })).toBeUndefined();
  });

  it("turn outcomes from execute (only acceptance: the host's own object is what runTurn returns)", () => {
    const values = fc.oneof({ arbitrary: objectsOf(outcomeShape), weight: 9 }, wrong);
    expect(agrees(TurnOutcomeSchema, isPlainTurnOutcome, values, false)).toBeGreaterThan(100);
  });

  it("answer the common well-formed input themselves, the request as a copy", () => {
    const request = { missionId: "m", role: "engineer", backend: { id: "codex", resumable: true }, model: null, branch: "main", objectiveRevision: 1 };
    const accepted = acceptTurnRequest(request);
    expect(accepted).toStrictEqual(request);
    expect(accepted).not.toBe(request);
    expect(accepted?.backend).not.toBe(request.backend);
    const usage = { inputUncached: 10, cacheRead: 0, cacheWrite: null, output: 5, reasoning: null, costUsd: 0.01 };
    expect(isPlainTurnOutcome({ text: "ok", threadId: "t-1", usage, promptBytes: 120, paths: { inspected: ["a.ts"] }, openCheckpointItems: [] })).toBe(true);
  });
});
