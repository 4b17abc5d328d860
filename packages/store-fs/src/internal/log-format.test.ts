import { canonicalJson } from "@keel/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createRecordEncoder, encodeHeaderLine, encodeRecordLine, parseLine, scanLogBytes, type LogScan, type ScanProblem } from "./log-format.js";

const idArbitrary = fc.string({ minLength: 1, maxLength: 12 }).filter((id) => !/[\u0000-\u001f\u007f]/.test(id));
const batchesArbitrary = fc.array(fc.array(fc.record({ id: idArbitrary, value: fc.jsonValue({ maxDepth: 2 }) }), { minLength: 1, maxLength: 4 }), {
  minLength: 0,
  maxLength: 5,
});

interface Built {
  bytes: Buffer;
  /** Byte offset just after each batch (the header counts as batch 0 when it stands alone). */
  batchEnds: number[];
  /** Records per batch. */
  batches: { seq: number; id: string; text: string }[][];
}

function build(batches: { id: string; value: unknown }[][], baseSeq = 0): Built {
  let text = encodeHeaderLine({ file: "f1", baseSeq, deleted: false, at: "2026-01-01T00:00:00.000Z" }, batches.length === 0);
  const batchEnds: number[] = batches.length === 0 ? [Buffer.byteLength(text)] : [];
  const out: Built["batches"] = [];
  let seq = baseSeq;
  for (const batch of batches) {
    const records = batch.map((record, index) => {
      seq += 1;
      const valueText = canonicalJson(record.value);
      text += encodeRecordLine(seq, record.id, "2026-01-01T00:00:00.000Z", valueText, index === batch.length - 1);
      return { seq, id: record.id, text: valueText };
    });
    out.push(records);
    batchEnds.push(Buffer.byteLength(text));
  }
  return { bytes: Buffer.from(text), batchEnds, batches: out };
}

const isProblem = (scan: LogScan | ScanProblem): scan is ScanProblem => "problem" in scan;

describe("log line format", () => {
  it("round-trips every record: seq, id and offset, in order, with no tail", () => {
    fc.assert(
      fc.property(batchesArbitrary, fc.nat(1000), (batches, baseSeq) => {
        const built = build(batches, baseSeq);
        const scan = scanLogBytes(built.bytes);
        if (isProblem(scan)) throw new Error(scan.problem);
        const expected = built.batches.flat();
        expect(scan.records.map((record) => [record.seq, record.id])).toEqual(expected.map((record) => [record.seq, record.id]));
        for (const record of scan.records) {
          const end = built.bytes.indexOf(0x0a, record.offset);
          const parsed = parseLine(built.bytes.subarray(record.offset, end));
          expect(parsed.kind === "record" && parsed.record.seq).toBe(record.seq);
        }
        expect(scan.lastSeq).toBe(baseSeq + expected.length);
        expect(scan.committedEnd).toBe(built.bytes.length);
        expect(scan.tail).toBeUndefined();
      }),
    );
  });

  it("reads any prefix of a log (a write torn at any byte) as the complete batches plus a tail, never as damage", () => {
    fc.assert(
      fc.property(batchesArbitrary.filter((batches) => batches.length > 0), fc.double({ min: 0, max: 1, noNaN: true }), (batches, where) => {
        const built = build(batches);
        const cut = Math.floor(where * built.bytes.length);
        const scan = scanLogBytes(built.bytes.subarray(0, cut));
        if (isProblem(scan)) throw new Error(`damage reported in a torn log at ${scan.offset}: ${scan.problem}`);
        const complete = built.batchEnds.filter((end) => end <= cut).length;
        expect(scan.records.map((record) => record.seq)).toEqual(built.batches.slice(0, complete).flat().map((record) => record.seq));
        const committedEnd = complete === 0 ? 0 : built.batchEnds[complete - 1]!;
        expect(scan.committedEnd).toBe(committedEnd);
        expect(scan.tail).toEqual(cut > committedEnd ? { offset: committedEnd, bytes: cut - committedEnd } : undefined);
      }),
    );
  });

  it("reports a changed byte before the last line as damage at or before it, never a skipped line", () => {
    fc.assert(
      fc.property(
        batchesArbitrary.filter((batches) => batches.flat().length >= 2),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 1, max: 255 }),
        (batches, where, delta) => {
          const built = build(batches);
          const lastLineStart = built.bytes.lastIndexOf(0x0a, built.bytes.length - 2) + 1;
          const position = Math.floor(where * (lastLineStart - 1));
          const damaged = Buffer.from(built.bytes);
          damaged[position] = (damaged[position]! + delta) % 256;
          const scan = scanLogBytes(damaged);
          expect(isProblem(scan)).toBe(true);
          expect((scan as ScanProblem).offset).toBeLessThanOrEqual(position);
        },
      ),
    );
  });

  it("refuses lines out of place: a gap in seq, a second header, a record before the header or after a deletion", () => {
    const at = "2026-01-01T00:00:00.000Z";
    const header = encodeHeaderLine({ file: "f", baseSeq: 0, deleted: false, at }, false);
    const cases: [string, number][] = [
      [header + encodeRecordLine(2, "a", at, "1", true), header.length],
      [header + encodeRecordLine(1, "a", at, "1", true) + header, header.length * 1 + encodeRecordLine(1, "a", at, "1", true).length],
      [encodeRecordLine(1, "a", at, "1", true), 0],
      [encodeHeaderLine({ file: "f", baseSeq: 3, deleted: true, at }, true) + encodeRecordLine(4, "a", at, "1", true), encodeHeaderLine({ file: "f", baseSeq: 3, deleted: true, at }, true).length],
      [header + '{"seq":1}\n', header.length],
      [header + "\n", header.length],
    ];
    for (const [text, offset] of cases) {
      const scan = scanLogBytes(Buffer.from(text));
      expect(isProblem(scan), text).toBe(true);
      expect((scan as ScanProblem).offset).toBe(offset);
    }
  });

  it("encodes a batch's lines with a shared timestamp exactly as one by one", () => {
    fc.assert(
      fc.property(fc.oneof(idArbitrary, fc.constant('x","value":1')), fc.jsonValue(), fc.nat(), fc.boolean(), (id, value, seq, end) => {
        const text = canonicalJson(value);
        const at = "2026-01-01T00:00:00.000Z";
        expect(createRecordEncoder(at)(seq + 1, id, text, end)).toBe(encodeRecordLine(seq + 1, id, at, text, end));
      }),
    );
  });

  it("parses what it encodes, ids with quotes and the value marker included", () => {
    fc.assert(
      fc.property(fc.oneof(idArbitrary, fc.constant('x","value":1')), fc.jsonValue(), (id, value) => {
        const text = canonicalJson(value);
        const line = Buffer.from(encodeRecordLine(7, id, "t", text, true));
        const parsed = parseLine(line.subarray(0, line.length - 1));
        expect(parsed.kind).toBe("record");
        if (parsed.kind !== "record") return;
        expect(parsed.record.id).toBe(id);
        expect(canonicalJson(parsed.record.value)).toBe(text);
        expect(Buffer.from(parsed.valueBytes).toString("utf8")).toBe(text);
      }),
    );
  });
});

/**
 * A log as the writer leaves it with buffered appends: `synced` batches (written with
 * fdatasync) then `unsynced` ones, whose end lines name the durable point at their writing.
 */
function buildMixed(synced: { id: string; value: unknown }[][], unsynced: { id: string; value: unknown }[][], buffered: boolean) {
  const at = "2026-01-01T00:00:00.000Z";
  let text = encodeHeaderLine({ file: "f1", baseSeq: 0, deleted: false, at, ...(buffered ? { buffered } : {}) }, false);
  if (synced.length === 0) text = encodeHeaderLine({ file: "f1", baseSeq: 0, deleted: false, at, ...(buffered ? { buffered } : {}) }, true);
  let seq = 0;
  const records: { seq: number; id: string }[] = [];
  const batchEnds: number[] = [];
  const add = (batch: { id: string; value: unknown }[], durableTo: number | undefined) => {
    batch.forEach((record, index) => {
      seq += 1;
      text += encodeRecordLine(seq, `${seq}-${record.id}`, at, canonicalJson(record.value), index === batch.length - 1, durableTo);
      records.push({ seq, id: `${seq}-${record.id}` });
    });
    batchEnds.push(Buffer.byteLength(text));
  };
  for (const batch of synced) add(batch, undefined);
  const durablePoint = Buffer.byteLength(text);
  const syncedCount = records.length;
  for (const batch of unsynced) add(batch, durablePoint);
  return { bytes: Buffer.from(text), durablePoint, syncedCount, records, batchEnds };
}

/** What a power loss may do to the bytes after the durable point: cut them, zero or garble a run, or flip a byte. */
const powerLossArbitrary = fc.record({
  kind: fc.constantFrom("cut", "zero", "garble", "flip"),
  from: fc.double({ min: 0, max: 1, noNaN: true }),
  length: fc.integer({ min: 1, max: 600 }),
  seed: fc.integer({ min: 1, max: 255 }),
});

function losePower(bytes: Buffer, durablePoint: number, loss: { kind: string; from: number; length: number; seed: number }, floor = durablePoint): Buffer {
  const start = floor + Math.floor(loss.from * (bytes.length - floor));
  if (loss.kind === "cut") return Buffer.from(bytes.subarray(0, start));
  const damaged = Buffer.from(bytes);
  const end = Math.min(damaged.length, start + (loss.kind === "flip" ? 1 : loss.length));
  for (let position = start; position < end; position++) {
    if (loss.kind === "zero") damaged[position] = 0;
    else if (loss.kind === "flip") damaged[position] = (damaged[position]! + loss.seed) % 256;
    else damaged[position] = (position * 31 + loss.seed) % 256;
  }
  return damaged;
}

describe("log line format with unsynced batches (appends with durable: false)", () => {
  const batches = (min: number) => fc.array(fc.array(fc.record({ id: idArbitrary, value: fc.jsonValue({ maxDepth: 2 }) }), { minLength: 1, maxLength: 3 }), { minLength: min, maxLength: 5 });

  it("marks unsynced end lines with the durable point, and a scan finds that point", () => {
    fc.assert(
      fc.property(batches(0), batches(1), fc.boolean(), (synced, unsynced, buffered) => {
        const built = buildMixed(synced, unsynced, buffered);
        const scan = scanLogBytes(built.bytes);
        if (isProblem(scan)) throw new Error(scan.problem);
        expect(scan.records.map((record) => record.seq)).toEqual(built.records.map((record) => record.seq));
        expect(scan.durableEnd).toBe(built.durablePoint);
        expect(scan.lastUnsynced).toBe(true);
        expect(scan.header?.buffered === true).toBe(buffered);
      }),
    );
  });

  it("reads a power loss anywhere after the durable point of a buffered log as a tail, keeping every synced record", () => {
    fc.assert(
      fc.property(batches(0), batches(1), powerLossArbitrary, (synced, unsynced, loss) => {
        const built = buildMixed(synced, unsynced, true);
        const damaged = losePower(built.bytes, built.durablePoint, loss);
        const scan = scanLogBytes(damaged);
        if (isProblem(scan)) throw new Error(`power loss (${loss.kind}) read as damage at ${scan.offset}: ${scan.problem}`);
        // Every synced record survives; what survives is a prefix of whole batches, records as written.
        expect(scan.records.length).toBeGreaterThanOrEqual(built.syncedCount);
        expect(scan.records.map((record) => [record.seq, record.id])).toEqual(built.records.slice(0, scan.records.length).map((record) => [record.seq, record.id]));
        expect([built.durablePoint, ...built.batchEnds]).toContain(scan.committedEnd);
        expect(scan.committedEnd).toBeGreaterThanOrEqual(built.durablePoint);
        if (scan.committedEnd < damaged.length) expect(scan.tail?.offset).toBe(scan.committedEnd);
        if (scan.tail?.lost) expect(scan.tail.lost.offset).toBeGreaterThanOrEqual(built.durablePoint);
      }),
    );
  });

  it("reads damage in the last unsynced batches of a log created durably as a tail when an unsynced batch precedes it", () => {
    fc.assert(
      fc.property(batches(1), batches(2), powerLossArbitrary, (synced, unsynced, loss) => {
        const built = buildMixed(synced, unsynced, false);
        // The damage starts in the second unsynced batch or later: the first one shows the writer was not syncing.
        const floor = built.batchEnds[synced.length]!;
        const scan = scanLogBytes(losePower(built.bytes, built.durablePoint, loss, floor));
        if (isProblem(scan)) throw new Error(`power loss (${loss.kind}) read as damage at ${scan.offset}: ${scan.problem}`);
        expect(scan.records.length).toBeGreaterThanOrEqual(built.syncedCount + 1);
      }),
    );
  });

  it("reports damage before the durable point as damage, even when unsynced batches follow", () => {
    fc.assert(
      fc.property(batches(1), batches(0), fc.boolean(), fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1, max: 255 }), (synced, unsynced, buffered, where, delta) => {
        const built = buildMixed(synced, unsynced, buffered);
        // Any byte of the synced part but its very last newline (which would only make a tail of it).
        const position = Math.min(built.durablePoint - 2, Math.floor(where * (built.durablePoint - 1)));
        const damaged = Buffer.from(built.bytes);
        damaged[position] = (damaged[position]! + delta) % 256;
        const scan = scanLogBytes(damaged);
        // A line after the damage proves it (an intact synced end line, or an unsynced one naming the
        // durable point), or nothing says the writer was not syncing (a log created durably). Else
        // (damage in the last synced line of a buffered log, nothing after it) it reads as a loss.
        const lastSyncedLine = built.bytes.lastIndexOf(0x0a, built.durablePoint - 2) + 1;
        const provable = unsynced.length > 0 || !buffered || position < lastSyncedLine - 1;
        if (!provable) return;
        if (!isProblem(scan)) throw new Error(`damage at ${position} (before the durable point ${built.durablePoint}) was not reported`);
        expect(scan.offset).toBeLessThanOrEqual(position);
      }),
    );
  });

  it("rejects a durableTo on a line that does not end a batch", () => {
    const at = "2026-01-01T00:00:00.000Z";
    const line = Buffer.from(encodeRecordLine(1, "a", at, "1", false, 10).replace(',"value"', ',"durableTo":10,"value"'));
    expect(parseLine(line.subarray(0, line.length - 1)).kind).toBe("bad");
  });
});
