import { validate, type EventBus, type KeelError } from "@keel/core";
import { ResultAsync, errAsync } from "neverthrow";
import { z } from "zod";
import type { RoleTurnInput, RoleTurnResult } from "./role-turn.js";
import { TurnOptionsSchema, type TurnOptions } from "./turn-options.js";

/** What the roles of a round have produced so far. */
export interface RoundContext {
  round: number;
  planner?: RoleTurnResult;
  engineer?: RoleTurnResult;
}

/** One role's part in a round. */
export interface RoundRoleInput {
  /** The role's task, or a function of what the earlier roles of the round produced. */
  prompt: string | ((context: RoundContext) => string);
  /** The role name (default `planner`, `engineer`, `reviewer`). */
  role?: string;
  /** The backend id of this role (default: the runtime's default). */
  backend?: string;
  /** The model of this role. */
  model?: string | null;
}

/** What {@link Keel.runRound} is asked. */
export interface RoundInput {
  missionId: string;
  /** The round number (1-based). */
  round: number;
  objective?: string;
  objectiveRevision?: number | string;
  branch?: string | null;
  planner: RoundRoleInput;
  engineer: RoundRoleInput;
  reviewer: RoundRoleInput;
  /** Reads the verdict from the reviewer's answer. Default {@link readVerdict}. */
  verdictOf?: (text: string) => string;
}

/** What a round produced. */
export interface RoundResult {
  round: number;
  planner: RoleTurnResult;
  engineer: RoleTurnResult;
  reviewer: RoleTurnResult;
  /** The reviewer's verdict (lower case), `none` when it gave none. */
  verdict: string;
}

const RoleSchema = z.strictObject({
  prompt: z.union([z.string().min(1), z.custom<(context: RoundContext) => string>((value) => typeof value === "function")]),
  role: z.string().optional(),
  backend: z.string().optional(),
  model: z.string().nullable().optional(),
});

const RoundSchema = z.strictObject({
  missionId: z.string(),
  round: z.number().int().positive(),
  objective: z.string().optional(),
  objectiveRevision: z.union([z.number(), z.string()]).optional(),
  branch: z.string().nullable().optional(),
  planner: RoleSchema,
  engineer: RoleSchema,
  reviewer: RoleSchema,
  verdictOf: z.custom<(text: string) => string>((value) => typeof value === "function").optional(),
});

/** Reads `Verdict: <word>` from a reviewer's answer (case-insensitive); `none` when absent. */
export function readVerdict(text: string): string {
  const match = /^\s*verdict\s*:\s*([A-Za-z_-]+)/im.exec(text);
  return match ? match[1]!.toLowerCase() : "none";
}

/**
 * Makes `runRound` from a `runRoleTurn`. The round's {@link TurnOptions} are passed to each turn
 * as they are: an aborted signal fails the turn in progress with `aborted`, and the round stops there.
 */
export function createRoundRunner(parts: {
  runRoleTurn: (input: RoleTurnInput, options?: TurnOptions) => ResultAsync<RoleTurnResult, KeelError>;
  events: EventBus;
}): (input: RoundInput, options?: TurnOptions) => ResultAsync<RoundResult, KeelError> {
  return (input, options = {}) => {
    const checked = validate(RoundSchema, input, "round");
    if (checked.isErr()) return errAsync(checked.error);
    const checkedOptions = validate(TurnOptionsSchema, options, "round options");
    if (checkedOptions.isErr()) return errAsync(checkedOptions.error);
    const context: RoundContext = { round: input.round };
    const step = (part: RoundRoleInput, fallbackRole: string) => {
      const prompt = typeof part.prompt === "function" ? part.prompt(context) : part.prompt;
      return parts.runRoleTurn({
        missionId: input.missionId,
        role: part.role ?? fallbackRole,
        prompt,
        ...(input.objective !== undefined ? { objective: input.objective } : {}),
        ...(input.objectiveRevision !== undefined ? { objectiveRevision: input.objectiveRevision } : {}),
        ...(input.branch !== undefined ? { branch: input.branch } : {}),
        ...(part.backend !== undefined ? { backend: part.backend } : {}),
        ...(part.model !== undefined ? { model: part.model } : {}),
      }, options);
    };
    return step(input.planner, "planner").andThen((planner) => {
      context.planner = planner;
      return step(input.engineer, "engineer").andThen((engineer) => {
        context.engineer = engineer;
        return step(input.reviewer, "reviewer").map((reviewer): RoundResult => {
          const verdict = (input.verdictOf ?? readVerdict)(reviewer.text);
          parts.events.emit({
            type: "round.review.completed",
            missionId: input.missionId,
            round: input.round,
            verdict,
            reviewerPromptBytes: reviewer.promptBytes,
            policy: reviewer.plan.policy,
          });
          return { round: input.round, planner, engineer, reviewer, verdict };
        });
      });
    });
  };
}
