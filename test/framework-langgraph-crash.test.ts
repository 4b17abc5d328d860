/**
 * SIGKILL during `put`: a process puts checkpoints in a loop and is killed at a random moment;
 * every checkpoint whose `put` was acknowledged is still there, whole, and the thread's latest
 * is the last acknowledged one or the one in flight. Over the fs store (writes one by one, the
 * head last) and over SQLite (each put one atomic `docs.batch`).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createKeelCheckpointer } from "@keel/langgraph";
import type { KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { createSqliteStore } from "@keel/store-sqlite";
import { afterAll, expect, it } from "vitest";
import { repoRoot } from "./support/run-ts.js";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function runUntilKilled(kind: "fs" | "sqlite", location: string, acknowledgements: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "--conditions=@keel/source", "test/support/langgraph-put-worker.ts", kind, location, "-"], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      if (stdout.split("\n").length > acknowledgements) child.kill("SIGKILL");
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (_code, signal) => {
      if (signal !== "SIGKILL") reject(new Error(`worker ended without SIGKILL: ${stderr}`));
      // Only complete lines are acknowledged checkpoints.
      else resolve(stdout.split("\n").slice(0, -1));
    });
  });
}

const kinds: { kind: "fs" | "sqlite"; name: string; location: (dir: string) => string; open: (location: string) => KeelStore }[] = [
  { kind: "fs", name: "fs store", location: (dir) => dir, open: (location) => createFsStore({ dir: location }) },
  { kind: "sqlite", name: "SQLite store, batched put", location: (dir) => path.join(dir, "keel.db"), open: (file) => createSqliteStore({ file }) },
];

for (const { kind, name, location: locationIn, open } of kinds) {
  it(`loses no acknowledged checkpoint when the writer is SIGKILLed during put (${name})`, async () => {
    for (const round of [0, 1, 2]) {
      const dir = mkdtempSync(path.join(tmpdir(), `keel-langgraph-crash-${kind}-${round}-`));
      made.push(dir);
      const location = locationIn(dir);
      const acknowledged = await runUntilKilled(kind, location, 15 + Math.floor(Math.random() * 30));
      expect(acknowledged.length).toBeGreaterThan(10);
      const store = open(location);
      const saver = createKeelCheckpointer({ store });
      for (const [step, checkpointId] of acknowledged.entries()) {
        const tuple = await saver.getTuple({ configurable: { thread_id: "crash", checkpoint_id: checkpointId } });
        expect(tuple?.checkpoint.channel_values).toEqual({ step, text: "t".repeat(2_000) });
      }
      const latest = await saver.getTuple({ configurable: { thread_id: "crash" } });
      const latestStep = latest?.checkpoint.channel_values.step as number;
      expect([acknowledged.length - 1, acknowledged.length]).toContain(latestStep);
      await store.close();
    }
  });
}
