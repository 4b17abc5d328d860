import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { KeelStore } from "@keel/store";
import { errOf, okValue } from "@keel/testkit";
import { describe, expect, it } from "vitest";
import { nodeFsIo, type FsIo } from "./internal/fs-io.js";
import { buildIdTable, decodeSidecar, eachIdEntry, encodeSidecar, idHash } from "./internal/log-sidecar.js";
import { openFsStore } from "./internal/open-fs-store.js";
import { useCountedStores } from "./__fixtures__/counted-stores.js";

/**
 * The id sidecar of a big log (`_keel/logidx/`): a new store instance's first append loads it
 * instead of scanning the whole log for its ids, and trusts it only when every check passes.
 */

const { tempDir, open, track } = useCountedStores("keel-fs-log-sidecar-");

const LOG = ["runs", "big"];
const RECORDS = 4_000;
const record = (index: number) => ({ index, text: "r".repeat(180) });

const fileOf = (dir: string) => path.join(dir, "runs", "big.jsonl");
const sidecarDirOf = (dir: string) => path.join(dir, "_keel", "logidx");

/** The path of the one sidecar of the store, if any. */
function sidecarOf(dir: string): string | undefined {
  const directory = sidecarDirOf(dir);
  if (!existsSync(directory)) return undefined;
  const names = readdirSync(directory).filter((name) => name.endsWith(".idx"));
  expect(names.length).toBeLessThanOrEqual(1);
  return names[0] === undefined ? undefined : path.join(directory, names[0]);
}

/** Appends records `from`..`to - 1` (ids `<prefix><n>`) in batches of 100. */
async function fill(store: KeelStore, prefix: string, from: number, to: number, durable = true): Promise<void> {
  for (let start = from; start < to; start += 100) {
    const count = Math.min(100, to - start);
    await okValue(store.logs.append(LOG, Array.from({ length: count }, (_, offset) => ({ id: `${prefix}${start + offset}`, value: record(start + offset) })), { durable }));
  }
}

/** A log of 4,000 records (about 1 MB), written by a store that is then closed: its sidecar covers the whole log. */
async function bigLog(): Promise<{ dir: string; file: string; size: number }> {
  const dir = tempDir();
  const { store } = open(dir);
  await fill(store, "r", 0, RECORDS);
  await store.close();
  const file = fileOf(dir);
  return { dir, file, size: statSync(file).size };
}

describe("the id sidecar of a big log", () => {
  it("serves a new instance's first append without a scan of the whole log, with the same dedupe and conflicts", async () => {
    const { dir, size } = await bigLog();
    expect(size).toBeGreaterThan(900_000);
    const sidecar = decodeSidecar(readFileSync(sidecarOf(dir)!));
    expect(sidecar).toBeDefined();
    // Written while the log grew: it covers all but at most the last stretch.
    expect(sidecar!.end).toBeGreaterThan(size * 0.8);

    const first = open(dir);
    expect(await okValue(first.store.logs.append(LOG, [{ id: "new", value: 1 }]))).toEqual({ lastSeq: RECORDS + 1, appended: 1, deduplicated: 0 });
    expect(first.io.bytesRead()).toBeLessThan(size / 4);

    // Ids known only from the sidecar's covered part: a re-append with the same value dedupes, another value conflicts.
    const second = open(dir);
    expect(await okValue(second.store.logs.append(LOG, [{ id: "r7", value: record(7) }]))).toEqual({ lastSeq: RECORDS + 1, appended: 0, deduplicated: 1 });
    expect(second.io.bytesRead()).toBeLessThan(size / 4);
    const third = open(dir);
    expect((await errOf(third.store.logs.append(LOG, [{ id: "r9", value: { other: true } }]))).code).toBe("conflict");
    expect(third.io.bytesRead()).toBeLessThan(size / 4);
    // An id after the sidecar's end (scanned from the log) dedupes too, and so does the record just appended.
    const fourth = open(dir);
    expect(await okValue(fourth.store.logs.append(LOG, [{ id: `r${RECORDS - 1}`, value: record(RECORDS - 1) }, { id: "new", value: 1 }]))).toEqual({
      lastSeq: RECORDS + 1,
      appended: 0,
      deduplicated: 2,
    });
    const all = await okValue(open(dir).store.logs.read(LOG));
    expect(all.map((entry) => entry.seq)).toEqual(Array.from({ length: RECORDS + 1 }, (_, index) => index + 1));
    expect(new Set(all.map((entry) => entry.id)).size).toBe(RECORDS + 1);
  });

  it("is rewritten as the log grows, covering only committed, durable batches", async () => {
    const { dir, size } = await bigLog();
    const { store } = open(dir);
    await fill(store, "m", 0, 2_000);
    await store.close();
    const sidecar = decodeSidecar(readFileSync(sidecarOf(dir)!))!;
    const grown = statSync(fileOf(dir)).size;
    expect(sidecar.end).toBeGreaterThan(size);
    expect(sidecar.end).toBeLessThanOrEqual(grown);
    expect(sidecar.lengths).toHaveLength(sidecar.lastSeq);
    // It ends at a batch end line: the line before `end` carries the end mark.
    const bytes = readFileSync(fileOf(dir));
    expect(bytes[sidecar.end - 1]).toBe(0x0a);
    const lastLine = bytes.subarray(bytes.lastIndexOf(0x0a, sidecar.end - 2) + 1, sidecar.end).toString("utf8");
    expect(lastLine).toContain(`"seq":${sidecar.lastSeq},`);
    expect(lastLine).toContain('"end":true');
  });

  for (const damage of ["garbled", "truncated", "empty", "lying"] as const) {
    it(`is ignored when ${damage}: the first append scans the whole log, with the same results`, async () => {
      const { dir, size } = await bigLog();
      const location = sidecarOf(dir)!;
      const bytes = readFileSync(location);
      if (damage === "garbled") {
        const garbled = Buffer.from(bytes);
        for (let at = 1000; at < 1040; at++) garbled[at] = (at * 7) % 256;
        writeFileSync(location, garbled);
      } else if (damage === "truncated") {
        writeFileSync(location, bytes.subarray(0, bytes.length >> 1));
      } else if (damage === "empty") {
        writeFileSync(location, "");
      } else {
        // A well-formed sidecar (good CRC) without the first record: its lengths no longer add up to its end.
        const content = decodeSidecar(bytes)!;
        const count = content.lengths.length - 1;
        const table = buildIdTable(count, (add) => eachIdEntry(content.table, (hash, position) => position > 0 && add(hash, position - 1)));
        writeFileSync(location, encodeSidecar({ ...content, lengths: content.lengths.slice(1), table }));
      }
      const first = open(dir);
      expect(await okValue(first.store.logs.append(LOG, [{ id: "r7", value: record(7) }]))).toEqual({ lastSeq: RECORDS, appended: 0, deduplicated: 1 });
      expect(first.io.bytesRead()).toBeGreaterThanOrEqual(size);
      expect((await errOf(first.store.logs.append(LOG, [{ id: "r8", value: 8 }]))).code).toBe("conflict");
      // The full scan saved a good sidecar again.
      expect(decodeSidecar(readFileSync(sidecarOf(dir)!))?.lastSeq).toBeGreaterThan(RECORDS * 0.8);
      const next = open(dir);
      expect((await errOf(next.store.logs.append(LOG, [{ id: "r8", value: 8 }]))).code).toBe("conflict");
      expect(next.io.bytesRead()).toBeLessThan(size / 4);
    });
  }

  it("reads every candidate of the id table back: a hash collision neither dedupes nor conflicts", async () => {
    const { dir, size } = await bigLog();
    const location = sidecarOf(dir)!;
    const content = decodeSidecar(readFileSync(location))!;
    // The table files record 7 (id r7) under the hash of "fresh", as a collision would.
    const table = buildIdTable(content.lengths.length, (add) => eachIdEntry(content.table, (hash, position) => add(position === 7 ? idHash("fresh") : hash, position)));
    writeFileSync(location, encodeSidecar({ ...content, table }));
    const { io, store } = open(dir);
    expect(await okValue(store.logs.append(LOG, [{ id: "fresh", value: record(7) }]))).toEqual({ lastSeq: RECORDS + 1, appended: 1, deduplicated: 0 });
    expect(io.bytesRead()).toBeLessThan(size / 4);
    expect((await okValue(store.logs.read(LOG, { afterSeq: RECORDS }))).map((entry) => entry.id)).toEqual(["fresh"]);
  });

  it("is ignored for a log deleted and created again (another file), even when an old copy is put back", async () => {
    const { dir, size } = await bigLog();
    const location = sidecarOf(dir)!;
    const old = readFileSync(location);
    const { store } = open(dir);
    await okValue(store.logs.delete(LOG));
    // The delete drops the sidecar.
    expect(existsSync(location)).toBe(false);
    await fill(store, "n", 0, RECORDS);
    await store.close();
    writeFileSync(location, old);

    const reborn = open(dir);
    // r7 was in the old file only: appended anew, not deduplicated against the old sidecar.
    expect(await okValue(reborn.store.logs.append(LOG, [{ id: "r7", value: { other: true } }]))).toEqual({ lastSeq: 2 * RECORDS + 1, appended: 1, deduplicated: 0 });
    expect(reborn.io.bytesRead()).toBeGreaterThanOrEqual(size);
    expect(await okValue(reborn.store.logs.append(LOG, [{ id: "n7", value: record(7) }]))).toEqual({ lastSeq: 2 * RECORDS + 1, appended: 0, deduplicated: 1 });
  });

  it("never covers unsynced bytes, and is not trusted past a power loss's cut", async () => {
    const dir = tempDir();
    const writer = open(dir);
    await fill(writer.store, "s", 0, RECORDS);
    const durablePoint = statSync(fileOf(dir)).size;
    // Buffered appends: the sidecar saved now covers nothing after the durable point.
    await fill(writer.store, "u", 0, 1_000, false);
    const beforeSync = readFileSync(sidecarOf(dir)!);
    expect(decodeSidecar(beforeSync)!.end).toBeLessThanOrEqual(durablePoint);
    await writer.store.close();
    // Once synced (at close) the buffered batches are durable, and the sidecar covers them.
    const afterSync = readFileSync(sidecarOf(dir)!);
    const synced = decodeSidecar(afterSync)!;
    expect(synced.end).toBeGreaterThan(durablePoint);

    // A power loss that tore the unsynced batches (the machine stopped before the sync), as the store's files then hold them.
    const file = fileOf(dir);
    const bytes = readFileSync(file);
    const cut = durablePoint + 60_000;
    writeFileSync(file, bytes.subarray(0, cut));
    writeFileSync(sidecarOf(dir)!, afterSync);
    const { store, warnings } = open(dir);
    const records = await okValue(store.logs.read(LOG));
    const kept = records.length;
    expect(kept).toBeGreaterThan(RECORDS);
    expect(kept).toBeLessThan(RECORDS + 1_000);
    // A lost id is appended anew (the sidecar that names it covers more than the file holds), a kept one dedupes.
    const fresh = open(dir);
    expect(await okValue(fresh.store.logs.append(LOG, [{ id: "u999", value: record(999) }]))).toEqual({ lastSeq: kept + 1, appended: 1, deduplicated: 0 });
    expect(await okValue(fresh.store.logs.append(LOG, [{ id: "s7", value: record(7) }]))).toEqual({ lastSeq: kept + 1, appended: 0, deduplicated: 1 });
    expect(warnings).toEqual([]);

    // The log grows past the old sidecar's end again with other ids; the old sidecar put back is still not trusted.
    await fill(fresh.store, "z", 0, 1_200, false);
    await fresh.store.close();
    expect(statSync(file).size).toBeGreaterThan(synced.end);
    writeFileSync(sidecarOf(dir)!, afterSync);
    const later = open(dir);
    expect(await okValue(later.store.logs.append(LOG, [{ id: "u998", value: record(998) }]))).toEqual({ lastSeq: kept + 1_202, appended: 1, deduplicated: 0 });
    expect(later.io.bytesRead()).toBeGreaterThanOrEqual(synced.end);
    expect(await okValue(later.store.logs.append(LOG, [{ id: "z5", value: record(5) }]))).toEqual({ lastSeq: kept + 1_202, appended: 0, deduplicated: 1 });
    const ids = (await okValue(open(dir).store.logs.read(LOG))).map((entry) => entry.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("never fails an append when it cannot be written (a cache: the next instance scans the log)", async () => {
    const dir = tempDir();
    const failing: FsIo = {
      ...nodeFsIo,
      renameSync: (from, to) => {
        if (to.includes(`${path.sep}logidx${path.sep}`)) throw Object.assign(new Error("no space left on device"), { code: "ENOSPC" });
        nodeFsIo.renameSync(from, to);
      },
    };
    const writer = openFsStore({ dir }, failing);
    track(writer);
    await fill(writer, "r", 0, RECORDS);
    expect(sidecarOf(dir)).toBeUndefined();
    // No staging file is left behind either.
    expect(readdirSync(sidecarDirOf(dir))).toEqual([]);
    const { io, store } = open(dir);
    expect(await okValue(store.logs.append(LOG, [{ id: "r7", value: record(7) }]))).toEqual({ lastSeq: RECORDS, appended: 0, deduplicated: 1 });
    expect(io.bytesRead()).toBeGreaterThanOrEqual(statSync(fileOf(dir)).size);
    expect(decodeSidecar(readFileSync(sidecarOf(dir)!))?.lastSeq).toBe(RECORDS);
  });

  it("is not a finding of check(): check reads the whole log, rebuilds a damaged sidecar and removes leftover staging files", async () => {
    const { dir, file, size } = await bigLog();
    const location = sidecarOf(dir)!;
    const { io, store } = open(dir);
    const clean = await okValue(store.check());
    expect(clean.problems).toEqual([]);
    expect(io.bytesRead()).toBeGreaterThanOrEqual(size);

    writeFileSync(location, "garbage");
    const staging = path.join(sidecarDirOf(dir), `.${path.basename(location)}.2147483646.abc1.tmp`);
    writeFileSync(staging, "half");
    const damaged = await okValue(store.check());
    expect(damaged.problems).toEqual([{ code: "orphan", location: staging, message: expect.stringContaining("temporary") as unknown as string }]);
    expect(decodeSidecar(readFileSync(location))?.end).toBe(size);
    const repaired = await okValue(store.check({ repair: true }));
    expect(repaired.problems).toEqual([]);
    expect(repaired.repaired.map((entry) => entry.location)).toEqual([staging]);
    expect(existsSync(staging)).toBe(false);
    // Damage in the covered part of the log is still found: check never trusts the sidecar.
    const bytes = readFileSync(file);
    bytes[2_000] = bytes[2_000] === 0x41 ? 0x42 : 0x41;
    writeFileSync(file, bytes);
    const corrupt = await okValue(open(dir).store.check());
    expect(corrupt.problems.map((problem) => problem.code)).toEqual(["corrupt"]);
  });
});
