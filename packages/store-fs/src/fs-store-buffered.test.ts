import { readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { errOf, okValue } from "@keel/testkit";
import { describe, expect, it } from "vitest";
import { BACKGROUND_SYNC_MS } from "./internal/log-sync.js";
import { useCountedStores } from "./__fixtures__/counted-stores.js";

/**
 * Buffered appends (`durable: false`): acknowledged without fdatasync, synced in the background,
 * and a log that a power loss may tear anywhere in its unsynced bytes. A power loss is simulated
 * on the closed store's files: the bytes after the durable point are cut, zeroed or garbled as
 * unwritten pages leave them, then a new store instance opens the log.
 */

const { tempDir, open } = useCountedStores("keel-fs-buffered-");

/** Waits until `done()` (polled), at most 10 s: the background sync runs after {@link BACKGROUND_SYNC_MS} on a loaded machine. */
async function waitFor(done: () => boolean): Promise<void> {
  const until = Date.now() + 10_000;
  while (!done() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
}

const LOG = ["runs", "r1"];
const fileOf = (dir: string) => path.join(dir, "runs", "r1.jsonl");
const value = (index: number) => ({ index, text: "v".repeat(60) });

/** A log of `synced` durable appends then `unsynced` buffered ones (one record each); the durable point is returned. */
async function mixedLog(dir: string, synced: number, unsynced: number): Promise<{ durablePoint: number; size: number }> {
  const { store } = open(dir);
  for (let index = 0; index < synced; index++) await okValue(store.logs.append(LOG, [{ id: `s${index}`, value: value(index) }]));
  const durablePoint = statSync(fileOf(dir)).size;
  for (let index = 0; index < unsynced; index++) await okValue(store.logs.append(LOG, [{ id: `u${index}`, value: value(index) }], { durable: false }));
  await store.close();
  return { durablePoint, size: statSync(fileOf(dir)).size };
}

/** Byte offsets of the starts of the log's lines. */
function lineStarts(bytes: Buffer): number[] {
  const starts = [0];
  for (let at = bytes.indexOf(0x0a); at >= 0 && at < bytes.length - 1; at = bytes.indexOf(0x0a, at + 1)) starts.push(at + 1);
  return starts;
}

describe("buffered appends on the fs store", () => {
  it("acknowledge without fdatasync, are visible to another instance at once, and are synced once, later", async () => {
    const dir = tempDir();
    const { io, store } = open(dir);
    await okValue(store.logs.append(LOG, [{ id: "first", value: value(0) }], { durable: false }));
    const afterCreate = io.syncs();
    for (let index = 1; index <= 20; index++) {
      expect(await okValue(store.logs.append(LOG, [{ id: `u${index}`, value: value(index) }], { durable: false }))).toEqual({
        lastSeq: index + 1,
        appended: 1,
        deduplicated: 0,
      });
    }
    // No fdatasync for 20 acknowledged appends.
    expect(io.syncs() - afterCreate).toBe(0);
    const other = open(dir).store;
    const seen = await okValue(other.logs.read(LOG));
    expect(seen.map((record) => record.id)).toEqual(["first", ...Array.from({ length: 20 }, (_, index) => `u${index + 1}`)]);
    // Dedupe and expectedSeq are unchanged.
    expect(await okValue(other.logs.append(LOG, [{ id: "u3", value: value(3) }], { durable: false }))).toEqual({ lastSeq: 21, appended: 0, deduplicated: 1 });
    expect((await errOf(other.logs.append(LOG, [{ id: "u3", value: { other: 1 } }], { durable: false }))).code).toBe("conflict");
    expect((await errOf(other.logs.append(LOG, [{ id: "x", value: 1 }], { durable: false, expectedSeq: 3 }))).code).toBe("conflict");
    // One background sync covers all of them, not sooner than its delay.
    const acknowledged = Date.now();
    await waitFor(() => io.syncs() - afterCreate >= 1);
    expect(Date.now() - acknowledged).toBeGreaterThanOrEqual(BACKGROUND_SYNC_MS - 500);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(io.syncs() - afterCreate).toBe(1);
    // A created log is written durably and says it was created by a buffered append.
    expect(readFileSync(fileOf(dir), "utf8").split("\n")[0]).toContain('"buffered":true');
  });

  it("syncs a group commit when any of its appends is durable, and leaves no durableTo on it", async () => {
    const dir = tempDir();
    const { io, store } = open(dir);
    await okValue(store.logs.append(LOG, [{ id: "a", value: 1 }]));
    const before = io.syncs();
    await Promise.all([
      okValue(store.logs.append(LOG, [{ id: "b", value: 2 }], { durable: false })),
      okValue(store.logs.append(LOG, [{ id: "c", value: 3 }])),
      okValue(store.logs.append(LOG, [{ id: "d", value: 4 }], { durable: false })),
    ]);
    await store.close();
    const lines = readFileSync(fileOf(dir), "utf8").trim().split("\n");
    const synced = io.syncs() - before;
    const marked = lines.filter((line) => line.includes('"durableTo"')).length;
    // Appends made in one tick share one group commit: one fdatasync for the three, no marks, nothing left to sync at close.
    expect(synced).toBe(1);
    expect(marked).toBe(0);
    expect(lines).toHaveLength(5);
  });

  it("refuses a durable option that is not a boolean", async () => {
    const { store } = open(tempDir());
    expect((await errOf(store.logs.append(LOG, [{ id: "a", value: 1 }], { durable: "no" } as never))).code).toBe("invalid_input");
  });

  for (const kind of ["zero", "garble", "cut"] as const) {
    it(`reads a power loss that ${kind}s bytes in the middle of the unsynced batches as lost appends, keeping every synced record`, async () => {
      const dir = tempDir();
      const { durablePoint } = await mixedLog(dir, 5, 12);
      const file = fileOf(dir);
      const bytes = readFileSync(file);
      const starts = lineStarts(bytes);
      // Damage the 5th unsynced line (seq 10) from its middle on for 40 bytes; later unsynced lines stay intact.
      const damagedLine = starts.findIndex((start) => start >= durablePoint) + 4;
      const from = starts[damagedLine]! + 30;
      const damaged = kind === "cut" ? Buffer.from(bytes.subarray(0, from)) : Buffer.from(bytes);
      if (kind !== "cut") for (let at = from; at < from + 40; at++) damaged[at] = kind === "zero" ? 0 : (at * 7) % 256;
      writeFileSync(file, damaged);

      const { store, warnings } = open(dir);
      const records = await okValue(store.logs.read(LOG));
      expect(records.map((record) => record.id)).toEqual(["s0", "s1", "s2", "s3", "s4", "u0", "u1", "u2", "u3"]);
      expect(await okValue(store.logs.head(LOG))).toEqual({ lastSeq: 9 });

      const found = await okValue(store.check());
      expect(found.problems).toHaveLength(1);
      expect(found.problems[0]).toMatchObject({ code: "corrupt", location: `${file}:${starts[damagedLine]}` });

      // The next append cuts the lost batches and reuses their seqs.
      expect(await okValue(store.logs.append(LOG, [{ id: "after", value: 1 }], { durable: false }))).toEqual({ lastSeq: 10, appended: 1, deduplicated: 0 });
      expect(warnings.map((warning) => warning.type)).toEqual(["truncated-tail"]);
      if (kind !== "cut") expect(warnings[0]!.message).toContain("power loss");
      // A lost id may be appended again (it is not in the log any more).
      expect(await okValue(store.logs.append(LOG, [{ id: "u9", value: value(9) }]))).toEqual({ lastSeq: 11, appended: 1, deduplicated: 0 });
      const fresh = open(dir).store;
      expect((await okValue(fresh.logs.read(LOG))).map((record) => [record.seq, record.id])).toEqual([
        [1, "s0"], [2, "s1"], [3, "s2"], [4, "s3"], [5, "s4"], [6, "u0"], [7, "u1"], [8, "u2"], [9, "u3"], [10, "after"], [11, "u9"],
      ]);
      expect((await okValue(fresh.check())).problems).toEqual([]);
    });
  }

  it("repairs a power loss with check({ repair: true }) as a truncated tail", async () => {
    const dir = tempDir();
    const { durablePoint, size } = await mixedLog(dir, 2, 6);
    const file = fileOf(dir);
    const bytes = readFileSync(file);
    bytes.fill(0, durablePoint + 10, Math.min(size - 1, durablePoint + 200));
    writeFileSync(file, bytes);
    const { store } = open(dir);
    const repaired = await okValue(store.check({ repair: true }));
    expect(repaired.problems).toEqual([]);
    expect(repaired.repaired).toHaveLength(1);
    expect(repaired.repaired[0]).toMatchObject({ action: "truncated-tail", location: `${file}:${durablePoint}` });
    expect(repaired.repaired[0]!.message).toContain("power loss");
    expect(statSync(file).size).toBe(durablePoint);
    expect((await okValue(store.logs.read(LOG))).map((record) => record.id)).toEqual(["s0", "s1"]);
  });

  it("keeps damage before a synced batch `corrupt`: a power loss cannot explain it", async () => {
    const dir = tempDir();
    const { store } = open(dir);
    for (let index = 0; index < 4; index++) await okValue(store.logs.append(LOG, [{ id: `u${index}`, value: value(index) }], { durable: false }));
    await okValue(store.logs.append(LOG, [{ id: "durable", value: 1 }]));
    await store.close();
    const file = fileOf(dir);
    const bytes = readFileSync(file);
    const starts = lineStarts(bytes);
    bytes.fill(0, starts[2]! + 20, starts[2]! + 40);
    writeFileSync(file, bytes);
    const reopened = open(dir).store;
    const error = await errOf(reopened.logs.read(LOG));
    expect(error.code).toBe("corrupt");
    expect(error.details["offset"]).toBe(starts[2]);
    expect((await errOf(reopened.logs.append(LOG, [{ id: "x", value: 1 }], { durable: false }))).code).toBe("corrupt");
  });

  it("keeps damage before a background sync `corrupt` once a later buffered append names the synced point", async () => {
    const dir = tempDir();
    const { store, io } = open(dir);
    for (let index = 0; index < 4; index++) await okValue(store.logs.append(LOG, [{ id: `u${index}`, value: value(index) }], { durable: false }));
    const before = io.syncs();
    // Counted once complete: the store has recorded the synced point by the time the poll sees it.
    await waitFor(() => io.syncs() > before);
    const synced = statSync(fileOf(dir)).size;
    await okValue(store.logs.append(LOG, [{ id: "later", value: 1 }], { durable: false }));
    await store.close();
    const file = fileOf(dir);
    const text = readFileSync(file, "utf8");
    expect(text.trim().split("\n").at(-1)).toContain(`"durableTo":${synced}`);
    const bytes = Buffer.from(text);
    const starts = lineStarts(bytes);
    bytes.fill(0x41, starts[3]! + 20, starts[3]! + 30);
    writeFileSync(file, bytes);
    expect((await errOf(open(dir).store.logs.read(LOG))).code).toBe("corrupt");
  });

  it("reads the newest records of a big log from its tail, starting before the durable point, never past damage", async () => {
    const dir = tempDir();
    const writer = open(dir).store;
    const big = (start: number) => Array.from({ length: 100 }, (_, offset) => ({ id: `r${start + offset}`, value: { text: "r".repeat(180) } }));
    for (let start = 0; start < 3_000; start += 100) await okValue(writer.logs.append(LOG, big(start)));
    const durablePoint = statSync(fileOf(dir)).size;
    for (let index = 0; index < 30; index++) await okValue(writer.logs.append(LOG, [{ id: `u${index}`, value: value(index) }], { durable: false }));
    await writer.close();
    const file = fileOf(dir);
    const bytes = readFileSync(file);
    const starts = lineStarts(bytes);
    const firstUnsynced = starts.findIndex((start) => start >= durablePoint);
    // Garble the 10th unsynced line; the 20 after it stay intact.
    bytes.fill(0x7a, starts[firstUnsynced + 9]! + 5, starts[firstUnsynced + 9]! + 25);
    writeFileSync(file, bytes);

    const { io, store } = open(dir);
    // Records after the damage are not served, even to a read that only wants the newest ones.
    expect(await okValue(store.logs.read(LOG, { afterSeq: 3_020 }))).toEqual([]);
    expect(await okValue(store.logs.head(LOG))).toEqual({ lastSeq: 3_009 });
    const newest = await okValue(store.logs.read(LOG, { afterSeq: 3_006 }));
    expect(newest.map((record) => record.id)).toEqual(["u6", "u7", "u8"]);
    // Still from the tail: far less than the file.
    expect(io.bytesRead()).toBeLessThan(bytes.length / 4);
  });
});
