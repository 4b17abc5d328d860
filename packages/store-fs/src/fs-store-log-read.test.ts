import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { KeelStore, LogRecord } from "@keel/store";
import { errOf, okValue } from "@keel/testkit";
import { describe, expect, it } from "vitest";
import { useCountedStores } from "./__fixtures__/counted-stores.js";

/**
 * A log read parses each line once: a new instance indexes the log and reads its records in one
 * pass over the file; an instance with the log indexed reads only the lines asked for, and the
 * lines another process appended since in the same pass as their indexing.
 */

const { tempDir, open } = useCountedStores("keel-fs-log-read-");

const LOG = ["runs", "big"];
const RECORDS = 4_000;
const record = (index: number) => ({ index, text: "r".repeat(180) });

/** Appends records `from`..`to - 1` (ids `r<n>`) in batches of 100. */
async function fill(store: KeelStore, from: number, to: number): Promise<void> {
  for (let start = from; start < to; start += 100) {
    await okValue(store.logs.append(LOG, Array.from({ length: Math.min(100, to - start) }, (_, offset) => ({ id: `r${start + offset}`, value: record(start + offset) }))));
  }
}

/** A log of 4,000 records of ~250 bytes (about 1 MB), written by a store that is then closed. */
async function bigLog(): Promise<{ dir: string; file: string; size: number }> {
  const dir = tempDir();
  const { store } = open(dir);
  await fill(store, 0, RECORDS);
  await store.close();
  const file = path.join(dir, "runs", "big.jsonl");
  return { dir, file, size: statSync(file).size };
}

/** What `read(LOG, { afterSeq, limit })` must answer when the log holds records 1..`count` (ids r0..). */
function expectedWindow(count: number, afterSeq: number, limit = Number.POSITIVE_INFINITY): { seq: number; id: string; value: unknown }[] {
  const seqs: number[] = [];
  for (let seq = afterSeq + 1; seq <= count && seqs.length < limit; seq++) seqs.push(seq);
  return seqs.map((seq) => ({ seq, id: `r${seq - 1}`, value: record(seq - 1) }));
}

const withoutAt = (records: LogRecord[]) => records.map(({ seq, id, value }) => ({ seq, id, value }));

/** Each file under the store's internal sidecar directory with its modification time. */
function sidecarFiles(dir: string): Record<string, bigint> {
  const directory = path.join(dir, "_keel", "logidx");
  return Object.fromEntries(readdirSync(directory).map((name) => [name, statSync(path.join(directory, name), { bigint: true }).mtimeNs]));
}

describe("reading a log parses each line once", () => {
  it("a new instance reads a whole big log in one pass over the file, and writes nothing", async () => {
    const { dir, size } = await bigLog();
    const sidecars = sidecarFiles(dir);
    expect(Object.keys(sidecars)).toHaveLength(1);

    const { io, store } = open(dir);
    const all = await okValue(store.logs.read(LOG));
    expect(withoutAt(all)).toEqual(expectedWindow(RECORDS, 0));
    expect(all[0]!.at).toMatch(/^\d{4}-\d\d-\d\dT/);
    // The file once (and the first line of the id sidecar), not once to index and again to read.
    expect(io.bytesRead()).toBeLessThan(size * 1.02);
    // The id sidecar the writer left covers the log: the read does not write it again.
    expect(sidecarFiles(dir)).toEqual(sidecars);

    // The index it built serves the next calls: a re-append dedupes, a warm read reads the lines asked for.
    expect(await okValue(store.logs.append(LOG, [{ id: "r7", value: record(7) }]))).toEqual({ lastSeq: RECORDS, appended: 0, deduplicated: 1 });
    const before = io.bytesRead();
    expect(withoutAt(await okValue(store.logs.read(LOG, { afterSeq: 10, limit: 3 })))).toEqual(expectedWindow(RECORDS, 10, 3));
    expect(io.bytesRead() - before).toBeLessThan(4_096);
  });

  it("answers every window as before, over records indexed earlier and records another instance appended since", async () => {
    const dir = tempDir();
    const writer = open(dir).store;
    await fill(writer, 0, 300);
    const reader = open(dir);
    expect(withoutAt(await okValue(reader.store.logs.read(LOG)))).toEqual(expectedWindow(300, 0));
    let count = 300;
    const windows: [number, number | undefined][] = [
      [0, undefined],
      [0, 1],
      [150, 200],
      [299, undefined],
      [300, 2],
      [250, 100],
      [count + 150, undefined],
      [5, 10],
    ];
    for (const [afterSeq, limit] of windows) {
      // Another instance appends first: this read indexes the new lines and returns them from that pass.
      await fill(writer, count, count + 100);
      count += 100;
      const before = reader.io.bytesRead();
      const options = limit === undefined ? { afterSeq } : { afterSeq, limit };
      const records = await okValue(reader.store.logs.read(LOG, options));
      expect(withoutAt(records), JSON.stringify(options)).toEqual(expectedWindow(count, afterSeq, limit));
      // What a new instance reads is the same, to the timestamp.
      expect(await okValue(open(dir).store.logs.read(LOG, options))).toEqual(records);
      // The appended lines once (about 25 KB), and the older lines asked for once.
      const older = expectedWindow(count - 100, afterSeq, limit).length;
      expect(reader.io.bytesRead() - before).toBeLessThan((100 + older) * 300 + 4_096);
    }
  });

  it("reports a damaged line at its offset whether the log was indexed before or not, as check() does", async () => {
    const { dir, file } = await bigLog();
    const warm = open(dir).store;
    await okValue(warm.logs.read(LOG));
    const bytes = readFileSync(file);
    // Damage a byte inside a line in the middle of the log.
    const lineStart = bytes.indexOf(0x0a, bytes.length >> 1) + 1;
    bytes[lineStart + 30] = bytes[lineStart + 30] === 0x41 ? 0x42 : 0x41;
    writeFileSync(file, bytes);

    const fromWarm = await errOf(warm.logs.read(LOG));
    const fromNew = await errOf(open(dir).store.logs.read(LOG));
    expect(fromWarm.code).toBe("corrupt");
    expect(fromNew.code).toBe("corrupt");
    expect(fromWarm.details).toEqual({ location: file, offset: lineStart, problem: "crc mismatch" });
    expect(fromNew.details).toEqual(fromWarm.details);
    const report = await okValue(open(dir).store.check());
    expect(report.problems.map((problem) => problem.location)).toContain(`${file}:${lineStart}`);
  });

  it("never returns the lines of an incomplete batch, read by a new instance or after an indexed one", async () => {
    const { dir, file } = await bigLog();
    const warm = open(dir).store;
    await okValue(warm.logs.read(LOG));
    // A complete record line of a batch whose end line never came, then a torn line.
    const lines = readFileSync(file, "utf8").split("\n");
    const last = lines[lines.length - 2]!;
    const writer = open(dir).store;
    await okValue(writer.logs.append(LOG, [{ id: "a", value: 1 }, { id: "b", value: 2 }]));
    await writer.close();
    const text = readFileSync(file, "utf8");
    writeFileSync(file, `${text.slice(0, text.lastIndexOf("\n", text.length - 2) + 1)}${last.slice(0, 50)}`);

    for (const store of [warm, open(dir).store]) {
      const all = await okValue(store.logs.read(LOG));
      expect(all).toHaveLength(RECORDS);
      expect(await okValue(store.logs.read(LOG, { afterSeq: RECORDS - 1 }))).toEqual([all[RECORDS - 1]]);
      expect(await okValue(store.logs.head(LOG))).toEqual({ lastSeq: RECORDS });
    }
  });
});
