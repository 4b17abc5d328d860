import { resolve } from "node:path";
import { KeelError, createEventBus, systemClock, validateOrThrow, type EventBus } from "@keel/core";
import type { Backend } from "@keel/backend";
import { createBudget, type Budget } from "@keel/budget";
import { createRoleSessions, type RoleSessions } from "@keel/sessions";
import { createSkillLibrary, type SkillLibrary } from "@keel/skills";
import type { KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import type { ResultAsync } from "neverthrow";
import { KeelOptionsSchema, type KeelOptions } from "./keel-options.js";
import type { RoleTurnInput, RoleTurnResult } from "./role-turn.js";
import { createRoundRunner, type RoundInput, type RoundResult } from "./round.js";
import type { TurnOptions } from "./turn-options.js";
import { redactStoreUrl } from "./store-url.js";
import { createWorkSessionRuntime, type KeelWorkSessions } from "./work-session-runtime.js";
import { createLateStore } from "./internal/late-store.js";
import { createStoreWarningRelay } from "./internal/store-warnings.js";
import { createRoleTurnRunner } from "./internal/turn-runner.js";

/** A composed Keel runtime: sessions, skills, budget and backends over one store. */
export interface Keel extends KeelWorkSessions {
  /** The store everything is kept in. */
  readonly store: KeelStore;
  /** The bus every event goes to. */
  readonly events: EventBus;
  /** The role sessions (capsules, checkpoints, handoffs). */
  readonly sessions: RoleSessions;
  /** The skill library, or `null` without skills. */
  readonly skills: SkillLibrary | null;
  /** The budget ledger. */
  readonly budget: Budget;
  /** The configured backend ids. */
  readonly backendIds: readonly string[];
  /**
   * Runs one role turn: resolve the role's skill view → plan the session action (under the
   * role's lease for `mission` and `rolling`) → build the prompt (objective, capsule and skill
   * contract on fresh and rotated turns; only the new part on resumed ones) → reserve budget →
   * the backend (a thread that cannot be resumed is dropped and the turn retried fresh from the
   * capsule, on the same reservation) → update the capsule → settle the budget → events.
   * Persistence and accounting warnings never change a successful result. The reservation is
   * taken right before the backend is called, so a turn that fails before (the lease, the
   * prompt, an abort) leaves the budget as if it never ran.
   *
   * A turn with a declared `budget` first asks the capacity gate: `no_session` (no open work
   * session: `openWorkSession` restores it) or `capacity_refused` (a work-session limit reached),
   * and nothing runs. Every turn is counted in the work session covering its role, if any (tool
   * calls from the backend's result, active minutes from its wall time), and recorded as a
   * `work.session.turn` event either way. The mission checkpoint placeholder is created on the
   * mission's first turn.
   *
   * `options.signal` aborts the turn: the backend's process group or in-process loop ends, the
   * reservation is settled with the time used, and the turn answers `aborted`; a signal that
   * fired before the backend was called (before the start, or while the turn waited for the
   * role's lease) runs and reserves nothing.
   * `options.onProgress` receives the backend's text, tool calls and file accesses as they arrive
   * (see {@link TurnOptions}); neither changes the result of a turn that finishes.
   *
   * Errors: `invalid_input`, `no_session`, `capacity_refused`, `budget_exceeded` (nothing ran),
   * `lease_held` (another host's turn of the role held the lease for longer than
   * `roleLease.waitMs`: nothing ran or was reserved; the store's own errors of taking the lease,
   * such as `unavailable`, likewise), `aborted` (the signal fired; before the backend was called,
   * nothing ran), and the backend's own
   * (`backend_failed`, `timeout`, `unavailable`, `corrupt`, `resume_failed` when the
   * fresh retry failed too).
   */
  runRoleTurn(input: RoleTurnInput, options?: TurnOptions): ResultAsync<RoleTurnResult, KeelError>;
  /**
   * Runs planner, engineer and reviewer in order and emits `round.review.completed` with the
   * verdict. `options` reach each of the three turns: an abort ends the current one (`aborted`)
   * and starts no other; progress events name their `role`.
   */
  runRound(input: RoundInput, options?: TurnOptions): ResultAsync<RoundResult, KeelError>;
  /** Waits for turns in flight, releases leases and closes the store if the runtime opened it. */
  close(): Promise<void>;
}

/**
 * Composes Keel's packages into a runtime. Every option has a default: the filesystem store in
 * `./.keel`, the `auto` session policy, no budget limits, no skills.
 *
 * @throws KeelError `invalid_input` for bad options.
 *
 * @example
 * ```ts
 * const keel = createKeel({ dir: ".keel", backends: [createScriptedBackend({ resumable: true, script })] });
 * const turn = await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Add the flag.", objective: "Ship --json" });
 * ```
 */
export function createKeel(options: KeelOptions = {}): Keel {
  validateOrThrow(KeelOptionsSchema, options, "keel options");
  const clock = options.clock ?? systemClock;
  const events = options.events ?? createEventBus({ clock });
  const ownStore = options.store === undefined || typeof options.store === "string";
  // The filesystem store is opened last, once every other option has been validated: bad options never create `.keel/`.
  const late = options.store === undefined ? createLateStore() : undefined;
  const store = typeof options.store === "string" ? openStoreUrl(options.store, options.openStore) : (options.store ?? late!.store);
  const cwd = options.cwd ?? process.cwd();
  const turnTimeoutMs = options.turnTimeoutMs ?? 600_000;
  const { backends, defaultBackend } = toRegistry(options.backends, options.defaultBackend);
  const sessions = createRoleSessions({
    store,
    events,
    clock,
    ...(options.policy ? { policy: options.policy } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.roleLease ? { lease: options.roleLease } : {}),
  });
  const skills =
    options.skills === undefined
      ? null
      : "resolve" in options.skills
        ? options.skills
        : createSkillLibrary({ ...options.skills, events }); // its clock must be the filesystem's: the system clock
  const budget = createBudget({ store, clock, events });
  const workSessions = createWorkSessionRuntime({ store, events, clock, sessions, ...(options.workSessions ? { settings: options.workSessions } : {}) });
  const budgetOptions = options.budget ?? {};

  const runRoleTurn = createRoleTurnRunner({
    plan: { backends, defaultBackend, limits: { mission: budgetOptions.mission, role: budgetOptions.role }, reserveOutputTokens: budgetOptions.reserveOutputTokens ?? 4096, turnTimeoutMs },
    budget,
    clock,
    workSessions,
    run: { store, sessions, skills, cwd, turnTimeoutMs, instructions: options.instructions, events },
    settle: { events, clock, cwd, workSessions },
  });
  const runRound = createRoundRunner({ runRoleTurn, events });
  if (late) {
    const dir = resolve(options.dir ?? ".keel");
    late.open(createFsStore({ dir, onWarning: createStoreWarningRelay(events, dir) }));
  }

  return {
    store,
    events,
    sessions,
    skills,
    budget,
    backendIds: [...backends.keys()],
    runRoleTurn,
    runRound,
    openWorkSession: workSessions.openWorkSession,
    closeWorkSession: workSessions.closeWorkSession,
    workSession: workSessions.workSession,
    checkpoint: workSessions.checkpoint,
    resetCheckpointCounter: workSessions.resetCheckpointCounter,
    writeHandoff: workSessions.writeHandoff,
    recordAudit: workSessions.recordAudit,
    workSessionMetrics: workSessions.workSessionMetrics,
    close: async () => {
      await sessions.close();
      if (ownStore) await store.close();
    },
  };
}

/** The configured backends by id, and the default one (the named one, else the first). Throws `invalid_input`. */
function toRegistry(backends: KeelOptions["backends"], named: string | undefined): { backends: Map<string, Backend>; defaultBackend: string | undefined } {
  const registry = new Map<string, Backend>();
  const entries: [string, Backend][] = !backends ? [] : Array.isArray(backends) ? backends.map((backend) => [backend.id, backend]) : Object.entries(backends);
  for (const [id, backend] of entries) {
    if (registry.has(id)) throw new KeelError("invalid_input", `backend "${id}" is configured twice`, { details: { backend: id } });
    registry.set(id, backend);
  }
  if (named !== undefined && !registry.has(named)) {
    throw new KeelError("invalid_input", `default backend "${named}" is not among the configured backends`, { details: { backends: [...registry.keys()] } });
  }
  return { backends: registry, defaultBackend: named ?? [...registry.keys()][0] };
}

/** Opens a store URL with the host's opener; without one the URL cannot mean anything here. */
function openStoreUrl(url: string, openStore: ((url: string) => KeelStore) | undefined): KeelStore {
  if (!openStore) {
    const shown = redactStoreUrl(url);
    throw new KeelError("invalid_input", `store "${shown}" is a URL, but no openStore was given: open it first with \`await openStore(url)\` from @keel/runtime and pass the KeelStore it answers as store`, {
      details: { store: shown },
    });
  }
  return openStore(url);
}
