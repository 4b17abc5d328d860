import { KeelError, utf8Bytes, validate } from "@keel/core";
import { CheckpointRequestSchema, EVIDENCE_LIMITS, PlanRequestSchema, StatusRequestSchema, StepRequestSchema, TaskSchema } from "@keel/workflow/schemas";
import { err, ok, type Result } from "neverthrow";
import { z } from "zod";

/** `workflow_catalog` takes no arguments: it inspects the host's catalog (built-ins plus the project directory). */
export const CatalogRequestSchema = z.strictObject({});

/** The six workflow operations a supervising agent drives, by their CLI subcommand name. */
export const WORKFLOW_OPERATIONS = ["catalog", "plan", "start", "step", "checkpoint", "status"] as const;

/** A workflow operation. */
export type WorkflowOperation = (typeof WORKFLOW_OPERATIONS)[number];

/** One workflow operation as a tool: its MCP name, what it does, and the engine's own request schema. */
export interface WorkflowToolSpec {
  operation: WorkflowOperation;
  /** The MCP tool name (`workflow_<operation>`). */
  name: string;
  description: string;
  schema: z.ZodType;
}

/** Every workflow tool, in the order a run uses them. The schemas are the engine's, unchanged. */
export const WORKFLOW_TOOLS: readonly WorkflowToolSpec[] = Object.freeze([
  { operation: "catalog", name: "workflow_catalog", schema: CatalogRequestSchema, description: "Inspect the workflow definitions (built-in plus the project catalog directory): ids of skills, roles, workflows and profiles, and every validation issue with its file and path. Writes nothing." },
  { operation: "plan", name: "workflow_plan", schema: PlanRequestSchema, description: "Resolve a task's workflow without writing anything: the stages (skipped ones with the reason), their roles, skills and a first look at model routing." },
  { operation: "start", name: "workflow_start", schema: TaskSchema, description: "Start a run for a task (or get the live run of the same taskId). Answers the run's status at version 1; keep its runId and version." },
  { operation: "step", name: "workflow_step", schema: StepRequestSchema, description: "Run local stages until a checkpoint, a handoff or an end. Give the run's latest version; pass back the handoff packets (digest and packet) of earlier answers. A stale version is refused with conflict." },
  { operation: "checkpoint", name: "workflow_checkpoint", schema: CheckpointRequestSchema, description: "The supervisor's decision at a checkpoint: accept, reject, revise (with new evidence) or abort, at the run's latest version. The final accept with failed or unrun checks needs acknowledgeUnverifiedChecks." },
  { operation: "status", name: "workflow_status", schema: StatusRequestSchema, description: "The run's bounded status: stages, attempts, corrections, packets, budget, lease and the outcome with what to do. Writes nothing." },
]);

/** What to do after a refusal, by error code (every refusal carries one). */
export function whatToDo(error: KeelError): string {
  const reason = typeof error.details["reason"] === "string" ? error.details["reason"] : undefined;
  if (error.code === "conflict" && reason === "source_changed") return "evidence files changed since the run last saw them: step again with fresh evidence";
  if (error.code === "conflict" && (reason === "catalog_changed" || reason === "routing_changed")) return "restore the definitions or model registry the run was planned with, or abort the run and start the task again";
  switch (error.code) {
    case "conflict":
      return "read workflow_status and repeat the call with the run's latest version (or the state it asks for)";
    case "too_large":
      return `send at most ${EVIDENCE_LIMITS.requestBytes} bytes: less evidence, or files by path and line range instead of their text`;
    case "invalid_input":
      return "fix the request: details.issues names each path and what is wrong; the tool's input schema is the contract";
    case "not_found":
      return "check the runId (workflow_start answers it) and the store the host was started with";
    case "lease_held":
      return "another step holds this run: wait for it to end (or its lease to expire) and step again";
    case "budget_exceeded":
    case "limit_exceeded":
      return "the budget or a limit is spent: raise the limit in the definition or host config, or end the run";
    case "unavailable":
    case "timeout":
    case "backend_failed":
      return "the stage's model call failed: check the host's executor config, then step again";
    default:
      return "see the message and details; workflow_status shows the run's state";
  }
}

/** A refusal as plain JSON: the code, the message, what to do, and the details. */
export function refusalOf(error: KeelError): { error: { code: string; message: string; whatToDo: string; retryable: boolean; details: Record<string, unknown> } } {
  return { error: { code: error.code, message: error.message, whatToDo: whatToDo(error), retryable: error.retryable, details: error.details } };
}

/**
 * Parses a request's JSON text: over 200,000 bytes is `too_large` (nothing is parsed), text
 * that is not JSON is `invalid_input`.
 */
export function parseRequestText(text: string): Result<unknown, KeelError> {
  const bytes = utf8Bytes(text);
  if (bytes > EVIDENCE_LIMITS.requestBytes) return err(tooLarge(bytes));
  try {
    return ok(JSON.parse(text) as unknown);
  } catch (error) {
    return err(new KeelError("invalid_input", `the request is not JSON: ${(error as Error).message}`, { details: { what: "request" } }));
  }
}

/** Refuses a request value whose JSON passes 200,000 bytes, then validates it with the operation's schema. */
export function validateRequest(spec: WorkflowToolSpec, input: unknown): Result<Record<string, unknown>, KeelError> {
  let text: string | undefined;
  try {
    text = JSON.stringify(input ?? {});
  } catch {
    return err(new KeelError("invalid_input", "the request must be plain JSON", { details: { what: spec.name } }));
  }
  const bytes = utf8Bytes(text ?? "");
  if (bytes > EVIDENCE_LIMITS.requestBytes) return err(tooLarge(bytes));
  return validate(spec.schema, input ?? {}, `${spec.name} request`) as Result<Record<string, unknown>, KeelError>;
}

function tooLarge(bytes: number): KeelError {
  return new KeelError("too_large", `the request is ${bytes} bytes, over the limit of ${EVIDENCE_LIMITS.requestBytes}`, { details: { bytes, limit: EVIDENCE_LIMITS.requestBytes } });
}
