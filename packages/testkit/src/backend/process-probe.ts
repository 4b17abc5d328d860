import { readFileSync } from "node:fs";

/**
 * Whether process `pid` is still running. A zombie (exited, not yet reaped by its parent —
 * common for orphans in containers whose init does not reap) counts as gone.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as { code?: string }).code === "EPERM";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 3, after the parenthesised command name (which may itself contain spaces or parentheses).
    const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
    return state !== "Z" && state !== "X";
  } catch {
    // No /proc (macOS): kill(pid, 0) succeeding is the best answer available.
    return true;
  }
}

/**
 * Waits until none of `pids` is alive, polling every 25 ms for at most `withinMs` (default 10 s).
 * Returns the pids still alive at the end (empty when all are gone).
 */
export async function waitForProcessesToExit(pids: readonly number[], withinMs = 10_000): Promise<number[]> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const alive = pids.filter((pid) => isProcessAlive(pid));
    if (alive.length === 0 || Date.now() >= deadline) return alive;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
