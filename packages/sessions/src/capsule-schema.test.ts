import { TRUNCATION_MARKER, canonicalJson, utf8Bytes } from "@keel/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { boundCapsule, truncateList } from "./capsule-bounds.js";
import { CAPSULE_LIMITS, CapsuleSchema, type Capsule } from "./capsule-schema.js";
import { emptyCapsule } from "./capsule-update.js";

const request = { backend: { id: "codex", resumable: true }, model: null, branch: "main", objectiveRevision: 1 };
const base = (): Capsule => emptyCapsule("m1", "engineer", request, 1);

describe("CapsuleSchema", () => {
  it("accepts a valid capsule", () => {
    expect(CapsuleSchema.safeParse(base()).success).toBe(true);
  });

  it("rejects unknown keys: a capsule can never hold a transcript or another role's context", () => {
    expect(CapsuleSchema.safeParse({ ...base(), transcript: [{ role: "user", content: "hi" }] }).success).toBe(false);
    expect(CapsuleSchema.safeParse({ ...base(), roles: { planner: { decisiveOutput: "plan" } } }).success).toBe(false);
    expect(CapsuleSchema.safeParse({ ...base(), thread: { ...base().thread, messages: [] } }).success).toBe(false);
    expect(CapsuleSchema.safeParse({ ...base(), counters: { ...base().counters, extra: 1 } }).success).toBe(false);
  });

  it("rejects a wrong schema version, unsafe names and content over the bounds", () => {
    expect(CapsuleSchema.safeParse({ ...base(), schemaVersion: 2 }).success).toBe(false);
    expect(CapsuleSchema.safeParse({ ...base(), role: "../planner" }).success).toBe(false);
    expect(CapsuleSchema.safeParse({ ...base(), decisiveOutput: "x".repeat(CAPSULE_LIMITS.maxTextBytes + 1) }).success).toBe(false);
    expect(CapsuleSchema.safeParse({ ...base(), referencedPaths: Array.from({ length: 100 }, (_, index) => `p${index}`) }).success).toBe(false);
  });

  it("rejects a capsule over 64 KiB in all even when each field is within its bound", () => {
    const big = { ...base(), repositoryMap: "\u0001".repeat(CAPSULE_LIMITS.maxTextBytes) };
    expect(utf8Bytes(canonicalJson(big))).toBeGreaterThan(CAPSULE_LIMITS.maxBytes);
    expect(CapsuleSchema.safeParse(big).success).toBe(false);
  });
});

describe("truncation", () => {
  it("keeps the newest list entries behind a marker that counts all dropped entries", () => {
    const once = truncateList(["a", "b", "c", "d"], 2, 100);
    expect(once).toEqual([`${TRUNCATION_MARKER} 2 earlier entries dropped]`, "c", "d"]);
    const twice = truncateList([...once, "e"], 2, 100);
    expect(twice).toEqual([`${TRUNCATION_MARKER} 3 earlier entries dropped]`, "d", "e"]);
  });

  it("leaves a capsule within its bounds unchanged", () => {
    const capsule = { ...base(), decisiveOutput: "verdict: approve", referencedPaths: ["src/a.ts"] };
    expect(boundCapsule(capsule)).toEqual({ capsule, truncated: [] });
  });

  it("brings any capsule within the bounds, with a marker, never throwing (property)", () => {
    const content = fc.oneof(fc.string({ maxLength: 40_000 }), fc.string({ unit: "grapheme", maxLength: 5_000 }), fc.constant("\u0001".repeat(30_000)));
    fc.assert(
      fc.property(
        fc.record({
          repositoryMap: fc.option(content, { nil: null }),
          decisiveOutput: fc.option(content, { nil: null }),
          referencedPaths: fc.array(fc.string({ maxLength: 900 }), { maxLength: 150 }),
          inspectedPaths: fc.array(fc.string({ maxLength: 900 }), { maxLength: 150 }),
          openCheckpointItems: fc.array(fc.string({ maxLength: 2_000 }), { maxLength: 60 }),
          message: fc.string({ maxLength: 3_000 }),
        }),
        (fields) => {
          const { message, ...rest } = fields;
          const candidate: Capsule = { ...base(), ...rest, lastFailure: { code: "backend_failed", message, at: 1 } };
          const { capsule, truncated } = boundCapsule(candidate);
          expect(CapsuleSchema.safeParse(capsule).success).toBe(true);
          expect(utf8Bytes(canonicalJson(capsule))).toBeLessThanOrEqual(CAPSULE_LIMITS.maxBytes);
          if (truncated.length === 0) expect(capsule).toEqual(candidate);
          for (const field of truncated) {
            const value = field === "lastFailure" ? capsule.lastFailure?.message : capsule[field];
            // A truncated field carries the marker, unless it had to go entirely.
            if (value !== null && value !== undefined && (typeof value === "string" ? value.length > 0 : value.length > 0)) {
              expect(JSON.stringify(value)).toContain(TRUNCATION_MARKER.slice(1));
            }
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
