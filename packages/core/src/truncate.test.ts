import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { expectThrowsKeel } from "../../../test/support/hostile.js";
import { TRUNCATION_MARKER, truncateUtf8, utf8Bytes } from "./index.js";

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe("truncateUtf8", () => {
  it("cuts text on a code point boundary with an explicit marker", () => {
    const cut = truncateUtf8("é".repeat(1000), 100);
    expect(utf8Bytes(cut)).toBeLessThanOrEqual(100);
    expect(cut).toContain(TRUNCATION_MARKER);
    expect(cut.startsWith("éé")).toBe(true);
    expect(cut).not.toContain("\ufffd");
    expect(truncateUtf8("short", 100)).toBe("short");
  });

  it("says how many bytes it dropped", () => {
    expect(truncateUtf8("The quick brown fox jumps over the lazy dog, twice over", 48)).toBe("The quic…[truncated by keel: 47 bytes dropped]");
  });

  it("never splits a surrogate pair, and gives '' when even the marker does not fit", () => {
    const cut = truncateUtf8("😀".repeat(40), 60);
    expect(cut.startsWith("😀")).toBe(true);
    expect(cut).not.toMatch(LONE_SURROGATE);
    expect(truncateUtf8("x".repeat(100), 10)).toBe("");
  });

  it("keeps any string within its bound and leaves a marked prefix of it (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 200 }), fc.nat(400), (text, maxBytes) => {
        const cut = truncateUtf8(text, maxBytes);
        expect(utf8Bytes(cut)).toBeLessThanOrEqual(Math.max(maxBytes, 0));
        if (utf8Bytes(text) <= maxBytes) expect(cut).toBe(text);
        else if (cut !== "") expect(text.startsWith(cut.slice(0, cut.indexOf(TRUNCATION_MARKER)))).toBe(true);
        expect(cut).not.toMatch(LONE_SURROGATE);
      }),
    );
  });

  it("throws invalid_input for a text that is not a string or a bad bound", () => {
    expectThrowsKeel(() => truncateUtf8(42 as never, 10));
    for (const bound of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, "10"]) expectThrowsKeel(() => truncateUtf8("text", bound as never));
  });
});
