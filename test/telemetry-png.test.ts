import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { decodePng, encodePng, type DecodedPng } from "./support/telemetry-png.js";

const imageArbitrary: fc.Arbitrary<DecodedPng> = fc
  .record({ width: fc.integer({ min: 1, max: 9 }), height: fc.integer({ min: 1, max: 9 }), channels: fc.constantFrom(3 as const, 4 as const) })
  .chain(({ width, height, channels }) =>
    fc
      .uint8Array({ minLength: width * height * channels, maxLength: width * height * channels })
      .map((pixels) => ({ width, height, channels, pixels })),
  );

describe("the test PNG decoder", () => {
  it("decodes what it encodes under every row filter (property)", () => {
    fc.assert(
      fc.property(imageArbitrary, fc.array(fc.constantFrom(0 as const, 1 as const, 2 as const, 3 as const, 4 as const), { minLength: 9, maxLength: 9 }), (image, filters) => {
        const decoded = decodePng(encodePng(image, (row) => filters[row] ?? 0));
        expect(decoded).toEqual(image);
      }),
      { numRuns: 300 },
    );
  });

  it("refuses damaged or unsupported files", () => {
    const png = encodePng({ width: 2, height: 2, channels: 3, pixels: new Uint8Array(12).fill(7) }, () => 4);
    expect(() => decodePng(png.subarray(1))).toThrow(/signature/);
    const damaged = Buffer.from(png);
    damaged[20] = (damaged[20] ?? 0) ^ 0xff;
    expect(() => decodePng(damaged)).toThrow(/CRC/);
    expect(() => decodePng(png.subarray(0, png.length - 12))).toThrow(/IEND/);
  });
});
