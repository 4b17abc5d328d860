import { canonicalJson, type JsonValue } from "@keel/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeDocEnvelope, encodeDocEnvelope } from "./doc-envelope.js";

const keyArbitrary = fc.array(fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,8}$/), { minLength: 1, maxLength: 4 });
const envelopeArbitrary = fc.record({
  key: keyArbitrary,
  version: fc.integer({ min: 1, max: 1_000_000 }),
  updatedAt: fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
  deleted: fc.boolean(),
  value: fc.jsonValue({ maxDepth: 3 }),
});

describe("document envelope", () => {
  it("round-trips key, version, time, tombstone flag and value, the value's key order kept", () => {
    fc.assert(
      fc.property(envelopeArbitrary, (input) => {
        const valueText = JSON.stringify(input.value);
        const text = encodeDocEnvelope({ ...input, value: input.value as JsonValue, valueText });
        const decoded = decodeDocEnvelope(text, input.key);
        expect(decoded.isOk()).toBe(true);
        const envelope = decoded._unsafeUnwrap();
        expect(envelope).toMatchObject({ key: input.key, version: input.version, updatedAt: input.updatedAt, deleted: input.deleted });
        expect(JSON.stringify(envelope.value)).toBe(valueText);
        expect(envelope.valueText).toBe(valueText);
        expect(envelope.bytes).toBe(Buffer.byteLength(valueText));
      }),
    );
  });

  it("verifies a file sealed over the value's canonical JSON (as written before values kept their key order)", () => {
    const value = { b: 1, a: { d: [2, { f: "x", e: null }], c: true } };
    const text = encodeDocEnvelope({ key: ["d"], version: 3, updatedAt: "2026-01-01T00:00:00.000Z", deleted: false, value, valueText: canonicalJson(value) });
    const decoded = decodeDocEnvelope(text, ["d"])._unsafeUnwrap();
    expect(JSON.stringify(decoded.value)).toBe(JSON.stringify(value));
    // A value changed under either seal fails.
    expect(decodeDocEnvelope(text.replace('"x"', '"y"'), ["d"])._unsafeUnwrapErr()).toBe("fails its checksum");
  });

  it("never decodes a changed byte into a different document: it fails, or reads the same", () => {
    fc.assert(
      fc.property(envelopeArbitrary, fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1, max: 127 }), (input, where, delta) => {
        const valueText = canonicalJson(input.value);
        const bytes = Buffer.from(encodeDocEnvelope({ ...input, value: input.value as JsonValue, valueText }));
        const position = Math.min(bytes.length - 1, Math.floor(where * bytes.length));
        bytes[position] = (bytes[position]! + delta) % 128;
        const decoded = decodeDocEnvelope(bytes.toString("utf8"), input.key);
        if (decoded.isErr()) return;
        const envelope = decoded.value;
        expect([envelope.version, envelope.updatedAt, envelope.deleted, canonicalJson(envelope.value)]).toEqual([
          input.version,
          input.updatedAt,
          input.deleted,
          valueText,
        ]);
      }),
    );
  });

  it("fails on truncation, another key, an unknown format and a bad checksum", () => {
    const text = encodeDocEnvelope({ key: ["a"], version: 1, updatedAt: "t", deleted: false, value: { n: 1 }, valueText: '{"n":1}' });
    expect(decodeDocEnvelope(text.slice(0, 40), ["a"]).isErr()).toBe(true);
    expect(decodeDocEnvelope(text, ["b"]).isErr()).toBe(true);
    expect(decodeDocEnvelope(text.replace("keel.doc.v1", "keel.doc.v2"), ["a"]).isErr()).toBe(true);
    expect(decodeDocEnvelope(text.replace('"version": 1', '"version": 2'), ["a"]).isErr()).toBe(true);
    expect(decodeDocEnvelope("", ["a"]).isErr()).toBe(true);
    expect(decodeDocEnvelope("[]", ["a"]).isErr()).toBe(true);
  });
});
