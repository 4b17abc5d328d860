import { describe, expect, it } from "vitest";
import { crashState, crashStates, durableAt, tornWrite } from "./support/power-loss/crash-states.js";
import { interpretCalls, type FsEvent } from "./support/power-loss/fs-events.js";
import { describeTree, type FsTree } from "./support/power-loss/fs-tree.js";
import { parseCall, parseStrace } from "./support/power-loss/strace-parse.js";

/**
 * The power-loss model on a tiny hand-made trace: the strace reader (joined unfinished calls,
 * hex-escaped data and paths), the reading of calls into inode changes, and the crash states
 * rebuilt from them (durability by fsync of a file or of a directory, lost or kept metadata,
 * writes torn at 4 KiB).
 */

const ROOT = "/r";
const ACK = "/ack";
/** A string as `strace -xx` prints it. */
const hex = (text: string) => [...Buffer.from(text)].map((byte) => `\\x${byte.toString(16).padStart(2, "0")}`).join("");
const fd = (number: number, path: string) => `${number}<${hex(path)}>`;
const quoted = (text: string) => `"${hex(text)}"`;

/** An empty root directory: inode 1. */
const emptyRoot = (): FsTree => ({ root: 1, nodes: new Map([[1, { kind: "dir", entries: new Map() }]]) });

/**
 * `a` written, fsynced, renamed into place; `b` written (not fsynced) and renamed; the directory
 * fsynced; an acknowledgement; then a big write to `a` (not fsynced) and a rename in a new
 * subdirectory that is never fsynced. The fsync of `a` runs in another thread (unfinished/resumed).
 */
const TRACE = [
  `10 12:00:00.000001 openat(AT_FDCWD<${hex("/")}>, ${quoted("/r/a.tmp")}, O_WRONLY|O_CREAT|O_EXCL|O_CLOEXEC, 0644) = ${fd(3, "/r/a.tmp")}`,
  `10 12:00:00.000002 pwrite64(${fd(3, "/r/a.tmp")}, ${quoted("alpha")}, 5, 0) = 5`,
  `11 12:00:00.000003 fsync(${fd(3, "/r/a.tmp")} <unfinished ...>`,
  `10 12:00:00.000004 openat(AT_FDCWD<${hex("/")}>, ${quoted("/ack")}, O_WRONLY|O_CREAT|O_APPEND, 0666) = ${fd(9, "/ack")}`,
  `11 12:00:00.000005 <... fsync resumed>) = 0`,
  `10 12:00:00.000006 close(${fd(3, "/r/a.tmp")}) = 0`,
  `10 12:00:00.000007 rename(${quoted("/r/a.tmp")}, ${quoted("/r/a")}) = 0`,
  `10 12:00:00.000008 openat(AT_FDCWD<${hex("/")}>, ${quoted("/r/b.tmp")}, O_WRONLY|O_CREAT|O_EXCL, 0644) = ${fd(4, "/r/b.tmp")}`,
  `10 12:00:00.000009 write(${fd(4, "/r/b.tmp")}, ${quoted("bravo")}, 5) = 5`,
  `10 12:00:00.000010 close(${fd(4, "/r/b.tmp")}) = 0`,
  `10 12:00:00.000011 rename(${quoted("/r/b.tmp")}, ${quoted("/r/b")}) = 0`,
  `10 12:00:00.000012 openat(AT_FDCWD<${hex("/")}>, ${quoted("/r")}, O_RDONLY|O_CLOEXEC) = ${fd(5, "/r")}`,
  `10 12:00:00.000013 fsync(${fd(5, "/r")}) = 0`,
  `10 12:00:00.000014 write(${fd(9, "/ack")}, ${quoted("A both\n")}, 7) = 7`,
  `10 12:00:00.000015 openat(AT_FDCWD<${hex("/")}>, ${quoted("/r/a")}, O_WRONLY) = ${fd(6, "/r/a")}`,
  `10 12:00:00.000016 pwrite64(${fd(6, "/r/a")}, ${quoted("x".repeat(10_000))}, 10000, 0) = 10000`,
  `10 12:00:00.000017 mkdir(${quoted("/r/d")}, 0700) = 0`,
  `10 12:00:00.000018 unlink(${quoted("/r/missing")}) = -1 ENOENT (No such file or directory)`,
  `10 12:00:00.000019 +++ exited with 0 +++`,
].join("\n");

const files = (tree: FsTree) => describeTree(tree).filter((line) => !line.endsWith("/")).map((line) => line.split(" ").slice(0, 3).join(" "));

describe("the strace reader", () => {
  it("joins an unfinished call with its resumption, at the position it finished, and decodes paths and data", () => {
    const calls = parseStrace(TRACE);
    const fsync = calls.find((call) => call.name === "fsync")!;
    expect(fsync).toMatchObject({ pid: 11, start: 2, end: 4, result: 0 });
    // Ordered by the end: the ack file's open (line 3) comes before the fsync that ended on line 4.
    expect(calls.map((call) => call.name).slice(0, 4)).toEqual(["openat", "pwrite64", "openat", "fsync"]);
    expect(calls[0]!.resultPath).toBe("/r/a.tmp");
    expect(calls.some((call) => call.name === "exited")).toBe(false);
  });

  it("reads a failed call's errno, and refuses data strace cut short", () => {
    expect(parseCall(`unlink(${quoted("/r/x")}) = -1 ENOENT (No such file or directory)`)).toMatchObject({ name: "unlink", result: -1, errno: "ENOENT" });
    expect(parseCall("--- SIGCHLD {si_signo=SIGCHLD} ---")).toBeUndefined();
    const cut = parseStrace(`1 12:00:00.000001 openat(AT_FDCWD, ${quoted("/r/f")}, O_WRONLY|O_CREAT, 0644) = ${fd(3, "/r/f")}\n1 12:00:00.000002 write(${fd(3, "/r/f")}, "\\x61"..., 5) = 5`);
    expect(() => interpretCalls(cut, ROOT, emptyRoot(), ACK)).toThrow(/raise -s/);
  });
});

describe("the changes read from the calls", () => {
  const changes = interpretCalls(parseStrace(TRACE), ROOT, emptyRoot(), ACK);

  it("ends with the tree the process saw, and takes acknowledgements from the ack file only", () => {
    expect(files(changes.final)).toEqual([`/a file 10000`, `/b file 5`]);
    expect(describeTree(changes.final)).toContain("/d/");
    expect(changes.events.filter((event) => event.kind === "ack").map((event) => (event as Extract<FsEvent, { kind: "ack" }>).line)).toEqual(["A both"]);
    expect(changes.events.map((event) => event.kind)).toEqual(["link", "write", "sync", "rename", "link", "write", "rename", "sync", "ack", "write", "link"]);
  });

  it("makes a write durable only by an fsync begun after it, and a rename only by its directory's fsync", () => {
    const beforeDirectorySync = durableAt(changes.events, 11);
    expect([...beforeDirectorySync].map((event) => event.kind)).toEqual(["write"]);
    const afterDirectorySync = durableAt(changes.events, 13);
    expect([...afterDirectorySync].map((event) => event.kind)).toEqual(["link", "write", "rename", "link", "rename"]);
  });

  it("rebuilds the states a cut leaves: all lost, metadata without its data, everything", () => {
    // Cut after b's rename, before the directory's fsync.
    expect(files(crashState(changes, 11, { metadata: "none", data: "none" }))).toEqual([]);
    expect(files(crashState(changes, 11, { metadata: "all", data: "none" }))).toEqual(["/a file 5", "/b file 0"]);
    expect(files(crashState(changes, 11, { metadata: "all", data: "all" }))).toEqual(["/a file 5", "/b file 5"]);
    expect(files(crashState(changes, 11, { metadata: { prefix: 2 }, data: "all" }))).toEqual(["/a file 5"]);
    // After the directory's fsync: b's rename is durable, its data never was (the zero-length file).
    expect(files(crashState(changes, 13, { metadata: "none", data: "none" }))).toEqual(["/a file 5", "/b file 0"]);
  });

  it("tears an unsynced write at a 4 KiB boundary, never elsewhere", () => {
    const write = changes.events.find((event): event is Extract<FsEvent, { kind: "write" }> => event.kind === "write" && event.bytes.length === 10_000)!;
    expect(tornWrite(write, 5_000)?.bytes.length).toBe(4096);
    expect(tornWrite(write, 9_000)?.bytes.length).toBe(8192);
    expect(tornWrite(write, 100)).toBeUndefined();
    const torn = crashState(changes, 16, { metadata: "all", data: new Map([[write.inode, { keep: 0, tornBytes: 5_000 }]]) });
    // None of the pending writes kept whole; the next (the only one) torn after its first page.
    expect(files(torn)).toContain("/a file 4096");
  });

  it("keeps a directory's changes as a prefix per directory", () => {
    const rootInode = changes.initial.root;
    const kept = crashState(changes, 11, { metadata: { perDirectory: new Map([[rootInode, 2]]) }, data: "all" });
    expect(files(kept)).toEqual(["/a file 5"]);
  });

  it("explores distinct states only, at most as many as asked, all-lost among them", () => {
    const { states, points } = crashStates(changes, { maxStates: 6 });
    expect(states.length).toBeLessThanOrEqual(6);
    expect(points).toBe(6);
    const digests = new Set(states.map((state) => `${describeTree(state.tree).join(",")}|${state.acknowledged.length}`));
    expect(digests.size).toBe(states.length);
    expect(states.some((state) => state.variant === "lost")).toBe(true);
    const everything = crashStates(changes, { maxStates: 1000 }).states;
    expect(everything.filter((state) => state.acknowledged.includes("A both")).every((state) => files(state.tree).includes("/a file 5") || files(state.tree).includes("/a file 4096") || files(state.tree).includes("/a file 8192") || files(state.tree).includes("/a file 10000"))).toBe(true);
  });
});
