/**
 * The filesystem store stays inside its directory: an entry planted inside the store root — a
 * symbolic link (to a file, to a directory, dangling, to /dev/zero) or a FIFO — at each place
 * where the store keeps a file or a directory is never followed or opened. Real files: a decoy
 * directory outside the root (another store, with data under the same keys) stays byte for byte
 * the same, no call of the store's file-system seam that reads or writes goes through the planted
 * entry, every call answers (`corrupt` where it needs the entry, a result otherwise: never a
 * hang, never a throw), `check()` reports the entry, and `check({ repair: true })` moves it into
 * quarantine, after which the key (or lease) works again.
 */
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { KeelError } from "@keel/core";
import type { KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import type { ResultAsync } from "neverthrow";
import { describe, expect, it } from "vitest";
import { useTempDirs } from "@keel/testkit";
import { nodeFsIo, type FsIo } from "../packages/store-fs/src/internal/fs-io.js";
import { storePaths } from "../packages/store-fs/src/internal/fs-paths.js";
import { openFsStore } from "../packages/store-fs/src/internal/open-fs-store.js";

const dirs = useTempDirs("keel-contain-");

/** The calls of the store's file-system seam that read or write (metadata-only `lstat`/`stat` are left out), with their paths. */
const CONTENT_CALLS = new Set(["openSync", "readFileSync", "readdirSync", "renameSync", "linkSync", "unlinkSync", "mkdirSync", "rmdirSync"]);

/** Wraps the real file system, recording the paths given to each call that reads or writes. */
function spyIo(): { io: FsIo; paths: string[] } {
  const paths: string[] = [];
  const io = { ...nodeFsIo } as Record<string, unknown>;
  for (const [call, real] of Object.entries(nodeFsIo)) {
    if (!CONTENT_CALLS.has(call)) continue;
    io[call] = (...args: unknown[]) => {
      for (const arg of args.slice(0, 2)) if (typeof arg === "string") paths.push(arg);
      return (real as (...args: unknown[]) => unknown)(...args);
    };
  }
  return { io: io as unknown as FsIo, paths };
}

/** A digest of a directory tree: every entry's path, type, link target and file bytes (FIFOs and devices are never opened). */
function treeDigest(root: string): string {
  const hash = createHash("sha256");
  const walk = (directory: string) => {
    for (const name of readdirSync(directory).sort()) {
      const full = path.join(directory, name);
      const stat = lstatSync(full);
      hash.update(`${path.relative(root, full)}\0${stat.mode}\0${stat.size}\0`);
      if (stat.isSymbolicLink()) hash.update(readlinkSync(full));
      else if (stat.isFile()) hash.update(readFileSync(full));
      else if (stat.isDirectory()) walk(full);
    }
  };
  walk(root);
  return hash.digest("hex");
}

/** Settles a call within 5 s (a hang fails the test) without ever throwing: its Result. */
async function settle(call: () => ResultAsync<unknown, KeelError>): Promise<{ ok: true; value: unknown } | { ok: false; code: string }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error("the call did not answer within 5 s")), 5_000);
  });
  try {
    const result = await Promise.race([call(), hang]);
    return result.isOk() ? { ok: true, value: result.value } : { ok: false, code: result.error.code };
  } finally {
    clearTimeout(timer);
  }
}

const DECOY_SECRET = { secret: "the decoy store's data" };

/** The decoy: another store outside the root, with data under the same keys, a plain file and a directory holding a `free` entry. */
async function makeDecoy(): Promise<string> {
  const outside = dirs.dir();
  const other = createFsStore({ dir: path.join(outside, "other") });
  (await other.docs.put(["k", "d"], DECOY_SECRET, { create: true }))._unsafeUnwrap();
  (await other.docs.put(["k", "d"], DECOY_SECRET, { expectedVersion: 1 }))._unsafeUnwrap();
  (await other.logs.append(["lg", "y"], [{ id: "decoy", value: DECOY_SECRET }]))._unsafeUnwrap();
  (await other.leases.acquire("l", "decoy", { ttlMs: 60_000 }))._unsafeUnwrap();
  await other.close();
  writeFileSync(path.join(outside, "plain.txt"), "decoy bytes\n");
  mkdirSync(path.join(outside, "dir"));
  writeFileSync(path.join(outside, "dir", "free"), "");
  return outside;
}

type Kind = "a link to a file" | "a link to a directory" | "a dangling link" | "a link to /dev/zero" | "a FIFO";
const KINDS: Kind[] = ["a link to a file", "a link to a directory", "a dangling link", "a link to /dev/zero", "a FIFO"];

/** Replaces whatever is at `location` by an entry of `kind`. */
function plant(location: string, kind: Kind, targets: { file: string; directory: string; outside: string }): void {
  rmSync(location, { recursive: true, force: true });
  mkdirSync(path.dirname(location), { recursive: true });
  if (kind === "a link to a file") symlinkSync(targets.file, location);
  else if (kind === "a link to a directory") symlinkSync(targets.directory, location);
  else if (kind === "a dangling link") symlinkSync(path.join(targets.outside, "missing"), location);
  else if (kind === "a link to /dev/zero") symlinkSync("/dev/zero", location);
  else execFileSync("mkfifo", [location]);
}

const bigRecords = Array.from({ length: 300 }, (_, index) => ({ id: `big-${index}`, value: { text: "x".repeat(1000) } }));

interface Place {
  name: string;
  /** Puts the store in the state where the place exists; returns the path to plant at. */
  prepare(store: KeelStore, root: string): Promise<string>;
  /** The calls that use the place (on `store`, or a fresh store of the same root from `fresh()`). */
  calls(store: KeelStore, fresh: () => KeelStore): (() => ResultAsync<unknown, KeelError>)[];
  /** True: the calls answer `corrupt` while the entry is there; false: they work (the store never opens the entry). */
  refused: boolean;
  /** True: check({ repair: true }) moves it aside; false: reported and left (a lease entry: its name is the lease's state). */
  repaired: boolean;
  /**
   * Where `check()` finds the entry after the calls, when not where it was planted: a lease
   * entry is renamed by each change (the link itself, never followed); `undefined` when the calls
   * replaced it by the store's own file (an id sidecar is rewritten by a rename over the link).
   */
  foundAt?: (location: string) => string | undefined;
  /** The decoy entries links point at (default: the decoy store's document and its directory). */
  file?: string;
  directory?: string;
}

const twoPuts = async (store: KeelStore) => {
  (await store.docs.put(["k", "d"], 1, { create: true }))._unsafeUnwrap();
  (await store.docs.put(["k", "d"], 2, { expectedVersion: 1 }))._unsafeUnwrap();
};
const docCalls = (store: KeelStore) => [() => store.docs.get(["k", "d"]), () => store.docs.put(["k", "d"], 3, { unconditional: true })];
/** A read takes no lock: only a write uses the lock directories. */
const putCalls = (store: KeelStore) => [() => store.docs.put(["k", "d"], 3, { unconditional: true })];
const leaseCalls = (store: KeelStore) => [() => store.leases.current("l"), () => store.leases.acquire("l", "me", { ttlMs: 60_000 })];
const bigLogCalls = (_store: KeelStore, fresh: () => KeelStore) => {
  const store = fresh();
  return [() => store.logs.append(["big"], [{ id: "after", value: 1 }]), () => store.logs.read(["big"], { afterSeq: 295 })];
};

const places: Place[] = [
  { name: "a document file", refused: true, repaired: true, prepare: async (store, root) => (await twoPuts(store), path.join(root, "k", "d.json")), calls: docCalls },
  {
    name: "a document's .bak (its file gone)",
    refused: true,
    repaired: true,
    prepare: async (store, root) => {
      await twoPuts(store);
      rmSync(path.join(root, "k", "d.json"));
      return path.join(root, "k", "d.json.bak");
    },
    calls: docCalls,
  },
  {
    name: "a log file",
    refused: true,
    repaired: true,
    file: "other/lg/y.jsonl",
    prepare: async (store, root) => {
      (await store.logs.append(["lg", "y"], [{ id: "mine", value: 1 }]))._unsafeUnwrap();
      return path.join(root, "lg", "y.jsonl");
    },
    calls: (store) => [() => store.logs.append(["lg", "y"], [{ id: "next", value: 2 }]), () => store.logs.read(["lg", "y"]), () => store.logs.head(["lg", "y"])],
  },
  {
    name: "a key directory",
    refused: true,
    repaired: true,
    directory: "other/lg",
    prepare: async (store, root) => {
      (await store.logs.append(["lg", "y"], [{ id: "mine", value: 1 }]))._unsafeUnwrap();
      return path.join(root, "lg");
    },
    calls: (store) => [
      () => store.logs.append(["lg", "y"], [{ id: "next", value: 2 }]),
      () => store.logs.read(["lg", "y"]),
      () => store.docs.put(["lg", "z"], 1, { create: true }),
      () => store.docs.list(["lg"]),
      () => store.logs.list(["lg"]),
    ],
  },
  {
    name: "a log's id sidecar (_keel/logidx/<hash>.idx)",
    refused: false,
    repaired: true,
    foundAt: (location) => (lstatSync(location, { throwIfNoEntry: false })?.isFile() ? undefined : location),
    prepare: async (store, root) => {
      (await store.logs.append(["big"], bigRecords))._unsafeUnwrap();
      const paths = storePaths(root);
      return paths.logSidecar(paths.logFile(["big"]));
    },
    calls: bigLogCalls,
  },
  {
    name: "a lock entry (_keel/locks/doc-<hash>/free)",
    refused: false,
    repaired: true,
    directory: "dir",
    prepare: async (store, root) => (await twoPuts(store), path.join(storePaths(root).lockDirectory("doc:k/d"), "free")),
    calls: docCalls,
  },
  {
    name: "a lease entry (_keel/leases/l/<state>)",
    refused: false,
    repaired: false,
    foundAt: (location) => path.join(path.dirname(location), readdirSync(path.dirname(location))[0]!),
    prepare: async (store, root) => {
      const lease = (await store.leases.acquire("l", "me", { ttlMs: 60_000 }))._unsafeUnwrap();
      (await store.leases.release(lease))._unsafeUnwrap();
      const directory = path.join(root, "_keel", "leases", "l");
      return path.join(directory, readdirSync(directory)[0]!);
    },
    calls: leaseCalls,
  },
  {
    name: "a lock directory (_keel/locks/doc-<hash>)",
    refused: true,
    repaired: true,
    directory: "dir",
    prepare: async (store, root) => (await twoPuts(store), storePaths(root).lockDirectory("doc:k/d")),
    calls: putCalls,
  },
  {
    name: "a lease directory (_keel/leases/l)",
    refused: true,
    repaired: true,
    directory: "other/_keel/leases/l",
    prepare: async (store, root) => {
      (await store.leases.acquire("l", "me", { ttlMs: 1 }))._unsafeUnwrap();
      return path.join(root, "_keel", "leases", "l");
    },
    calls: leaseCalls,
  },
  { name: "_keel/locks", refused: true, repaired: true, directory: "other/_keel/locks", prepare: async (store, root) => (await twoPuts(store), path.join(root, "_keel", "locks")), calls: putCalls },
  {
    name: "_keel/leases",
    refused: true,
    repaired: true,
    directory: "other/_keel/leases",
    prepare: async (store, root) => {
      (await store.leases.acquire("l", "me", { ttlMs: 1 }))._unsafeUnwrap();
      return path.join(root, "_keel", "leases");
    },
    calls: leaseCalls,
  },
  {
    name: "_keel/quarantine",
    refused: true,
    repaired: true,
    directory: "dir",
    prepare: async (_store, root) => {
      mkdirSync(path.join(root, "_keel", "quarantine"));
      writeFileSync(path.join(root, "q.json"), "damaged beyond its backup");
      return path.join(root, "_keel", "quarantine");
    },
    calls: (store) => [() => store.docs.put(["q"], 1, { unconditional: true })],
  },
  {
    name: "_keel/logidx",
    refused: false,
    repaired: true,
    directory: "dir",
    prepare: async (store, root) => {
      (await store.logs.append(["big"], bigRecords))._unsafeUnwrap();
      return path.join(root, "_keel", "logidx");
    },
    calls: bigLogCalls,
  },
  {
    name: "_keel itself",
    refused: true,
    repaired: true,
    directory: "other/_keel",
    prepare: async (store, root) => (await twoPuts(store), path.join(root, "_keel")),
    calls: (store) => [...putCalls(store), ...leaseCalls(store)],
  },
];

describe.each(places)("$name replaced by", (place) => {
  it.each(KINDS)("%s: never followed or opened; refused or harmless; reported; moved into quarantine", async (kind) => {
    const outside = await makeDecoy();
    const root = path.join(dirs.dir(), "store");
    const spy = spyIo();
    const open = () => {
      const store = openFsStore({ dir: root }, spy.io);
      dirs.track(store);
      return store;
    };
    const store = open();
    const location = await place.prepare(store, root);
    plant(location, kind, {
      file: path.join(outside, place.file ?? "other/k/d.json"),
      directory: path.join(outside, place.directory ?? "other/k"),
      outside,
    });
    const before = treeDigest(outside);
    spy.paths.length = 0;
    /** Nothing was read or written through the planted entry, and the decoy is unchanged. */
    const expectContained = () => {
      expect(spy.paths.filter((used) => used.startsWith(`${location}${path.sep}`) || !path.resolve(used).startsWith(root))).toEqual([]);
      expect(treeDigest(outside)).toBe(before);
    };

    for (const call of place.calls(store, open)) {
      const outcome = await settle(call);
      if (place.refused) expect(outcome).toEqual({ ok: false, code: "corrupt" });
      else expect(outcome).toMatchObject({ ok: true });
      // Never the decoy's data.
      expect(JSON.stringify(outcome)).not.toContain(DECOY_SECRET.secret);
    }
    expectContained();

    const report = await settle(() => store.check());
    expect(report.ok).toBe(true);
    const found = report.ok ? (report.value as { ok: boolean; problems: { location: string; code: string }[] }) : undefined;
    const foundAt = place.foundAt ? place.foundAt(location) : location;
    if (foundAt !== undefined) {
      expect(found?.ok).toBe(false);
      expect(found?.problems).toContainEqual(expect.objectContaining({ location: foundAt, code: kind === "a FIFO" ? "corrupt" : "link" }));
    }
    expectContained();

    const repair = await settle(() => store.check({ repair: true }));
    expect(repair.ok).toBe(true);
    const repaired = repair.ok ? (repair.value as { repaired: { location: string; action: string }[]; quarantined: { location: string }[] }) : undefined;
    // A repair moves the entry aside and may make a real directory at its place: only the decoy tells from here on.
    expect(treeDigest(outside)).toBe(before);
    if (place.repaired && foundAt !== undefined) {
      expect(repaired?.repaired).toContainEqual(expect.objectContaining({ location: foundAt, action: "quarantined" }));
      // The entry itself is in quarantine, of the same kind (a link stays a link, never copied through).
      const kept = repaired!.quarantined.map((entry) => lstatSync(path.join(entry.location, path.basename(foundAt)), { throwIfNoEntry: false }));
      expect(kept.some((stat) => (kind === "a FIFO" ? stat?.isFIFO() : stat?.isSymbolicLink()))).toBe(true);
    }
    for (const call of place.calls(store, open)) expect(await settle(call)).toMatchObject({ ok: true });
    expect(treeDigest(outside)).toBe(before);
  });
});

describe("a store opened with _keel/ replaced by a link", () => {
  it("opens without reading or writing through it; check({ repair: true }) makes it whole", async () => {
    const outside = await makeDecoy();
    const root = path.join(dirs.dir(), "store");
    const first = createFsStore({ dir: root });
    (await first.docs.put(["k", "d"], 1, { create: true }))._unsafeUnwrap();
    await first.close();
    plant(path.join(root, "_keel"), "a link to a directory", { file: "", directory: path.join(outside, "other", "_keel"), outside });
    const before = treeDigest(outside);
    const spy = spyIo();
    const store = openFsStore({ dir: root }, spy.io);
    dirs.track(store);
    expect(await settle(() => store.docs.get(["k", "d"]))).toMatchObject({ ok: true, value: { value: 1 } });
    expect(await settle(() => store.docs.put(["k", "d"], 2, { expectedVersion: 1 }))).toEqual({ ok: false, code: "corrupt" });
    expect(await settle(() => store.leases.acquire("l", "me", { ttlMs: 1000 }))).toEqual({ ok: false, code: "corrupt" });
    expect(spy.paths.filter((used) => used.startsWith(path.join(root, "_keel") + path.sep))).toEqual([]);
    expect(treeDigest(outside)).toBe(before);
    expect(await settle(() => store.check({ repair: true }))).toMatchObject({ ok: true, value: { repaired: [expect.objectContaining({ location: path.join(root, "_keel") })] } });
    expect(await settle(() => store.docs.put(["k", "d"], 2, { expectedVersion: 1 }))).toMatchObject({ ok: true });
    expect(await settle(() => store.leases.acquire("l", "me", { ttlMs: 1000 }))).toMatchObject({ ok: true });
    expect(JSON.parse(readFileSync(path.join(root, "_keel", "store.json"), "utf8"))).toEqual({ format: "keel.fs-store", version: 2 });
    expect(treeDigest(outside)).toBe(before);
  });
});
