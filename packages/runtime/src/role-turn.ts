import type { Usage } from "@keel/core";
import type { Limits } from "@keel/budget";
import { LimitsSchema } from "@keel/budget/schemas";
import type { SessionWarning, TurnPlan } from "@keel/sessions";
import type { SkillDeliveryMode } from "@keel/skills";
import { z } from "zod";
import type { BackendFileAccess } from "@keel/backend";

/**
 * What {@link Keel.runRoleTurn} is asked: the runtime layer's request. The runtime turns it into
 * role sessions' `RoleSessionTurnRequest` and the backend's `BackendTurnRequest`, one layer each.
 */
export interface RoleTurnInput {
  /** The mission (a safe name). */
  missionId: string;
  /** The role (a safe name), e.g. `planner`, `engineer`, `reviewer`. */
  role: string;
  /** What this turn asks of the role (the new part). */
  prompt: string;
  /** The mission objective: sent on fresh and rotated turns. */
  objective?: string;
  /** The objective revision (default 1): a change rotates the role's thread. */
  objectiveRevision?: number | string;
  /** The repository branch, if any: a change rotates the role's thread. */
  branch?: string | null;
  /** The model, if the host picks one: a change rotates the role's thread. */
  model?: string | null;
  /** The backend id (default: the runtime's default backend). */
  backend?: string;
  /**
   * The task's declared budget. With one, the turn needs an open work session with capacity
   * left (the capacity gate: `no_session`, `capacity_refused`), and its limits bind the task's
   * own budget scope. Without one, the turn runs as before.
   */
  budget?: Limits | null;
  /** The task the turn works on (counted per work session; names the task's budget scope). */
  taskId?: string | null;
}

/** zod schema of {@link RoleTurnInput}. */
export const RoleTurnInputSchema = z.strictObject({
  missionId: z.string(),
  role: z.string(),
  prompt: z.string().min(1, "the prompt must not be empty"),
  objective: z.string().optional(),
  objectiveRevision: z.union([z.number().int().nonnegative(), z.string().min(1).max(128)]).optional(),
  branch: z.string().min(1).max(512).nullable().optional(),
  model: z.string().min(1).max(256).nullable().optional(),
  backend: z.string().optional(),
  budget: LimitsSchema.nullable().optional(),
  taskId: z.string().min(1).max(200).nullable().optional(),
});

/** What a role turn produced: the runtime layer's result (beside `RoleSessionTurnResult` and `BackendTurnResult`). */
export interface RoleTurnResult {
  /** The model's answer. */
  text: string;
  /** The provider thread it ran on, or `null`. */
  threadId: string | null;
  /** Normalized usage (unknown buckets `null`). */
  usage: Usage | null;
  /** Total input tokens observed, or `null` when unknown. */
  inputTokens: number | null;
  /** Bytes of the prompt sent (for a resumed turn, only the new part). */
  promptBytes: number;
  /** The session plan the turn ran with (after a resume fallback, the fresh one). */
  plan: TurnPlan;
  /** The backend's own time for the turn, in ms. */
  durationMs: number;
  /**
   * The file reads, writes and searches the agent's tool calls made in the turn, as the backend
   * saw them (`BackendTurnResult.fileAccess`); `agent.io.*` events are emitted from these.
   */
  fileAccess: BackendFileAccess[];
  /**
   * How many tool calls the agent made in the turn (`BackendTurnResult.toolCalls`): what
   * work-session hygiene counts. `null` when the backend could not see them: unknown, never 0.
   */
  toolCalls: number | null;
  /** How the role's skills reached the backend, or `null` without skills. */
  skillDelivery: SkillDeliveryMode | null;
  /** Persistence and accounting warnings; none of them changed the result. */
  warnings: RuntimeWarning[];
  /**
   * True when the turn was superseded: the role's lease was lost while it ran (another host took
   * the role over after this one stalled past the lease's time to live, see
   * `KeelOptions.roleLease`), so its capsule and checkpoint writes were refused `lease_lost`.
   * The answer stands — the work happened, and the budget was charged for it — but the role's
   * state does not record it: its next turn, here or on the host that took over, does not know
   * this one, and `plan.turn` is only the number it planned. `warnings` then holds a `lease`
   * warning (`lost`, `lease_lost`), and `role.session.turn` says `superseded: true`,
   * `capsuleWritten: false`.
   */
  superseded: boolean;
  /** The work session the turn was counted in, or `null` when none was open. */
  workSessionId: string | null;
}

/** A warning of the runtime: a session persistence warning, or a budget settlement problem. */
export type RuntimeWarning = SessionWarning | { target: "budget" | "skills" | "instructions" | "backend" | "work_session" | "checkpoint"; operation: string; code: string; message: string };
