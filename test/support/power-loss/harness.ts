/**
 * One power-loss run, end to end: bundle the workload and its checker, record the workload under
 * strace in an empty directory, rebuild the crash states, check each in a fresh process.
 */
import fs from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { bundleWorker } from "../store-fs-child.js";
import { crashStates } from "./crash-states.js";
import { recordWorkload, type Recording } from "./record.js";
import { replayStates, type StateVerdict } from "./replay.js";

/** Packages a bundle imports from where they are installed (better-sqlite3 loads a native addon beside its files). */
const NATIVE_PACKAGES = ["better-sqlite3"];

/** The number of states a run explores: `KEEL_POWER_LOSS_STATES`, else `fallback`. */
export function stateBudget(fallback: number): number {
  const configured = Number(process.env.KEEL_POWER_LOSS_STATES);
  return Number.isSafeInteger(configured) && configured > 0 ? configured : fallback;
}

/** What a run found. */
export interface PowerLossRun {
  recording: Recording;
  verdicts: StateVerdict[];
  /** Crash points sampled, and variants built at them (before duplicates were removed). */
  points: number;
  considered: number;
  /** Acknowledged operations checked, over every state. */
  checked: number;
  seconds: number;
}

/**
 * Runs `workload` (a script of the repository, given `<root> <ack file> ...args`) under strace in
 * an empty directory, and checks at most `maxStates` crash states with `checker` (given
 * `<state root> <ack file> ...args`). `prepare` may fill the root before the recording (its
 * content is the starting state) and the scratch directory outside it.
 */
export async function runPowerLoss(options: {
  strace: string;
  workload: string;
  checker: string;
  args?: readonly string[];
  maxStates: number;
  prepare?: (root: string, scratch: string) => void;
  /** Arguments of the workload only, after `args` (files it reads from outside the root, made by `prepare`). */
  workloadArgs?: (scratch: string) => string[];
}): Promise<PowerLossRun> {
  const started = Date.now();
  const scratch = fs.realpathSync(fs.mkdtempSync(path.join(tmpdir(), "keel-power-loss-")));
  try {
    const [workload, checker] = await Promise.all([
      bundleWorker(options.workload, path.join(scratch, "workload.mjs"), { native: NATIVE_PACKAGES }),
      bundleWorker(options.checker, path.join(scratch, "checker.mjs"), { native: NATIVE_PACKAGES }),
    ]);
    const root = path.join(scratch, "root");
    fs.mkdirSync(root);
    options.prepare?.(root, scratch);
    const recording = await recordWorkload({ strace: options.strace, script: workload, root, ackFile: path.join(scratch, "ack.txt"), traceFile: path.join(scratch, "trace.txt"), args: [...(options.args ?? []), ...(options.workloadArgs?.(scratch) ?? [])] });
    const { states, points, considered } = crashStates(recording.changes, { maxStates: options.maxStates });
    const verdicts = await replayStates({ states, checker, args: options.args ?? [], workDirectory: path.join(scratch, "states"), recordedRoot: root });
    const checked = verdicts.reduce((sum, verdict) => sum + verdict.checked, 0);
    return { recording, verdicts, points, considered, checked, seconds: (Date.now() - started) / 1000 };
  } finally {
    if (!process.env.KEEL_POWER_LOSS_KEEP) fs.rmSync(scratch, { recursive: true, force: true });
  }
}
