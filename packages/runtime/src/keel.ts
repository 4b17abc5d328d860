import { resolve } from "node:path";
import {
  KeelError,
  createEventBus,
  estimateTokens,
  parseSafeName,
  systemClock,
  totalInputTokens,
  utf8Bytes,
  validate,
  validateOrThrow,
  type EventBus,
} from "@keel/core";
import type { Backend, BackendTurnRequest, BackendTurnResult } from "@keel/backend";
import { actualsFromUsage, createBudget, type Budget, type BudgetScope, type Reservation } from "@keel/budget";
import { createRoleSessions, type RoleSessions, type TurnOutcome, type TurnPlan } from "@keel/sessions";
import {
  createSkillLibrary,
  renderSkillContract,
  stageSkills,
  type SkillDeliveryMode,
  type SkillLibrary,
  type SkillView,
} from "@keel/skills";
import type { KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { ResultAsync, errAsync, okAsync } from "neverthrow";
import { KeelOptionsSchema, type KeelOptions } from "./keel-options.js";
import { buildRolePrompt, readReportLines } from "./prompt-builder.js";
import { RoleTurnInputSchema, type RoleTurnInput, type RoleTurnResult, type RuntimeWarning } from "./role-turn.js";
import { createRoundRunner, type RoundInput, type RoundResult } from "./round.js";
import { readResumeState, writeResumeState } from "./internal/backend-thread-state.js";
import { fileAccessEvents } from "./internal/file-access-events.js";
import { scopeId } from "./internal/scope-id.js";

/** A composed Keel runtime: sessions, skills, budget and backends over one store. */
export interface Keel {
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
   * Runs one role turn: reserve budget → plan the session action → resolve the role's skill view
   * → build the prompt (objective, capsule and skill contract on fresh and rotated turns; only
   * the new part on resumed ones) → the backend (a thread that cannot be resumed is dropped and
   * the turn retried fresh from the capsule) → update the capsule → settle the budget → events.
   * Persistence and accounting warnings never change a successful result.
   *
   * Errors: `invalid_input`, `budget_exceeded` (nothing ran), and the backend's own
   * (`backend_failed`, `timeout`, `aborted`, `unavailable`, `corrupt`, `resume_failed` when the
   * fresh retry failed too).
   */
  runRoleTurn(input: RoleTurnInput): ResultAsync<RoleTurnResult, KeelError>;
  /** Runs planner, engineer and reviewer in order and emits `round.review.completed` with the verdict. */
  runRound(input: RoundInput): ResultAsync<RoundResult, KeelError>;
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
  const store = typeof options.store === "string" ? openStoreUrl(options.store, options.openStore) : (options.store ?? createFsStore({ dir: resolve(options.dir ?? ".keel") }));
  const cwd = options.cwd ?? process.cwd();
  const turnTimeoutMs = options.turnTimeoutMs ?? 600_000;
  const backends = toRegistry(options.backends);
  const defaultBackend = options.defaultBackend ?? [...backends.keys()][0];
  if (options.defaultBackend !== undefined && !backends.has(options.defaultBackend)) {
    throw new KeelError("invalid_input", `default backend "${options.defaultBackend}" is not among the configured backends`, {
      details: { backends: [...backends.keys()] },
    });
  }
  const sessions = createRoleSessions({
    store,
    events,
    clock,
    ...(options.policy ? { policy: options.policy } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
  });
  const skills =
    options.skills === undefined
      ? null
      : "resolve" in options.skills
        ? options.skills
        : createSkillLibrary({ ...options.skills, events }); // its clock must be the filesystem's: the system clock
  const budget = createBudget({ store, clock, events });
  const budgetOptions = options.budget ?? {};
  const reserveOutputTokens = budgetOptions.reserveOutputTokens ?? 4096;

  const scopesFor = (missionId: string, role: string): BudgetScope => {
    const mission = budget.scope(scopeId("mission", missionId), budgetOptions.mission ? { limits: budgetOptions.mission } : {});
    return budget.scope(scopeId("role", role), { parents: [mission], ...(budgetOptions.role ? { limits: budgetOptions.role } : {}) });
  };

  const runRoleTurn = (input: RoleTurnInput): ResultAsync<RoleTurnResult, KeelError> => {
    const checked = validate(RoleTurnInputSchema, input, "role turn")
      .andThen((parsed) => parseSafeName(parsed.missionId, "mission id").map(() => parsed))
      .andThen((parsed) => parseSafeName(parsed.role, "role").map(() => parsed));
    if (checked.isErr()) return errAsync(checked.error);
    const turn = checked.value;
    const backendId = turn.backend ?? defaultBackend;
    const backend = backendId === undefined ? undefined : backends.get(backendId);
    if (!backend) {
      return errAsync(
        new KeelError(
          "invalid_input",
          backends.size === 0
            ? "no backend is configured: pass backends to createKeel"
            : `backend "${String(backendId)}" is not configured; configured: ${[...backends.keys()].join(", ")}`,
          { details: { backend: backendId ?? null, configured: [...backends.keys()] } },
        ),
      );
    }
    let scope: BudgetScope;
    try {
      scope = scopesFor(turn.missionId, turn.role);
    } catch (error) {
      return errAsync(KeelError.is(error) ? error : new KeelError("invalid_input", String(error)));
    }
    const warnings: RuntimeWarning[] = [];
    const estimate = estimateTokens(`${turn.objective ?? ""}\n${turn.prompt}`) + reserveOutputTokens;
    return scope
      .reserve({ tokens: estimate, calls: 1, timeMs: turnTimeoutMs })
      .andThen((reservation) =>
        resolveView(turn.role, backend, warnings).andThen((view) =>
          runSessionTurn(turn, backend, view, warnings)
            .andThen(({ result, plan, delivery, last }) =>
              settle(reservation, result.usage, turn.model ?? null, last?.durationMs ?? null, warnings)
                .andThen(() => emitFileAccess(turn, last, result.paths?.inspected ?? []))
                .map(
                (): RoleTurnResult => ({
                  text: result.text,
                  threadId: result.threadId,
                  usage: result.usage,
                  inputTokens: totalInputTokens(result.usage),
                  promptBytes: result.promptBytes,
                  plan,
                  durationMs: last?.durationMs ?? 0,
                  fileAccess: last?.fileAccess ?? [],
                  toolCalls: last?.toolCalls ?? 0,
                  skillDelivery: delivery,
                  warnings,
                }),
              ),
            )
            .orElse((error) => reservation.abandon().orElse(() => okAsync(undefined)).andThen(() => errAsync(error))),
        ),
      );
  };

  const resolveView = (role: string, backend: Backend, warnings: RuntimeWarning[]): ResultAsync<SkillView | null, KeelError> => {
    if (!skills) return okAsync(null);
    return skills
      .resolve(role, { deliveryMode: backend.capabilities.skills })
      .map((view): SkillView | null => view)
      .orElse((error) => {
        warnings.push({ target: "skills", operation: "resolve", code: error.code, message: error.message });
        return okAsync(null);
      });
  };

  /** How skills reach this backend: its adapter declares it (native paths, a staged directory, or the prompt). */
  const deliveryFor = (backend: Backend, view: SkillView): { mode: SkillDeliveryMode; skillPaths: string[] } => {
    const mode = backend.capabilities.skills;
    return { mode, skillPaths: mode === "native" ? view.own.map((skill) => skill.path) : [] };
  };

  const runSessionTurn = (
    turn: ReturnType<typeof RoleTurnInputSchema.parse>,
    backend: Backend,
    view: SkillView | null,
    warnings: RuntimeWarning[],
  ) => {
    const delivery = view ? deliveryFor(backend, view) : null;
    const contract = view && view.skills.length > 0 ? renderSkillContract(view) : null;
    const staged =
      view && delivery?.mode === "staged"
        ? stageSkills(view, cwd)
            .map(() => undefined)
            .orElse((error) => {
              warnings.push({ target: "skills", operation: "stage", code: error.code, message: error.message });
              return okAsync(undefined);
            })
        : okAsync(undefined);
    let last: BackendTurnResult | undefined;
    const execute = (plan: TurnPlan): ResultAsync<TurnOutcome, KeelError> => {
      const prompt = buildRolePrompt({
        role: turn.role,
        missionId: turn.missionId,
        action: plan.action,
        task: turn.prompt,
        objective: turn.objective ?? null,
        objectiveRevision: turn.objectiveRevision ?? 1,
        capsule: plan.capsule,
        skillContract: contract && contract.isOk() ? contract.value : null,
      });
      if (prompt.isErr()) return errAsync(prompt.error);
      const promptText = prompt.value.text;
      // The adapter's state for the thread (e.g. Codex's running usage total), kept from its last turn.
      const kept = plan.threadId
        ? readResumeState(store, turn.missionId, turn.role, backend.id, plan.threadId).orElse((error) => {
            warnings.push({ target: "backend", operation: "read_resume_state", code: error.code, message: error.message });
            return okAsync(undefined);
          })
        : okAsync(undefined);
      return kept.andThen((resumeState) => {
        const request: BackendTurnRequest = {
          prompt: promptText,
          cwd,
          timeoutMs: turnTimeoutMs,
          ...(turn.model ? { model: turn.model } : {}),
          ...(plan.threadId ? { threadId: plan.threadId } : {}),
          ...(plan.threadId && resumeState ? { resumeState } : {}),
          ...(delivery && delivery.skillPaths.length > 0 ? { skillPaths: delivery.skillPaths } : {}),
        };
        return backend.runTurn(request).andThen((result) => {
          last = result;
          return writeResumeState(store, turn.missionId, turn.role, backend.id, result.threadId, result.resumeState)
            .orElse((error) => {
              warnings.push({ target: "backend", operation: "write_resume_state", code: error.code, message: error.message });
              return okAsync(undefined);
            })
            .map(
              (): TurnOutcome => ({ text: result.text, threadId: result.threadId, usage: result.usage, promptBytes: utf8Bytes(promptText), ...readReportLines(result.text) }),
            );
        });
      });
    };
    return staged.andThen(() =>
      sessions
        .runTurn(
          {
            missionId: turn.missionId,
            role: turn.role,
            backend: { id: backend.id, resumable: backend.capabilities.resume },
            model: turn.model ?? null,
            branch: turn.branch ?? null,
            objectiveRevision: turn.objectiveRevision ?? 1,
          },
          execute,
        )
        .map((outcome) => {
          warnings.push(...outcome.warnings);
          return { result: outcome.outcome, plan: outcome.plan, delivery: delivery?.mode ?? null, last };
        }),
    );
  };

  const settle = (
    reservation: Reservation,
    usage: BackendTurnResult["usage"] | null,
    model: string | null,
    durationMs: number | null,
    warnings: RuntimeWarning[],
  ): ResultAsync<void, KeelError> => {
    const actuals = actualsFromUsage(usage, { model, durationMs });
    const settled = actuals.isOk() ? reservation.settle(actuals.value.actual) : reservation.abandon();
    return settled
      .map(() => undefined)
      .orElse((error) => {
        warnings.push({ target: "budget", operation: "settle", code: error.code, message: error.message });
        return okAsync(undefined);
      });
  };

  /**
   * `agent.io.read` / `write` / `search` for what the agent really did (the backend's
   * `fileAccess`), or, from a backend that shows no tool call, for the paths the role reported
   * inspecting; paths relative to `cwd`.
   */
  const emitFileAccess = (
    turn: { missionId: string; role: string },
    last: BackendTurnResult | undefined,
    inspected: readonly string[],
  ): ResultAsync<void, KeelError> =>
    ResultAsync.fromSafePromise(fileAccessEvents(cwd, turn, last, inspected)).map((accesses) => {
      for (const access of accesses) events.emit(access);
    });

  const runRound = createRoundRunner({ runRoleTurn, events });

  return {
    store,
    events,
    sessions,
    skills,
    budget,
    backendIds: [...backends.keys()],
    runRoleTurn,
    runRound,
    close: async () => {
      await sessions.close();
      if (ownStore) await store.close();
    },
  };
}

function toRegistry(backends: KeelOptions["backends"]): Map<string, Backend> {
  const registry = new Map<string, Backend>();
  if (!backends) return registry;
  const entries: [string, Backend][] = Array.isArray(backends) ? backends.map((backend) => [backend.id, backend]) : Object.entries(backends);
  for (const [id, backend] of entries) {
    if (registry.has(id)) throw new KeelError("invalid_input", `backend "${id}" is configured twice`, { details: { backend: id } });
    registry.set(id, backend);
  }
  return registry;
}

/** Opens a store URL with the host's opener; without one the URL cannot mean anything here. */
function openStoreUrl(url: string, openStore: ((url: string) => KeelStore) | undefined): KeelStore {
  if (!openStore) {
    throw new KeelError("invalid_input", `store "${url}" is a URL, but no openStore was given: pass openStore (e.g. openStoreUrl from @keel/cli) or a KeelStore`, {
      details: { store: url.replace(/^(postgres(?:ql)?:\/\/[^:/@]+:)[^@]*@/i, "$1***@") },
    });
  }
  return openStore(url);
}
