import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (where `tsx` and the workspace packages resolve). */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** The worker script of the multi-process tests. */
export const workerFile = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "sessions-turn-worker.ts");

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

/** How {@link runWorker} starts its child. */
export interface WorkerStart {
  /** The script to run (default: the turn worker). */
  file?: string;
  /**
   * Let permission bits bind the child. They do not bind root: run as root, the child runs under
   * `setpriv` (util-linux) without the capabilities `dac_override` and `dac_read_search`.
   */
  permissionBound?: boolean;
}

/** Runs a worker script as a real child process and resolves its exit code and parsed JSON lines. */
export function runWorker<Line = WorkerLine>(options: Record<string, unknown>, start: WorkerStart = {}): Promise<{ code: number | null; lines: Line[]; stderr: string }> {
  const node = [process.execPath, "--import", "tsx", "--conditions=@keel/source", start.file ?? workerFile, JSON.stringify(options)];
  const [command, ...args] = start.permissionBound && process.getuid?.() === 0 ? ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--", ...node] : node;
  return new Promise((resolve, reject) => {
    const child = spawn(command!, args, { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", (error) => reject(new Error(`cannot start ${command}: ${error.message}`)));
    child.on("close", (code) => {
      const lines = stdout
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Line);
      resolve({ code, lines, stderr });
    });
  });
}
