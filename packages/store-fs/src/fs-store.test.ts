import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync, appendFileSync, rmSync } from "node:fs";
import path from "node:path";
import type { KeelError } from "@keel/core";
import type { KeelStore } from "@keel/store";
import type { ResultAsync } from "neverthrow";
import { describe, expect, it } from "vitest";
import { createFsStore, type FsStoreOptions, type FsStoreWarning } from "./index.js";
import { encodeRecordLine } from "./internal/log-format.js";
import { errOf as failure, okValue as value, useTempDirs } from "@keel/testkit";

const dirs = useTempDirs("keel-fs-test-");
const tempDir = () => dirs.dir();

function open(dir: string, options: Omit<FsStoreOptions, "dir"> = {}): { store: KeelStore; warnings: FsStoreWarning[] } {
  const warnings: FsStoreWarning[] = [];
  const store = dirs.track(createFsStore({ dir, onWarning: (warning) => warnings.push(warning), ...options }));
  return { store, warnings };
}

/** Every file under `dir`, relative, sorted. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) walk(full);
      else out.push(path.relative(dir, full));
    }
  };
  walk(dir);
  return out.sort();
}

const deadPid = () => spawnSync(process.execPath, ["-e", ""]).pid!;

describe("documents on disk", () => {
  it("stores a document as a readable JSON envelope at <dir>/<key segments>.json, the previous version as .bak", async () => {
    const dir = tempDir();
    const { store } = open(dir);
    const key = ["missions", "m1", "role-sessions", "engineer"];
    await value(store.docs.put(key, { objective: "ship", turns: 1 }, { create: true }));
    await value(store.docs.put(key, { objective: "ship", turns: 2 }, { expectedVersion: 1 }));
    const file = path.join(dir, "missions", "m1", "role-sessions", "engineer.json");
    const current = JSON.parse(readFileSync(file, "utf8"));
    expect(current).toMatchObject({ format: "keel.doc.v1", key, version: 2, deleted: false, value: { objective: "ship", turns: 2 } });
    expect(current.checksum).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(readFileSync(file, "utf8")).toContain('\n  "value": {\n    "objective": "ship"');
    const backup = JSON.parse(readFileSync(`${file}.bak`, "utf8"));
    expect(backup).toMatchObject({ version: 1, value: { objective: "ship", turns: 1 } });
    expect(filesUnder(dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  });

  it("writes a tombstone on delete; the .bak keeps the last value", async () => {
    const dir = tempDir();
    const { store } = open(dir);
    await value(store.docs.put(["d"], { last: true }, { create: true }));
    expect(await value(store.docs.delete(["d"], { expectedVersion: 1 }))).toBe(true);
    expect(JSON.parse(readFileSync(path.join(dir, "d.json"), "utf8"))).toMatchObject({ version: 2, deleted: true, value: null });
    expect(JSON.parse(readFileSync(path.join(dir, "d.json.bak"), "utf8"))).toMatchObject({ version: 1, value: { last: true } });
    expect(await value(store.docs.get(["d"]))).toBeUndefined();
  });

  it("keeps keys whose segments end in .json or .bak apart from document files", async () => {
    const dir = tempDir();
    const { store } = open(dir);
    const keys = [["x"], ["x.json"], ["x.json", "y"], ["x.json.bak"], ["x.jsonl", "z"], ["x", "y"]];
    for (const [index, key] of keys.entries()) await value(store.docs.put(key, index, { create: true }));
    await value(store.logs.append(["x"], [{ id: "a", value: 1 }]));
    for (const [index, key] of keys.entries()) expect((await value(store.docs.get(key)))?.value).toBe(index);
    expect((await value(store.docs.list([]))).items.map((item) => item.key)).toEqual([["x"], ["x", "y"], ["x.json"], ["x.json", "y"], ["x.json.bak"], ["x.jsonl", "z"]]);
    expect(await value(store.logs.list([]))).toEqual([["x"]]);
    expect(existsSync(path.join(dir, "x.json~", "y.json"))).toBe(true);
  });

  it("serves a damaged document from its .bak, says so, and check({ repair: true }) restores it at a version above every acknowledged one", async () => {
    const dir = tempDir();
    const { store, warnings } = open(dir);
    await value(store.docs.put(["d"], { n: 1 }, { create: true }));
    await value(store.docs.put(["d"], { n: 2 }, { expectedVersion: 1 }));
    const file = path.join(dir, "d.json");
    const text = readFileSync(file, "utf8");
    writeFileSync(file, text.slice(0, text.length / 2));
    const served = await value(store.docs.get(["d"]));
    expect(served).toMatchObject({ value: { n: 1 }, version: 1, recovered: { from: "backup", location: file } });
    expect(warnings.map((warning) => [warning.type, warning.location])).toEqual([["served-backup", file]]);
    expect(warnings[0]?.message).toContain("went back from 2");
    const report = await value(store.check());
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([expect.objectContaining({ code: "corrupt", location: file })]);
    const repaired = await value(store.check({ repair: true }));
    expect(repaired.repaired).toEqual([expect.objectContaining({ action: "restored-bak", location: file })]);
    expect(repaired.ok).toBe(true);
    expect(repaired.quarantined).toEqual([expect.objectContaining({ key: ["d"], from: file })]);
    // The damaged bytes are kept, byte for byte.
    expect(readFileSync(path.join(repaired.quarantined![0]!.location, "d.json"), "utf8")).toBe(text.slice(0, text.length / 2));
    warnings.length = 0;
    // Version 2 was acknowledged before the damage: the restored value comes back as version 3.
    const restored = await value(store.docs.get(["d"]));
    expect(restored).toMatchObject({ value: { n: 1 }, version: 3 });
    expect(restored?.recovered).toBeUndefined();
    expect(warnings).toEqual([]);
    expect(await failure(store.docs.put(["d"], { n: 9 }, { expectedVersion: 2 }))).toMatchObject({ code: "conflict" });
    expect((await value(store.check())).ok).toBe(true);
  });

  it("continues a write over a served backup above every version ever acknowledged, keeping the damaged bytes", async () => {
    const dir = tempDir();
    const { store, warnings } = open(dir);
    await value(store.docs.put(["d"], { n: 1 }, { create: true }));
    await value(store.docs.put(["d"], { n: 2 }, { expectedVersion: 1 }));
    const file = path.join(dir, "d.json");
    const damaged = readFileSync(file, "utf8").replace('"n": 2', '"n": 3');
    writeFileSync(file, damaged);
    const served = await value(store.docs.get(["d"]));
    expect(served).toMatchObject({ value: { n: 1 }, version: 1, recovered: { from: "backup" } });
    // A CAS on the acknowledged version 2 is refused: the store serves version 1 now.
    expect(await failure(store.docs.put(["d"], { n: 5 }, { expectedVersion: 2 }))).toMatchObject({ code: "conflict" });
    const written = await value(store.docs.put(["d"], { n: 4 }, { expectedVersion: 1 }));
    expect(written.version).toBe(3);
    expect(JSON.parse(readFileSync(file, "utf8"))).toMatchObject({ version: 3, value: { n: 4 } });
    expect(JSON.parse(readFileSync(`${file}.bak`, "utf8"))).toMatchObject({ version: 3, value: { n: 4 } });
    expect(warnings.map((warning) => warning.type)).toEqual(["served-backup", "quarantined"]);
    const report = await value(store.check());
    expect(report.ok).toBe(true);
    expect(report.quarantined).toHaveLength(1);
    expect(readFileSync(path.join(report.quarantined![0]!.location, "d.json"), "utf8")).toBe(damaged);
    expect(await value(store.docs.get(["d"]))).toMatchObject({ value: { n: 4 }, version: 3 });
    // Damaged again right after the write over damage: the backup is the same version, nothing goes back.
    writeFileSync(file, "{");
    expect(await value(store.docs.get(["d"]))).toMatchObject({ value: { n: 4 }, version: 3 });
    expect(await value(store.docs.put(["d"], { n: 6 }, { expectedVersion: 3 }))).toMatchObject({ version: 5 });
  });

  it("answers corrupt with the location when a document and its backup are both damaged; repair quarantines it and the key is writable again", async () => {
    const dir = tempDir();
    const { store } = open(dir);
    await value(store.docs.put(["m", "d"], { n: 1 }, { create: true }));
    await value(store.docs.put(["m", "d"], { n: 2 }, { expectedVersion: 1 }));
    await value(store.docs.put(["m", "e"], { n: 1 }, { create: true }));
    const file = path.join(dir, "m", "d.json");
    writeFileSync(file, '{ "format": "keel.doc.v1", "key": ["m", "d"], "version": 2, "upda');
    writeFileSync(`${file}.bak`, "");
    for (const outcome of [
      store.docs.get(["m", "d"]),
      store.docs.put(["m", "d"], 3, { expectedVersion: 2 }),
      store.docs.put(["m", "d"], 3, { create: true }),
      store.docs.delete(["m", "d"], { expectedVersion: 2 }),
    ]) {
      const error = await failure(outcome as ResultAsync<unknown, KeelError>);
      expect(error.code).toBe("corrupt");
      expect(error.details.location).toBe(file);
    }
    // The listing fails closed per entry: the damaged key beside the good one.
    const page = await value(store.docs.list(["m"]));
    expect(page.items.map((item) => item.key)).toEqual([["m", "e"]]);
    expect(page.damaged).toEqual([expect.objectContaining({ key: ["m", "d"], location: file })]);
    const found = await value(store.check());
    expect(found.ok).toBe(false);
    expect(found.problems).toEqual([expect.objectContaining({ code: "corrupt", location: file })]);
    const report = await value(store.check({ repair: true }));
    expect(report.ok).toBe(true);
    expect(report.repaired).toEqual([expect.objectContaining({ action: "quarantined", location: file })]);
    expect(report.quarantined).toEqual([expect.objectContaining({ key: ["m", "d"], from: file })]);
    expect(readdirSync(report.quarantined![0]!.location).sort()).toEqual(["d.json", "d.json.bak", "reason.json"]);
    expect(await value(store.docs.get(["m", "d"]))).toBeUndefined();
    expect((await value(store.docs.list(["m"]))).damaged).toBeUndefined();
    // A tombstone above version 2 (what the damaged file still showed): the next write is version 4.
    expect(await value(store.docs.put(["m", "d"], 3, { create: true }))).toMatchObject({ version: 4 });
  });

  it("lets an unconditional put or delete replace a document damaged beyond its backup, keeping the damaged bytes in quarantine", async () => {
    const dir = tempDir();
    const { store, warnings } = open(dir);
    for (const [name, write] of [
      ["p", (key: string[]) => store.docs.put(key, { fresh: true }, { unconditional: true })],
      ["q", (key: string[]) => store.docs.delete(key, { unconditional: true })],
    ] as const) {
      const key = ["m", name];
      await value(store.docs.put(key, 1, { create: true }));
      await value(store.docs.put(key, 2, { expectedVersion: 1 }));
      const file = path.join(dir, "m", `${name}.json`);
      writeFileSync(file, "garbage");
      writeFileSync(`${file}.bak`, "more garbage");
      await value(write(key) as ResultAsync<unknown, KeelError>);
      expect(warnings.at(-1)).toMatchObject({ type: "quarantined", location: file });
    }
    // Nothing of the damaged files shows a version: the new one jumps above any count of writes (the epoch-ms time).
    const replaced = await value(store.docs.get(["m", "p"]));
    expect(replaced).toMatchObject({ value: { fresh: true } });
    expect(replaced!.version).toBeGreaterThan(Date.now() - 60_000);
    expect(await value(store.docs.get(["m", "q"]))).toBeUndefined();
    const report = await value(store.check());
    expect(report.ok).toBe(true);
    expect(report.quarantined?.map((entry) => entry.key)).toEqual([["m", "p"], ["m", "q"]]);
    expect(readFileSync(path.join(report.quarantined![0]!.location, "p.json"), "utf8")).toBe("garbage");
  });

  it("reads what another instance wrote, never a remembered older version, and gives each caller its own value", async () => {
    const dir = tempDir();
    const left = open(dir).store;
    const right = open(dir).store;
    await value(left.docs.put(["d"], { n: 1, list: [1] }, { create: true }));
    const first = await value(right.docs.get(["d"]));
    (first!.value as { list: number[] }).list.push(2);
    expect(await value(right.docs.get(["d"]))).toMatchObject({ version: 1, value: { n: 1, list: [1] } });
    await value(left.docs.put(["d"], { n: 2, list: [] }, { expectedVersion: 1 }));
    expect(await value(right.docs.get(["d"]))).toMatchObject({ version: 2, value: { n: 2, list: [] } });
    expect(await value(right.docs.put(["d"], { n: 3 }, { expectedVersion: 2 }))).toMatchObject({ version: 3 });
    expect(await value(left.docs.get(["d"]))).toMatchObject({ version: 3, value: { n: 3 } });
  });

  it("serves the backup when the file itself is gone", async () => {
    const dir = tempDir();
    const { store, warnings } = open(dir);
    await value(store.docs.put(["d"], 1, { create: true }));
    await value(store.docs.put(["d"], 2, { expectedVersion: 1 }));
    rmSync(path.join(dir, "d.json"));
    expect(await value(store.docs.get(["d"]))).toMatchObject({ value: 1, version: 1 });
    expect(warnings[0]?.type).toBe("served-backup");
  });

  it("removes leftover temporary files of dead writers in check({ repair: true }) and keeps live ones", async () => {
    const dir = tempDir();
    const { store } = open(dir);
    await value(store.docs.put(["m", "d"], 1, { create: true }));
    const leftover = path.join(dir, "m", `.d.json.${deadPid()}.1abc.tmp`);
    const live = path.join(dir, "m", `.d.json.${process.pid}.2abc.tmp`);
    writeFileSync(leftover, "half a docu");
    writeFileSync(live, "in flight");
    const report = await value(store.check());
    expect(report.problems).toEqual([expect.objectContaining({ code: "orphan", location: leftover })]);
    const repaired = await value(store.check({ repair: true }));
    expect(repaired.repaired).toEqual([expect.objectContaining({ action: "removed-tmp", location: leftover })]);
    expect(existsSync(leftover)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect((await value(store.docs.list([]))).items.map((item) => item.key)).toEqual([["m", "d"]]);
  });
});

describe("logs on disk", () => {
  const logFile = (dir: string) => path.join(dir, "runs", "r1.jsonl");

  it("stores a log as JSONL: a header, then one line per record with seq, id, at, value and a crc", async () => {
    const dir = tempDir();
    const { store } = open(dir);
    await value(store.logs.append(["runs", "r1"], [{ id: "a", value: { n: 1 } }, { id: "b", value: "two" }]));
    const lines = readFileSync(logFile(dir), "utf8").trimEnd().split("\n").map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ format: "keel.log.v1", baseSeq: 0, deleted: false });
    expect(lines.slice(1)).toEqual([
      { seq: 1, id: "a", at: expect.any(String), value: { n: 1 }, crc: expect.stringMatching(/^[0-9a-f]{8}$/) },
      { seq: 2, id: "b", at: expect.any(String), end: true, value: "two", crc: expect.stringMatching(/^[0-9a-f]{8}$/) },
    ]);
  });

  it("ignores a torn tail on read, cuts it before the next append, and the next append is its own line", async () => {
    const dir = tempDir();
    const { store, warnings } = open(dir);
    await value(store.logs.append(["runs", "r1"], [{ id: "a", value: 1 }, { id: "b", value: 2 }]));
    const torn = encodeRecordLine(3, "c", new Date().toISOString(), '{"half":"writ', true).slice(0, 40);
    appendFileSync(logFile(dir), torn);
    expect((await value(store.logs.read(["runs", "r1"]))).map((record) => record.id)).toEqual(["a", "b"]);
    expect(await value(store.logs.head(["runs", "r1"]))).toEqual({ lastSeq: 2 });
    expect(await value(store.logs.append(["runs", "r1"], [{ id: "c", value: 3 }]))).toEqual({ lastSeq: 3, appended: 1, deduplicated: 0 });
    expect(warnings.map((warning) => warning.type)).toEqual(["truncated-tail"]);
    const lines = readFileSync(logFile(dir), "utf8").split("\n");
    expect(lines.at(-1)).toBe("");
    expect(lines.slice(0, -1).every((line) => JSON.parse(line))).toBeTruthy();
    expect((await value(store.logs.read(["runs", "r1"]))).map((record) => [record.seq, record.id])).toEqual([
      [1, "a"],
      [2, "b"],
      [3, "c"],
    ]);
  });

  it("treats complete lines of a batch without its end line as torn: an append is all-or-nothing", async () => {
    const dir = tempDir();
    const { store } = open(dir);
    await value(store.logs.append(["runs", "r1"], [{ id: "a", value: 1 }]));
    const at = new Date().toISOString();
    appendFileSync(logFile(dir), encodeRecordLine(2, "b", at, "2", false) + encodeRecordLine(3, "c", at, "3", false));
    expect((await value(store.logs.read(["runs", "r1"]))).map((record) => record.id)).toEqual(["a"]);
    const report = await value(store.check());
    expect(report.problems).toEqual([expect.objectContaining({ code: "corrupt", location: expect.stringMatching(/r1\.jsonl:\d+$/) })]);
    const repaired = await value(store.check({ repair: true }));
    expect(repaired.repaired.map((repair) => repair.action)).toEqual(["truncated-tail"]);
    expect(repaired.ok).toBe(true);
    expect(await value(store.logs.append(["runs", "r1"], [{ id: "b", value: "again" }]))).toEqual({ lastSeq: 2, appended: 1, deduplicated: 0 });
  });

  it("reports damage in the middle as corrupt with the byte offset, never a skipped line", async () => {
    const dir = tempDir();
    const { store } = open(dir);
    for (const id of ["a", "b", "c"]) await value(store.logs.append(["runs", "r1"], [{ id, value: { id } }]));
    const text = readFileSync(logFile(dir), "utf8");
    const offset = Buffer.byteLength(text.split("\n").slice(0, 2).join("\n")) + 1;
    writeFileSync(logFile(dir), text.replace('"value":{"id":"b"}', '"value":{"id":"B"}'));
    // Every read verifies the lines it returns; a store that opens the file scans it whole
    // (this one trusts the index it built, refreshed by appends, until check() rescans).
    const reopened = open(dir).store;
    for (const outcome of [
      store.logs.read(["runs", "r1"]),
      reopened.logs.read(["runs", "r1"], { afterSeq: 2 }),
      reopened.logs.head(["runs", "r1"]),
      reopened.logs.append(["runs", "r1"], [{ id: "d", value: 1 }]),
    ]) {
      const error = await failure(outcome as ResultAsync<unknown, KeelError>);
      expect(error.code).toBe("corrupt");
      expect(error.details).toMatchObject({ location: logFile(dir), offset });
    }
    const report = await value(store.check({ repair: true }));
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([expect.objectContaining({ code: "corrupt", location: `${logFile(dir)}:${offset}` })]);
  });

  it("sees appends made through another instance and dedupes against them", async () => {
    const dir = tempDir();
    const left = open(dir).store;
    const right = open(dir).store;
    await value(left.logs.append(["l"], [{ id: "x", value: { n: 1 } }]));
    expect(await value(right.logs.head(["l"]))).toEqual({ lastSeq: 1 });
    expect(await value(right.logs.append(["l"], [{ id: "x", value: { n: 1 } }, { id: "y", value: 2 }]))).toEqual({ lastSeq: 2, appended: 1, deduplicated: 1 });
    expect((await failure(right.logs.append(["l"], [{ id: "x", value: "other" }]))).code).toBe("conflict");
    expect(await value(left.logs.append(["l"], [{ id: "y", value: 2 }, { id: "z", value: 3 }]))).toEqual({ lastSeq: 3, appended: 1, deduplicated: 1 });
    expect((await value(right.logs.read(["l"], { afterSeq: 1 }))).map((record) => record.id)).toEqual(["y", "z"]);
    expect(await value(left.logs.delete(["l"]))).toBe(true);
    expect(await value(right.logs.head(["l"]))).toBeUndefined();
    expect(await value(right.logs.append(["l"], [{ id: "x", value: "reborn" }]))).toEqual({ lastSeq: 4, appended: 1, deduplicated: 0 });
    expect((await value(left.logs.read(["l"]))).map((record) => [record.seq, record.value])).toEqual([[4, "reborn"]]);
  });

  it("compares a re-appended id with its line read back and verified: damage there is corrupt for that caller only", async () => {
    const dir = tempDir();
    const { store } = open(dir);
    await value(store.logs.append(["runs", "r1"], [{ id: "a", value: "first" }, { id: "b", value: 2 }]));
    expect(await value(store.logs.append(["runs", "r1"], [{ id: "a", value: "first" }]))).toEqual({ lastSeq: 2, appended: 0, deduplicated: 1 });
    // Damage the stored line of "a" after this instance indexed it (same length, so the index is kept).
    writeFileSync(logFile(dir), readFileSync(logFile(dir), "utf8").replace('"first"', '"fir5t"'));
    const [again, fresh] = await Promise.all([
      store.logs.append(["runs", "r1"], [{ id: "a", value: "first" }]),
      store.logs.append(["runs", "r1"], [{ id: "c", value: 3 }]),
    ]);
    expect(again.isErr() && again.error.code).toBe("corrupt");
    expect(again.isErr() && again.error.details).toMatchObject({ location: logFile(dir) });
    expect(fresh.isOk() && fresh.value).toEqual({ lastSeq: 3, appended: 1, deduplicated: 0 });
  });

  it("replaces a deleted log's file with a tombstone header that keeps the last seq", async () => {
    const dir = tempDir();
    const { store } = open(dir);
    await value(store.logs.append(["runs", "r1"], [{ id: "a", value: 1 }, { id: "b", value: 2 }]));
    await value(store.logs.delete(["runs", "r1"]));
    const lines = readFileSync(logFile(dir), "utf8").trimEnd().split("\n").map((line) => JSON.parse(line));
    expect(lines).toEqual([expect.objectContaining({ format: "keel.log.v1", baseSeq: 2, deleted: true, end: true })]);
    expect(await value(store.logs.list([]))).toEqual([]);
    // An empty batch does not bring the deleted log back; the next record continues above its last seq.
    expect(await value(store.logs.append(["runs", "r1"], [], { expectedSeq: 0 }))).toEqual({ lastSeq: 0, appended: 0, deduplicated: 0 });
    expect(await value(store.logs.head(["runs", "r1"]))).toBeUndefined();
    expect(await value(store.logs.list(["runs"]))).toEqual([]);
    expect(await value(store.logs.append(["runs", "r1"], [{ id: "c", value: 3 }], { expectedSeq: 0 }))).toEqual({ lastSeq: 3, appended: 1, deduplicated: 0 });
    expect(await value(store.logs.list(["runs"]))).toEqual([["runs", "r1"]]);
  });
});

describe("leases on disk", () => {
  it("keeps each lease as one entry naming its state in _keel/leases/<name>/, durable across instances, and fails closed on damage", async () => {
    const dir = tempDir();
    const first = open(dir).store;
    const lease = await value(first.leases.acquire("mission.m1", "alice", { ttlMs: 60_000 }));
    await value(first.leases.release(lease));
    await first.close();
    const second = open(dir).store;
    const next = await value(second.leases.acquire("mission.m1", "bob", { ttlMs: 60_000 }));
    expect(next.token).toBe(lease.token + 1);
    const directory = path.join(dir, "_keel", "leases", "mission.m1");
    expect(readdirSync(directory)).toEqual([`${next.token}.${next.expiresAt}.${Buffer.from("bob").toString("base64url")}`]);
    // A second entry is damage (the listing is read again first: a rename seen half-way is not).
    writeFileSync(path.join(directory, `${next.token}.${next.expiresAt}.ZXZl`), "");
    const third = open(dir).store;
    expect((await failure(third.leases.current("mission.m1"))).code).toBe("corrupt");
    expect((await failure(third.docs.put(["d"], 1, { create: true, fence: { lease: "mission.m1", token: next.token } }))).code).toBe("corrupt");
    expect((await value(third.check())).problems).toEqual([expect.objectContaining({ code: "corrupt", location: directory })]);
  });
});

describe("options", () => {
  it("throws invalid_input at once for bad options", () => {
    const dir = tempDir();
    for (const options of [{}, { dir: "" }, { dir, lockStaleMs: 5 }, { dir, maxValueBytes: -1 }, { dir, extra: 1 }, { dir, clock: {} }, { dir, onWarning: 1 }]) {
      expect(() => createFsStore(options as FsStoreOptions), JSON.stringify(options)).toThrow(expect.objectContaining({ code: "invalid_input" }));
    }
  });

  it("throws io_failed at once when dir is a file, and unsupported for a newer layout", () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, "plain"), "x");
    expect(() => createFsStore({ dir: path.join(dir, "plain") })).toThrow(expect.objectContaining({ code: "io_failed" }));
    expect(() => createFsStore({ dir: path.join(dir, "plain", "below") })).toThrow(expect.objectContaining({ code: "io_failed" }));
    const newer = path.join(dir, "newer");
    createFsStore({ dir: newer });
    writeFileSync(path.join(newer, "_keel", "store.json"), JSON.stringify({ format: "keel.fs-store", version: 99 }));
    expect(() => createFsStore({ dir: newer })).toThrow(expect.objectContaining({ code: "unsupported" }));
  });

  it("rejects bad check options and uses maxValueBytes", async () => {
    const dir = tempDir();
    const { store } = open(dir, { maxValueBytes: 64 });
    expect(store.capabilities).toEqual({ scope: "host", durability: "fsync", maxValueBytes: 64, bufferedAppends: true });
    expect((await failure(store.check({ repair: "yes" } as never))).code).toBe("invalid_input");
    expect((await failure(store.docs.put(["d"], "x".repeat(80), { create: true }))).code).toBe("too_large");
    expect(existsSync(path.join(dir, "d.json"))).toBe(false);
    expect(statSync(dir).isDirectory()).toBe(true);
  });
});
