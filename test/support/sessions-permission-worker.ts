/**
 * A child process for the permission-fault tests: on the filesystem store at `dir`, runs two
 * turns of one role, takes away a permission (`chmod`) from the capsule, the checkpoint or their
 * directories, runs a turn under the fault, gives the permission back and runs one more turn.
 * Prints one JSON line per case. The test runs it so that permission bits bind it (as root, whom
 * they do not stop, under `setpriv` without the capabilities that bypass them), so the faults
 * are the kernel's own `EACCES`. Run with
 * `node --import tsx --conditions=@keel/source test/support/sessions-permission-worker.ts '<json options>'`.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createEventBus, type RoleSessionWarningEvent } from "@keel/core";
import { createRoleSessions, type TurnOutcome, type RoleSessionTurnRequest } from "@keel/sessions";
import { createFsStore } from "@keel/store-fs";
import { okAsync } from "neverthrow";

/** The cases: what loses which permission. */
export const PERMISSION_CASES = ["capsule-unreadable", "capsule-directory-unwritable", "checkpoint-unreadable", "mission-directory-unwritable"] as const;

/** One permission case. */
export type PermissionCase = (typeof PERMISSION_CASES)[number];

/** The parts of a warning the tests compare. */
export interface WarningShape {
  target: string;
  operation: string;
  code: string;
}

/** What the worker prints for one case. */
export interface PermissionReport {
  case: PermissionCase;
  /** The error code a plain read or write of the faulty path gets (proves the fault is real). */
  probe: string;
  /** Whether the faulty turn returned the very outcome `execute` gave. */
  sameOutcome: boolean;
  faulty: { action: string; threadId: string | null; warnings: WarningShape[]; events: WarningShape[] };
  /** The capsule's total turns right after the faulty turn (permission given back first). */
  totalTurnsAfterFault: number | null;
  recovery: { action: string; threadId: string | null; warnings: WarningShape[]; totalTurns: number | null };
}

const request: RoleSessionTurnRequest = { missionId: "m1", role: "engineer", backend: { id: "codex", resumable: true }, model: null, branch: "main", objectiveRevision: 1 };
const outcome = (threadId: string): TurnOutcome => ({ text: "answer", threadId, usage: null, promptBytes: 300, openCheckpointItems: ["next"] });
const shapes = (warnings: readonly WarningShape[]): WarningShape[] => warnings.map(({ target, operation, code }) => ({ target, operation, code }));

/** The code of the error `probe` throws, or `none`. */
function errorCode(probe: () => void): string {
  try {
    probe();
    return "none";
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? "unknown";
  }
}

/** Takes the permission away; resolves the probe's code and a function that gives it back. */
function fault(kind: PermissionCase, dir: string): { probe: string; restore: () => void } {
  const mission = path.join(dir, "missions", "m1");
  const capsuleFile = path.join(mission, "role-sessions", "engineer.json");
  const checkpointFile = path.join(mission, "checkpoint.json");
  const take = (target: string, mode: number, restoreMode: number, probe: () => void) => {
    chmodSync(target, mode);
    return { probe: errorCode(probe), restore: () => chmodSync(target, restoreMode) };
  };
  switch (kind) {
    case "capsule-unreadable":
      return take(capsuleFile, 0o000, 0o644, () => readFileSync(capsuleFile));
    case "capsule-directory-unwritable":
      return take(path.dirname(capsuleFile), 0o555, 0o755, () => writeFileSync(path.join(path.dirname(capsuleFile), "probe"), "x"));
    case "checkpoint-unreadable":
      return take(checkpointFile, 0o000, 0o644, () => readFileSync(checkpointFile));
    case "mission-directory-unwritable":
      return take(mission, 0o555, 0o755, () => writeFileSync(path.join(mission, "probe"), "x"));
  }
}

async function runCase(kind: PermissionCase, dir: string): Promise<PermissionReport> {
  mkdirSync(dir, { recursive: true });
  const store = createFsStore({ dir });
  const events = createEventBus();
  const seen: RoleSessionWarningEvent[] = [];
  events.on("role.session.warning", (event) => seen.push(event));
  const sessions = createRoleSessions({ store, events, policy: "rolling" });
  try {
    (await sessions.initMissionCheckpoint("m1"))._unsafeUnwrap();
    // Two turns: the capsule and its backup exist, on thread t-1.
    for (let turn = 0; turn < 2; turn++) (await sessions.runTurn(request, (plan) => okAsync(outcome(plan.threadId ?? "t-1"))))._unsafeUnwrap();
    const { probe, restore } = fault(kind, dir);
    let given: TurnOutcome | undefined;
    let faulty;
    try {
      faulty = (await sessions.runTurn(request, (plan) => okAsync((given = outcome(plan.threadId ?? "t-2")))))._unsafeUnwrap();
    } finally {
      restore();
    }
    const faultyEvents = shapes(seen);
    const afterFault = (await sessions.readCapsule("m1", "engineer"))._unsafeUnwrap();
    const recovery = (await sessions.runTurn(request, (plan) => okAsync(outcome(plan.threadId ?? "t-3"))))._unsafeUnwrap();
    const final = (await sessions.readCapsule("m1", "engineer"))._unsafeUnwrap();
    return {
      case: kind,
      probe,
      sameOutcome: given !== undefined && faulty.outcome === given,
      faulty: { action: faulty.plan.action, threadId: faulty.plan.threadId, warnings: shapes(faulty.warnings), events: faultyEvents },
      totalTurnsAfterFault: afterFault?.counters.totalTurns ?? null,
      recovery: { action: recovery.plan.action, threadId: recovery.plan.threadId, warnings: shapes(recovery.warnings), totalTurns: final?.counters.totalTurns ?? null },
    };
  } finally {
    await sessions.close();
    await store.close();
  }
}

const options = JSON.parse(process.argv[2] ?? "{}") as { dir: string };
for (const kind of PERMISSION_CASES) {
  process.stdout.write(`${JSON.stringify(await runCase(kind, path.join(options.dir, kind)))}\n`);
}
