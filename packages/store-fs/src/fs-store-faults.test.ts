import { readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { KeelError } from "@keel/core";
import type { ResultAsync } from "neverthrow";
import { describe, expect, it } from "vitest";
import { createFsStore } from "./index.js";
import { nodeFsIo, type FsIo } from "./internal/fs-io.js";
import { openFsStore } from "./internal/open-fs-store.js";
import { errOf as failure, okValue as value, useTempDirs } from "@keel/testkit";

type Call = keyof FsIo;
/** Decides, for each call, whether it fails and with which errno (or does something else by itself). */
type Rule = (call: Call, args: unknown[]) => string | undefined;

/**
 * Wraps the real file system so that calls chosen by `rule` fail with an errno, calls in
 * `overrides` behave differently (e.g. short writes), and calls are counted.
 */
function faultyIo(rule: Rule, overrides: Partial<FsIo>): FsIo & { count(call: Call): number } {
  const counts = new Map<Call, number>();
  const io = {} as Record<Call, unknown>;
  for (const call of Object.keys(nodeFsIo) as Call[]) {
    io[call] = (...args: unknown[]) => {
      const real = (overrides[call] ?? nodeFsIo[call]) as (...args: unknown[]) => unknown;
      counts.set(call, (counts.get(call) ?? 0) + 1);
      const errno = rule(call, args);
      if (errno) {
        const error = Object.assign(new Error(`${errno}: injected fault in ${call}`), { code: errno, path: typeof args[0] === "string" ? args[0] : undefined });
        if (call === "fsync" || call === "fdatasync") return Promise.reject(error);
        throw error;
      }
      return real(...args);
    };
  }
  return Object.assign(io as unknown as FsIo, { count: (call: Call) => counts.get(call) ?? 0 });
}

const dirs = useTempDirs("keel-fs-faults-");

function setup(rule: Rule) {
  const dir = dirs.dir();
  let armed = false;
  const overrides: Partial<FsIo> = {};
  const io = faultyIo((call, args) => (armed ? rule(call, args) : undefined), overrides);
  const store = dirs.track(openFsStore({ dir }, io));
  return { dir, io, store, overrides, arm: (on = true) => void (armed = on) };
}

function leftovers(dir: string): string[] {
  const out: string[] = [];
  const walk = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      if (entry.name.startsWith(".init.")) out.push(entry.name);
      if (entry.isDirectory()) walk(path.join(current, entry.name));
      else if (entry.name.endsWith(".tmp") || entry.name.startsWith("held.")) out.push(entry.name);
    }
  };
  walk(dir);
  return out;
}

describe("document writes under I/O faults", () => {
  const cases: [string, Rule][] = [
    ["ENOSPC writing the staging file", (call) => (call === "writeSync" ? "ENOSPC" : undefined)],
    ["EIO from the staging file's fsync", (call) => (call === "fsync" ? "EIO" : undefined)],
    ["EROFS on the rename into place", (call, args) => (call === "renameSync" && String(args[1]).endsWith(".json") ? "EROFS" : undefined)],
    ["EACCES creating the staging file", (call, args) => (call === "openSync" && String(args[0]).endsWith(".tmp") ? "EACCES" : undefined)],
    ["EDQUOT linking the backup", (call) => (call === "linkSync" ? "EDQUOT" : undefined)],
  ];
  for (const [name, rule] of cases) {
    it(`answers io_failed and leaves the old version whole: ${name}`, async () => {
      const { dir, store, arm } = setup(rule);
      await value(store.docs.put(["m", "d"], { n: 1 }, { create: true }));
      await value(store.docs.put(["m", "d"], { n: 2 }, { expectedVersion: 1 }));
      arm();
      const error = await failure(store.docs.put(["m", "d"], { n: 3 }, { expectedVersion: 2 }));
      expect(error.code).toBe("io_failed");
      expect(error.retryable).toBe(false);
      arm(false);
      expect(await value(store.docs.get(["m", "d"]))).toMatchObject({ value: { n: 2 }, version: 2 });
      expect(leftovers(dir)).toEqual([]);
      expect((await value(store.check())).ok).toBe(true);
      expect(await value(store.docs.put(["m", "d"], { n: 3 }, { expectedVersion: 2 }))).toMatchObject({ version: 3 });
    });
  }

  it("fsyncs the staging file before renaming it into place, and the directory after (what a power loss needs)", async () => {
    const { dir, store, overrides } = setup(() => undefined);
    await value(store.docs.put(["m", "d"], { n: 1 }, { create: true }));
    const opened = new Map<number, string>();
    const calls: string[] = [];
    const relative = (file: string) => path.relative(dir, file).replace(/\.[^/]*\.tmp$/, ".<staging>");
    overrides.openSync = (file, flags, mode) => {
      const fd = nodeFsIo.openSync(file, flags, mode);
      opened.set(fd, file);
      return fd;
    };
    const logged = (sync: (fd: number) => Promise<void>) => (fd: number) => {
      calls.push(`fsync ${relative(opened.get(fd) ?? "?")}`);
      return sync(fd);
    };
    overrides.fsync = logged(nodeFsIo.fsync);
    overrides.fdatasync = logged(nodeFsIo.fdatasync);
    overrides.renameSync = (from, to) => {
      calls.push(`rename ${relative(from)} -> ${relative(to)}`);
      nodeFsIo.renameSync(from, to);
    };
    await value(store.docs.put(["m", "d"], { n: 2 }, { expectedVersion: 1 }));
    const into = calls.indexOf("rename m/.<staging> -> m/d.json");
    expect(into).toBeGreaterThan(-1);
    expect(calls.slice(0, into)).toContain("fsync m/.<staging>");
    expect(calls.slice(into + 1)).toContain("fsync m");
    expect(await value(store.docs.get(["m", "d"]))).toMatchObject({ value: { n: 2 }, version: 2 });
  });

  it("answers unavailable (retryable) for a transient EMFILE", async () => {
    const { store, arm } = setup((call) => (call === "openSync" || call === "openFileSync" || call === "readFileSync" ? "EMFILE" : undefined));
    arm();
    for (const outcome of [store.docs.put(["d"], 1, { create: true }), store.docs.get(["d"]), store.logs.read(["l"])]) {
      const error = await failure(outcome as ResultAsync<unknown, KeelError>);
      expect(error.code).toBe("unavailable");
      expect(error.retryable).toBe(true);
    }
    arm(false);
    expect(await value(store.docs.get(["d"]))).toBeUndefined();
  });

  it("answers io_failed where a plain file sits in place of a key directory, and other keys still work", async () => {
    const dir = dirs.dir();
    const store = dirs.track(createFsStore({ dir }));
    writeFileSync(path.join(dir, "missions"), "not a directory");
    for (const outcome of [
      store.docs.put(["missions", "m1"], 1, { create: true }),
      store.docs.get(["missions", "m1"]),
      store.logs.append(["missions", "log"], [{ id: "a", value: 1 }]),
    ]) {
      expect((await failure(outcome as ResultAsync<unknown, KeelError>)).code).toBe("io_failed");
    }
    await value(store.docs.put(["other"], 1, { create: true }));
    expect(readFileSync(path.join(dir, "missions"), "utf8")).toBe("not a directory");
    expect(leftovers(dir)).toEqual([]);
  });
});

describe("log appends under I/O faults", () => {
  it("cuts a partly written batch back and answers io_failed when the disk fills mid-write", async () => {
    let budget = 0;
    const { dir, store, arm, overrides } = setup((call) => {
      if (call !== "writeSync") return undefined;
      budget -= 1;
      return budget < 0 ? "ENOSPC" : undefined;
    });
    await value(store.logs.append(["l"], [{ id: "a", value: 1 }]));
    const file = path.join(dir, "l.jsonl");
    const size = statSync(file).size;
    // The first write call stores 40 bytes, the second fails: a torn batch on disk, then cut back.
    overrides.writeSync = (fd, buffer, offset, length, position) => nodeFsIo.writeSync(fd, buffer, offset, Math.min(length, 40), position);
    budget = 1;
    arm();
    expect((await failure(store.logs.append(["l"], [{ id: "b", value: "x".repeat(200) }]))).code).toBe("io_failed");
    arm(false);
    delete overrides.writeSync;
    expect(statSync(file).size).toBe(size);
    expect((await value(store.logs.read(["l"]))).map((record) => record.id)).toEqual(["a"]);
    expect(await value(store.logs.append(["l"], [{ id: "b", value: 2 }]))).toEqual({ lastSeq: 2, appended: 1, deduplicated: 0 });
    expect((await value(store.check())).ok).toBe(true);
  });

  it("answers io_failed when fdatasync fails, and the unacknowledged batch is gone", async () => {
    const { dir, store, arm } = setup((call) => (call === "fdatasync" ? "EIO" : undefined));
    await value(store.logs.append(["l"], [{ id: "a", value: 1 }]));
    const size = statSync(path.join(dir, "l.jsonl")).size;
    arm();
    const outcomes = await Promise.all([store.logs.append(["l"], [{ id: "b", value: 2 }]), store.logs.append(["l"], [{ id: "c", value: 3 }])]);
    arm(false);
    expect(outcomes.map((outcome) => outcome.isErr() && outcome.error.code)).toEqual(["io_failed", "io_failed"]);
    expect(statSync(path.join(dir, "l.jsonl")).size).toBe(size);
    expect((await value(store.logs.read(["l"]))).map((record) => record.id)).toEqual(["a"]);
    expect(await value(store.logs.append(["l"], [{ id: "b", value: 2 }]))).toEqual({ lastSeq: 2, appended: 1, deduplicated: 0 });
  });

  it("survives short writes: every byte is written, in order", async () => {
    const { store, io, overrides } = setup(() => undefined);
    overrides.writeSync = (fd, buffer, offset, length, position) => nodeFsIo.writeSync(fd, buffer, offset, Math.min(length, 7), position);
    await value(store.docs.put(["d"], { text: "é".repeat(100) }, { create: true }));
    await value(store.logs.append(["l"], [{ id: "a", value: "ü".repeat(50) }, { id: "b", value: 2 }]));
    expect(io.count("writeSync")).toBeGreaterThan(20);
    expect((await value(store.docs.get(["d"])))?.value).toEqual({ text: "é".repeat(100) });
    expect((await value(store.logs.read(["l"]))).map((record) => record.value)).toEqual(["ü".repeat(50), 2]);
  });
});

describe("group commit", () => {
  it("serves many concurrent appends to one log with a few fdatasyncs, each caller's records contiguous", async () => {
    const { store, io } = setup(() => undefined);
    await value(store.logs.append(["l"], [{ id: "first", value: 0 }]));
    const before = io.count("fdatasync");
    const results = await Promise.all(
      Array.from({ length: 64 }, (_, caller) => value(store.logs.append(["l"], Array.from({ length: 3 }, (_, index) => ({ id: `${caller}-${index}`, value: { caller, index } }))))),
    );
    expect(io.count("fdatasync") - before).toBeLessThanOrEqual(2);
    expect(results.every((result) => result.appended === 3)).toBe(true);
    const records = await value(store.logs.read(["l"], { afterSeq: 1 }));
    expect(records.map((record) => record.seq)).toEqual(Array.from({ length: 192 }, (_, index) => index + 2));
    for (let start = 0; start < 192; start += 3) {
      const caller = (records[start]!.value as { caller: number }).caller;
      expect(records.slice(start, start + 3).map((record) => record.value)).toEqual([0, 1, 2].map((index) => ({ caller, index })));
    }
  });

  it("gives each caller of one group its own outcome", async () => {
    const { store } = setup(() => undefined);
    await value(store.logs.append(["l"], [{ id: "x", value: 1 }]));
    const [ok, conflict, stale, deduplicated] = await Promise.all([
      store.logs.append(["l"], [{ id: "a", value: 1 }]),
      store.logs.append(["l"], [{ id: "x", value: "different" }]),
      store.logs.append(["l"], [{ id: "b", value: 1 }], { expectedSeq: 1 }),
      store.logs.append(["l"], [{ id: "a", value: 1 }]),
    ]);
    expect(ok.isOk() && ok.value).toEqual({ lastSeq: 2, appended: 1, deduplicated: 0 });
    expect(conflict.isErr() && conflict.error.code).toBe("conflict");
    expect(stale.isErr() && stale.error.code).toBe("conflict");
    expect(deduplicated.isOk() && deduplicated.value).toEqual({ lastSeq: 2, appended: 0, deduplicated: 1 });
  });

  it("keeps call order between appends and a delete of the same log", async () => {
    const { store } = setup(() => undefined);
    const outcomes = await Promise.all([
      store.logs.append(["l"], [{ id: "a", value: 1 }]),
      store.logs.delete(["l"]),
      store.logs.append(["l"], [{ id: "b", value: 2 }]),
    ]);
    expect(outcomes.every((outcome) => outcome.isOk())).toBe(true);
    expect((await value(store.logs.read(["l"]))).map((record) => [record.seq, record.id])).toEqual([[2, "b"]]);
  });
});
