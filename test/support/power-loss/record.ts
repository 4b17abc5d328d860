/**
 * Records a workload's file-system calls: the workload runs in a child Node process under strace,
 * below a root directory whose snapshot is taken first; it writes its acknowledgements to a file
 * outside the root, which the trace orders against its changes.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { interpretCalls, type RecordedChanges } from "./fs-events.js";
import { describeTree, snapshotTree } from "./fs-tree.js";
import { parseStrace } from "./strace-parse.js";

/**
 * The calls traced: every call that changes a file or a directory or makes a change durable
 * (Node and better-sqlite3 use openat, write/pwrite64, fsync/fdatasync, rename, unlink, mkdir,
 * link, ftruncate; the rest are there so that nothing is missed), plus close and lseek for the
 * descriptors' positions. SQLite's `-shm` is written through mmap: it is not data.
 */
export const TRACED_CALLS = [
  "openat", "open", "creat", "write", "pwrite64", "pwritev", "pwritev2", "writev", "fsync", "fdatasync", "sync_file_range",
  "rename", "renameat", "renameat2", "unlink", "unlinkat", "mkdir", "mkdirat", "rmdir", "link", "linkat", "symlink",
  "symlinkat", "ftruncate", "truncate", "close", "fallocate", "msync", "lseek", "copy_file_range", "sendfile",
];

/** The strace binary, or `undefined` when it is not installed (or cannot trace here). */
export function findStrace(): string | undefined {
  for (const candidate of ["/usr/bin/strace", "strace"]) {
    const probe = spawnSync(candidate, ["-f", "-e", "trace=write", "-o", "/dev/null", "true"], { stdio: "ignore" });
    if (probe.status === 0) return candidate;
  }
  return undefined;
}

/** What {@link recordWorkload} gives. */
export interface Recording {
  changes: RecordedChanges;
  /** The number of system calls read from the trace. */
  calls: number;
  /** Lines of the real directory that the model's final tree does not match (empty: the trace was read whole). */
  mismatch: string[];
  stderr: string;
}

/**
 * Runs `node <script> <root> <ackFile> ...args` under strace and reads the trace into the
 * changes below `root` (a directory that exists; its current content is the starting state).
 */
export async function recordWorkload(options: { strace: string; script: string; root: string; ackFile: string; traceFile: string; args?: readonly string[]; timeoutMs?: number }): Promise<Recording> {
  const root = fs.realpathSync(options.root);
  const initial = snapshotTree(root);
  const straceArgs = ["-f", "-tt", "-y", "-xx", "-s", "4194304", "-o", options.traceFile, "-e", `trace=${TRACED_CALLS.join(",")}`];
  const child = spawn(options.strace, [...straceArgs, process.execPath, options.script, root, options.ackFile, ...(options.args ?? [])], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  child.stdout.resume();
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 120_000);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearTimeout(timer);
  if (code !== 0) throw new Error(`the workload failed (exit ${code}): ${stderr.slice(-2000)}`);
  const calls = parseStrace(fs.readFileSync(options.traceFile, "latin1"));
  const changes = interpretCalls(calls, root, initial, path.resolve(options.ackFile));
  const expected = new Set(describeTree(snapshotTree(root)));
  const modelled = new Set(describeTree(changes.final));
  const mismatch = [...[...expected].filter((line) => !modelled.has(line)).map((line) => `on disk, not in the model: ${line}`), ...[...modelled].filter((line) => !expected.has(line)).map((line) => `in the model, not on disk: ${line}`)];
  return { changes, calls: calls.length, mismatch, stderr };
}
