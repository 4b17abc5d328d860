import { KeelError, estimateTokens, parseSafeName, validate } from "@keel/core";
import type { Limits } from "@keel/budget";
import { err, ok, type Result } from "neverthrow";
import type { z } from "zod";
import { RoleTurnInputSchema } from "../role-turn.js";
import { scopeId } from "./scope-id.js";

/** A role turn as its schema parsed it. */
export type CheckedTurn = z.output<typeof RoleTurnInputSchema>;

/** What the plan of a turn reads from the runtime's options. */
export interface TurnPlanSettings<B> {
  /** The configured backends by id, in configuration order. */
  backends: ReadonlyMap<string, B>;
  /** The backend of a turn that names none (`undefined` when none is configured). */
  defaultBackend: string | undefined;
  /** Limits of each mission and of each role within it (the runtime's `budget` option). */
  limits: { mission?: Limits | undefined; role?: Limits | undefined };
  /** Output tokens reserved on top of the prompt's estimate. */
  reserveOutputTokens: number;
  /** The turn's time limit, reserved as its time. */
  turnTimeoutMs: number;
}

/** One budget scope to declare: each scope of a plan is the parent of the next. */
export interface ScopeDeclaration {
  id: string;
  limits: Limits | null;
}

/** A role turn's plan: what runs it and what it reserves, decided before anything runs. */
export interface PlannedTurn<B> {
  turn: CheckedTurn;
  backendId: string;
  backend: B;
  /** `mission.<id>`, `role.<role>`, then `task.<mission>.<task or role>` when the turn declares a budget. */
  scopes: ScopeDeclaration[];
  /** What the turn reserves: the prompt's estimate plus the output reserve, one call, the time limit. */
  reserve: { tokens: number; calls: number; timeMs: number };
}

/**
 * Plans a role turn, pure and total: validates the input (`invalid_input`: the schema, then the
 * mission id and role as safe names), picks the backend (the turn's, else the default;
 * `invalid_input` when it is not configured), declares the budget scopes and estimates the tokens
 * to reserve. Nothing is read or written.
 *
 * @example
 * ```ts
 * planRoleTurn({ missionId: "m1", role: "engineer", prompt: "Add the flag." }, settings)
 * // ok: { backendId: "codex", scopes: [{ id: "mission.m1", … }, { id: "role.engineer", … }], reserve: { tokens, calls: 1, timeMs } }
 * ```
 */
export function planRoleTurn<B>(input: unknown, settings: TurnPlanSettings<B>): Result<PlannedTurn<B>, KeelError> {
  const checked = validate(RoleTurnInputSchema, input, "role turn")
    .andThen((parsed) => parseSafeName(parsed.missionId, "mission id").map(() => parsed))
    .andThen((parsed) => parseSafeName(parsed.role, "role").map(() => parsed));
  if (checked.isErr()) return err(checked.error);
  const turn = checked.value;
  const backendId = turn.backend ?? settings.defaultBackend;
  const backend = backendId === undefined ? undefined : settings.backends.get(backendId);
  if (backendId === undefined || backend === undefined) return err(notConfigured(backendId, [...settings.backends.keys()]));
  const scopes: ScopeDeclaration[] = [
    { id: scopeId("mission", turn.missionId), limits: settings.limits.mission ?? null },
    { id: scopeId("role", turn.role), limits: settings.limits.role ?? null },
  ];
  // A declared budget binds the task's own scope, a child of the role's.
  if (turn.budget) scopes.push({ id: scopeId("task", `${turn.missionId}.${turn.taskId ?? turn.role}`), limits: turn.budget });
  const tokens = estimateTokens(`${turn.objective ?? ""}\n${turn.prompt}`) + settings.reserveOutputTokens;
  return ok({ turn, backendId, backend, scopes, reserve: { tokens, calls: 1, timeMs: settings.turnTimeoutMs } });
}

function notConfigured(backendId: string | undefined, configured: string[]): KeelError {
  const message =
    configured.length === 0
      ? "no backend is configured: pass backends to createKeel"
      : `backend "${String(backendId)}" is not configured; configured: ${configured.join(", ")}`;
  return new KeelError("invalid_input", message, { details: { backend: backendId ?? null, configured } });
}
