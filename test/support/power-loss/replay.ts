/**
 * Rebuilds each crash state in a fresh directory and opens it in a fresh process (the checker),
 * which prints one JSON line: the failures it found (empty: the state passed) and how many
 * acknowledged operations it checked.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { CrashState } from "./crash-states.js";
import { describeTree, materializeTree } from "./fs-tree.js";

/** What the checker of one state found. */
export interface StateVerdict {
  state: CrashState;
  failures: string[];
  /** Acknowledged operations the checker verified. */
  checked: number;
  /** The state's files, for a report of a failed state. */
  files: string[];
}

/** What a checker prints (its last stdout line). */
export interface CheckerOutput {
  failures: string[];
  checked: number;
}

/** Runs `node <checker> <state root> <acknowledgements file> ...args` and reads its verdict. */
function runChecker(checker: string, args: readonly string[], timeoutMs: number): Promise<CheckerOutput> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [checker, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const last = stdout.trim().split("\n").at(-1) ?? "";
      try {
        resolve(JSON.parse(last) as CheckerOutput);
      } catch {
        resolve({ failures: [`the checker ended (${code ?? signal}) without a verdict: ${stderr.slice(-1500)}`], checked: 0 });
      }
    });
  });
}

/**
 * Checks every state with `checker` (a bundled script), `parallel` at a time, each rebuilt under
 * `workDirectory` and removed after its check (`args` follow the state's root and acknowledgement file). `recordedRoot` is where the states were recorded
 * (symbolic links pointing into it are moved into the rebuilt copy).
 */
export async function replayStates(options: {
  states: readonly CrashState[];
  checker: string;
  args?: readonly string[];
  workDirectory: string;
  recordedRoot: string;
  parallel?: number;
  timeoutMs?: number;
}): Promise<StateVerdict[]> {
  const verdicts: StateVerdict[] = [];
  let next = 0;
  const lane = async () => {
    for (;;) {
      const index = next++;
      const state = options.states[index];
      if (!state) return;
      const holder = path.join(options.workDirectory, `state-${index}`);
      fs.mkdirSync(holder, { recursive: true });
      const stateRoot = path.join(holder, path.basename(options.recordedRoot));
      materializeTree(state.tree, stateRoot, options.recordedRoot);
      const ackFile = path.join(holder, "acknowledged.txt");
      fs.writeFileSync(ackFile, state.acknowledged.map((line) => `${line}\n`).join(""));
      const output = await runChecker(options.checker, [stateRoot, ackFile, ...(options.args ?? [])], options.timeoutMs ?? 60_000);
      verdicts[index] = { state, ...output, files: output.failures.length > 0 ? describeTree(state.tree) : [] };
      fs.rmSync(holder, { recursive: true, force: true });
    }
  };
  await Promise.all(Array.from({ length: options.parallel ?? 2 }, lane));
  return verdicts;
}

/** A failed state in a few lines: where the cut fell, what was acknowledged last, what failed, what the files were. */
export function describeFailure(verdict: StateVerdict): string {
  const { state } = verdict;
  return [
    `cut after strace line ${state.point + 1} (${state.variant}); last acknowledgement: ${state.acknowledged.at(-1) ?? "none"}`,
    ...verdict.failures.map((failure) => `  failed: ${failure}`),
    `  files: ${verdict.files.filter((line) => !line.endsWith("/")).join(", ") || "none (every directory below the root was lost)"}`,
  ].join("\n");
}
