import type { KeelError } from "@keel/core";
import type { Result, ResultAsync } from "neverthrow";
import type { Model } from "./model-select.js";

/** One model call the engine asks the host to make: a skill of a stage, on a chosen model. */
export interface StageCall {
  runId: string;
  taskId: string;
  stage: string;
  role: string;
  skill: string;
  /** The model routing chose (the host maps it to a backend). */
  model: Model;
  /** The attempt within the stage, from 1 (counted across all its skills). */
  attempt: number;
  /** The journal index of this call. */
  callIndex: number;
  /** The whole serialized prompt: role, skill, objective, evidence and the packets that feed it. */
  prompt: string;
  /** The output allowance in UTF-8 bytes (longer output is cut with a marker). */
  outputBytes: number;
  /** The role's timeout for this call. */
  timeoutMs: number;
}

/** What the host reports for a call. Unknown usage stays `null`, never 0. */
export interface StageResult {
  /** The model's answer (becomes the skill's handoff packet, bounded). */
  text: string;
  /** Tokens used, when known. */
  tokens?: number | null;
  /** Cost in micro-USD, when known. */
  costMicroUsd?: number | null;
  /** Wall time of the call in ms, when known (unused reserved time is refunded). */
  durationMs?: number;
}

/**
 * The host's way to run a stage's call: on a `Backend` from `@keel/backends`, a role session of
 * `@keel/sessions`, or anything else. The engine never imports a backend. An error fails the
 * attempt (a stronger model may be tried if the role allows escalation and attempts are left).
 */
export type ExecuteStage = (call: StageCall) => ResultAsync<StageResult, KeelError> | Promise<Result<StageResult, KeelError>>;
