/**
 * SIGKILL during `put`: a process puts checkpoints in a loop over the fs store and is killed at
 * a random moment; every checkpoint whose `put` was acknowledged is still there, whole, and the
 * thread's latest is the last acknowledged one or the one in flight.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createKeelCheckpointer } from "@keel/langgraph";
import { createFsStore } from "@keel/store-fs";
import { afterAll, expect, it } from "vitest";
import { repoRoot } from "./support/run-ts.js";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function runUntilKilled(dir: string, acknowledgements: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "--conditions=@keel/source", "test/support/langgraph-put-worker.ts", "fs", dir, "-"], {
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

it("loses no acknowledged checkpoint when the writer is SIGKILLed during put (fs store)", async () => {
  for (const round of [0, 1, 2]) {
    const dir = mkdtempSync(path.join(tmpdir(), `keel-langgraph-crash-${round}-`));
    made.push(dir);
    const acknowledged = await runUntilKilled(dir, 15 + Math.floor(Math.random() * 30));
    expect(acknowledged.length).toBeGreaterThan(10);
    const store = createFsStore({ dir });
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
