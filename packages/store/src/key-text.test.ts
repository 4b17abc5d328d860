import { compareKeys, decodeKeyText, encodeCursorText, encodeKeyText, keyCursor, keyTextPrefixRange } from "@keel/store/kit";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const segment = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,6}$/);
const key = fc.array(segment, { minLength: 1, maxLength: 4 });
const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

describe("key text for SQL adapters", () => {
  it("orders encoded keys byte by byte exactly as the port orders keys, and decodes them back", () => {
    fc.assert(
      fc.property(key, key, (a, b) => {
        expect(decodeKeyText(encodeKeyText(a))).toEqual(a);
        expect(byteOrder(encodeKeyText(a), encodeKeyText(b))).toBe(Math.sign(compareKeys(a, b)));
      }),
    );
  });

  it("selects exactly the keys strictly below a prefix", () => {
    fc.assert(
      fc.property(key, key, (prefix, other) => {
        const { from, to } = keyTextPrefixRange(prefix);
        const text = encodeKeyText(other);
        const below = other.length > prefix.length && prefix.every((part, index) => other[index] === part);
        expect(text >= from && text < to).toBe(below);
        const child = encodeKeyText([...prefix, "x"]);
        expect(child >= from && child < to).toBe(true);
      }),
    );
    expect(keyTextPrefixRange([])).toEqual({ from: "", to: "\u007f" });
  });

  it("encodes a listing cursor as the key it names, and none as empty", () => {
    expect(encodeCursorText(keyCursor(["a", "b"]))).toBe(encodeKeyText(["a", "b"]));
    expect(encodeCursorText(undefined)).toBe("");
  });
});
