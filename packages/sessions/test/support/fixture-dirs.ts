import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (where `tsx` and the workspace packages resolve). */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");

/** The worker script of the multi-process tests. */
export const workerFile = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../turn-worker.ts");

/** A fresh temporary directory, and a function that removes it. */
export function temporaryDirectory(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), `keel-sessions-${prefix}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** What a worker printed, one parsed JSON line per turn. */
export interface WorkerLine {
  action?: string;
  reason?: string;
  threadId?: string | null;
  turn?: number;
  warnings?: unknown[];
  error?: string;
  message?: string;
}

/** Runs the turn worker as a real child process and resolves its exit code and parsed lines. */
export function runWorker(options: Record<string, unknown>): Promise<{ code: number | null; lines: WorkerLine[]; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "--conditions=@keel/source", workerFile, JSON.stringify(options)], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) => {
      const lines = stdout
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as WorkerLine);
      resolve({ code, lines, stderr });
    });
  });
}
