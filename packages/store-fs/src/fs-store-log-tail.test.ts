import { appendFileSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { errOf, okValue } from "@keel/testkit";
import { describe, expect, it } from "vitest";
import { createFsStore } from "./index.js";
import { useCountedStores } from "./__fixtures__/counted-stores.js";

const { tempDir, open } = useCountedStores("keel-fs-log-tail-");

const RECORDS = 4_000;
const record = (index: number) => ({ index, text: "r".repeat(180) });

/** A log of 4,000 records of ~250 bytes (about 1 MB) in batches of 100, written by a store that is then closed. */
async function bigLog(): Promise<{ dir: string; file: string }> {
  const dir = tempDir();
  const writer = createFsStore({ dir });
  for (let start = 0; start < RECORDS; start += 100) {
    await okValue(writer.logs.append(["runs", "big"], Array.from({ length: 100 }, (_, offset) => ({ id: `r${start + offset}`, value: record(start + offset) }))));
  }
  await writer.close();
  return { dir, file: path.join(dir, "runs", "big.jsonl") };
}

function reopen(dir: string) {
  const { io, store } = open(dir);
  return { io, store };
}

describe("opening a big log reads only what the call needs", () => {
  it("answers head() and a read of the newest records from the tail, not the whole file", async () => {
    const { dir, file } = await bigLog();
    const size = statSync(file).size;
    expect(size).toBeGreaterThan(900_000);

    const { io, store } = reopen(dir);
    expect(await okValue(store.logs.head(["runs", "big"]))).toEqual({ lastSeq: RECORDS });
    expect(io.bytesRead()).toBeLessThan(size / 8);

    const before = io.bytesRead();
    const newest = await okValue(store.logs.read(["runs", "big"], { afterSeq: RECORDS - 3 }));
    expect(newest.map((entry) => entry.id)).toEqual([`r${RECORDS - 3}`, `r${RECORDS - 2}`, `r${RECORDS - 1}`]);
    expect(newest.map((entry) => entry.seq)).toEqual([RECORDS - 2, RECORDS - 1, RECORDS]);
    expect(io.bytesRead() - before).toBeLessThan(size / 8);

    // A read of everything, and an append (whose dedupe needs every id), index the whole file.
    const all = await okValue(store.logs.read(["runs", "big"]));
    expect(all).toHaveLength(RECORDS);
    expect(all[0]).toMatchObject({ seq: 1, id: "r0", value: record(0) });
    const again = await okValue(store.logs.append(["runs", "big"], [{ id: "r7", value: record(7) }]));
    expect(again).toEqual({ lastSeq: RECORDS, appended: 0, deduplicated: 1 });
    expect((await errOf(store.logs.append(["runs", "big"], [{ id: "r7", value: { other: true } }]))).code).toBe("conflict");
  });

  it("reads a big log about once for a read from far back (the tail walk gives up early)", async () => {
    const { dir, file } = await bigLog();
    const size = statSync(file).size;
    const { io, store } = reopen(dir);
    const records = await okValue(store.logs.read(["runs", "big"], { afterSeq: 10, limit: 5 }));
    expect(records.map((entry) => entry.seq)).toEqual([11, 12, 13, 14, 15]);
    expect(io.bytesRead()).toBeLessThan(size * 1.15);
  });

  it("an append after a tail read dedupes against the whole log", async () => {
    const { dir } = await bigLog();
    const { store } = reopen(dir);
    await okValue(store.logs.read(["runs", "big"], { afterSeq: RECORDS - 1 }));
    expect(await okValue(store.logs.append(["runs", "big"], [{ id: "r1", value: record(1) }]))).toEqual({ lastSeq: RECORDS, appended: 0, deduplicated: 1 });
    expect(await okValue(store.logs.append(["runs", "big"], [{ id: "new", value: 1 }]))).toEqual({ lastSeq: RECORDS + 1, appended: 1, deduplicated: 0 });
    expect((await okValue(store.logs.read(["runs", "big"], { afterSeq: RECORDS - 1 }))).map((entry) => entry.id)).toEqual([`r${RECORDS - 1}`, "new"]);
  });

  it("keeps the head right after a torn tail: an unterminated line and a batch without its end line", async () => {
    const { dir, file } = await bigLog();
    const lines = readFileSync(file, "utf8").split("\n");
    // The start of a line that was never finished (a torn append).
    const torn = lines[lines.length - 2]!.replace(`"seq":${RECORDS}`, `"seq":${RECORDS + 1}`);
    appendFileSync(file, torn.slice(0, 40));
    const { store } = reopen(dir);
    expect(await okValue(store.logs.head(["runs", "big"]))).toEqual({ lastSeq: RECORDS });
    expect((await okValue(store.logs.read(["runs", "big"], { afterSeq: RECORDS - 1 }))).map((entry) => entry.seq)).toEqual([RECORDS]);
    // The next append cuts the tail and continues after the last committed seq.
    expect((await okValue(store.logs.append(["runs", "big"], [{ id: "after-crash", value: 1 }]))).lastSeq).toBe(RECORDS + 1);
    const fresh = reopen(dir).store;
    expect(await okValue(fresh.logs.head(["runs", "big"]))).toEqual({ lastSeq: RECORDS + 1 });
  });

  it("ignores complete record lines of a batch that never got its end line, as a scan from the start does", async () => {
    const { dir, file } = await bigLog();
    const writer = createFsStore({ dir });
    await okValue(writer.logs.append(["runs", "big"], [{ id: "a", value: 1 }, { id: "b", value: 2 }]));
    await writer.close();
    // Cut the batch's end line: what is left is a complete line of an incomplete batch.
    const text = readFileSync(file, "utf8");
    const lastLineStart = text.lastIndexOf("\n", text.length - 2) + 1;
    writeFileSync(file, text.slice(0, lastLineStart));
    const { store } = reopen(dir);
    expect(await okValue(store.logs.head(["runs", "big"]))).toEqual({ lastSeq: RECORDS });
    expect((await okValue(store.logs.read(["runs", "big"], { afterSeq: RECORDS - 1 }))).map((entry) => entry.id)).toEqual([`r${RECORDS - 1}`]);
  });

  it("fails closed on a damaged line in the last batch, from the tail as from the start", async () => {
    const { dir, file } = await bigLog();
    const bytes = readFileSync(file);
    // Damage a byte inside the line before the last one (the last batch's second-to-last record).
    const last = bytes.lastIndexOf(0x0a, bytes.length - 2);
    const target = bytes.lastIndexOf(0x0a, last - 1) + 20;
    bytes[target] = bytes[target] === 0x41 ? 0x42 : 0x41;
    writeFileSync(file, bytes);
    const fromTail = await errOf(reopen(dir).store.logs.head(["runs", "big"]));
    const fromStart = await errOf(reopen(dir).store.logs.read(["runs", "big"]));
    expect(fromTail.code).toBe("corrupt");
    expect(fromTail.details).toEqual(fromStart.details);
  });
});
