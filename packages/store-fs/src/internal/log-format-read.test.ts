import { crc32 } from "node:zlib";
import { canonicalJson } from "@keel/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createLogScanner, eachLine, encodeHeaderLine, encodeRecordLine, parseLine, parseLineText, scanLogBytes, type KeepRecords } from "./log-format.js";

/**
 * The one-pass read of a log: lines decoded together (`eachLine`), checked and parsed from that
 * text (`parseLineText`), and the records a read asks for kept by the index scan (`keep`). Each
 * must answer exactly what the line-by-line path answers.
 */

const AT = "2026-01-01T00:00:00.000Z";

/** The CRC check of a line as it was made before the one-pass read (on the line's own bytes): its problem, or undefined when it passes. */
function formerCheck(line: Buffer): string | undefined {
  if (line.length <= 19) return "line too short";
  const split = line.length - 18;
  const suffix = /^,"crc":"([0-9a-f]{8})"\}$/.exec(line.subarray(split).toString("latin1"));
  if (!suffix) return "no crc at the end of the line";
  if (crc32(line.subarray(0, split)) !== Number.parseInt(suffix[1]!, 16)) return "crc mismatch";
  return undefined;
}
const idArbitrary = fc.string({ minLength: 1, maxLength: 12, unit: "binary" }).filter((id) => !/[\u0000-\u001f\u007f]/.test(id));
const batchesArbitrary = fc.array(fc.array(fc.record({ id: idArbitrary, value: fc.jsonValue({ maxDepth: 2 }) }), { minLength: 1, maxLength: 4 }), { minLength: 0, maxLength: 6 });

/** A log file's bytes: a header, then the batches (the last line of each with its end mark). */
function build(batches: { id: string; value: unknown }[][]): Buffer {
  let text = encodeHeaderLine({ file: "f1", baseSeq: 0, deleted: false, at: AT }, batches.length === 0);
  let seq = 0;
  for (const batch of batches) {
    batch.forEach((record, index) => {
      seq += 1;
      text += encodeRecordLine(seq, record.id, AT, canonicalJson(record.value), index === batch.length - 1);
    });
  }
  return Buffer.from(text);
}

/** Bytes that look like log lines or like nothing: random bytes, ASCII and any Unicode, with newlines. */
const bytesArbitrary = fc.oneof(
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
  fc.array(fc.oneof(fc.string({ unit: "grapheme" }), fc.constant("\n"), fc.uint8Array({ maxLength: 4 }).map((bytes) => Buffer.from(bytes).toString("latin1")))).map((parts) => Buffer.from(parts.join(""))),
  fc.array(fc.oneof(fc.uint8Array({ maxLength: 6 }), fc.constant(new Uint8Array([0x0a])), fc.constant(new Uint8Array([0xe2, 0x82])), fc.constant(new Uint8Array([0xf0, 0x9f, 0x98])))).map((parts) => Buffer.concat(parts)),
);

describe("reading log lines in one pass", () => {
  it("decodes every complete line as decoding it alone would, valid UTF-8 or not", () => {
    fc.assert(
      fc.property(bytesArbitrary, (bytes) => {
        const seen: [number, number, string][] = [];
        const consumed = eachLine(bytes, (start, end, text) => void seen.push([start, end, text]));
        expect(consumed).toBe(bytes.lastIndexOf(0x0a) + 1);
        const expected: [number, number, string][] = [];
        for (let start = 0; start < consumed; ) {
          const end = bytes.indexOf(0x0a, start);
          expected.push([start, end, bytes.subarray(start, end).toString("utf8")]);
          start = end + 1;
        }
        expect(seen).toEqual(expected);
      }),
    );
  });

  it("decodes long runs of lines a piece at a time exactly as line by line, lines longer than a piece included", () => {
    const lineArbitrary = fc.record({ length: fc.oneof(fc.nat(300), fc.nat(120_000)), unit: fc.constantFrom("a", "é", "\u00ff", "😀", "\u{10ffff}"), cut: fc.boolean() });
    fc.assert(
      fc.property(fc.array(lineArbitrary, { maxLength: 14 }), fc.boolean(), (lines, trailing) => {
        const parts = lines.map(({ length, unit, cut }) => {
          const bytes = Buffer.from(unit.repeat(length));
          // Sometimes invalid UTF-8: a multi-byte character cut before its newline.
          return cut && unit.length > 1 ? bytes.subarray(0, bytes.length - 1) : bytes;
        });
        const bytes = Buffer.concat([...parts.flatMap((part) => [part, Buffer.from("\n")]), trailing ? Buffer.from("tail") : Buffer.alloc(0)]);
        const seen: string[] = [];
        let at = 0;
        eachLine(bytes, (start, end, text) => {
          expect(start).toBe(at);
          at = end + 1;
          seen.push(text);
          return false;
        });
        expect(seen).toEqual(parts.map((part) => part.toString("utf8")));
      }),
      { numRuns: 40 },
    );
  });

  it("checks a line from its text as the former check of its bytes did, damaged or not", () => {
    const damageArbitrary = fc.array(fc.record({ from: fc.nat(), byte: fc.oneof(fc.integer({ min: 0, max: 255 }), fc.constantFrom(0x22, 0x7d, 0x30, 0x66, 0xe2, 0x82)) }), { maxLength: 3 });
    fc.assert(
      fc.property(idArbitrary, fc.jsonValue(), damageArbitrary, fc.nat(40), (id, value, damages, cut) => {
        const encoded = Buffer.from(encodeRecordLine(3, id, AT, canonicalJson(value), true));
        let line = Buffer.from(encoded.subarray(0, encoded.length - 1));
        // Damage near the end (the CRC suffix) as often as anywhere else, or cut the line short.
        for (const { from, byte } of damages) {
          const position = from % 2 === 0 ? line.length - 1 - (from % 24) : from % line.length;
          if (position >= 0) line[position] = byte === 0x0a ? 0x0b : byte;
        }
        if (cut > 30) line = line.subarray(0, Math.max(0, line.length - (cut - 30)));
        // The text as eachLine hands it over: decoded with the lines around it.
        const around = Buffer.concat([Buffer.from("x\n"), line, Buffer.from("\ny\n")]);
        let text = "";
        eachLine(around, (start, end, lineText) => void (start === 2 ? (text = lineText) : undefined));
        const checked = parseLineText(around, 2, 2 + line.length, text);
        const former = formerCheck(line);
        if (former === undefined) expect(["line too short", "no crc at the end of the line", "crc mismatch"]).not.toContain(checked.kind === "bad" ? checked.problem : "");
        else expect(checked).toEqual({ kind: "bad", problem: former });
        // And the bytes-only entry point answers the same.
        const { valueBytes: _valueBytes, ...byBytes } = parseLine(line) as ReturnType<typeof parseLine> & { valueBytes?: Uint8Array };
        expect(byBytes).toEqual(checked);
      }),
      { numRuns: 500 },
    );
  });

  it("keeps, fed in chunks of any size, the parsed records a read asks for, and finds what a plain scan finds", () => {
    fc.assert(
      fc.property(
        batchesArbitrary,
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.record({ afterSeq: fc.nat(8), limit: fc.oneof(fc.integer({ min: 1, max: 12 }), fc.constant(Number.POSITIVE_INFINITY)) }),
        fc.option(fc.record({ where: fc.nat(), delta: fc.integer({ min: 1, max: 255 }) }), { nil: undefined, freq: 3 }),
        fc.option(fc.nat(), { nil: undefined, freq: 2 }),
        (batches, cuts, keep: KeepRecords, damage, torn) => {
          let bytes = build(batches);
          // Maybe a write torn anywhere, maybe a changed byte: the kept records follow the scan's verdict.
          if (torn !== undefined) bytes = bytes.subarray(0, torn % (bytes.length + 1));
          if (damage && bytes.length > 0) {
            bytes = Buffer.from(bytes);
            const position = damage.where % bytes.length;
            bytes[position] = (bytes[position]! + damage.delta) % 256;
          }
          const plain = scanLogBytes(bytes);
          const scanner = createLogScanner({ offset: 0, header: undefined, lastSeq: 0 }, keep);
          // Chunks as the index reads them: a line a chunk's end cut is read again with the next (`rewind`).
          const ends = [...new Set([...cuts.map((cut) => cut % (bytes.length + 1)), bytes.length])].sort((left, right) => left - right);
          let position = 0;
          let problem;
          while (position < bytes.length && !problem) {
            const next = ends.find((end) => end > position)!;
            problem = scanner.feed(bytes.subarray(position, next));
            position = next;
            if (position < bytes.length) position -= scanner.rewind();
          }
          const chunked = problem ?? scanner.finish();
          if ("problem" in plain) {
            expect(chunked).toEqual(plain);
            return;
          }
          if ("problem" in chunked) throw new Error(`the chunked scan found ${chunked.problem} where the plain one found none`);
          const { kept: keptRecords, ...rest } = chunked;
          expect({ ...rest, kept: [] }).toEqual(plain);
          const expected = plain.records
            .filter((record) => record.seq > keep.afterSeq && record.seq <= keep.afterSeq + keep.limit)
            .map((record) => {
              const parsed = parseLine(bytes.subarray(record.offset, bytes.indexOf(0x0a, record.offset)));
              if (parsed.kind !== "record") throw new Error("a committed record does not parse");
              return parsed.record;
            });
          expect(keptRecords).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});
