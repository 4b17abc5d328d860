import { z } from "zod";
import { COMPLEXITIES, IdSchema as SafeNameSchema, ProjectPathSchema, RISKS, TierSchema } from "./definition-schemas.js";
import { EvidenceSchema } from "./evidence.js";

/**
 * The request schemas of the workflow engine. They are the whole wire contract: an MCP server
 * or a CLI that takes JSON validates with these same schemas (and can turn them into JSON
 * Schema with `z.toJSONSchema`), so every surface refuses the same input the same way.
 */

/** A task id: a safe name of at most 120 characters (it names the task's budget scope). */
export const TaskIdSchema = SafeNameSchema.refine((id) => id.length <= 120, "a task id is at most 120 characters");

/** A run id as returned by `start`. */
export const RunIdSchema = SafeNameSchema;

/** A run version: every mutation carries the latest one. */
export const RunVersionSchema = z.number().int().min(1);

/**
 * A task: what to do (objective), with which workflow and profile, over which scope, at which
 * risk and complexity, and the evidence it starts from. `security_review` and `resource_review`
 * request those stages explicitly, whatever the risk and complexity. Under one `taskId`, the
 * objective, workflow, profile, scope, risk, complexity and flags cannot change.
 */
export const TaskSchema = z.strictObject({
  taskId: TaskIdSchema,
  objective: z.string().min(1).max(4000),
  workflow: SafeNameSchema,
  profile: SafeNameSchema.optional(),
  scope: z.array(ProjectPathSchema).max(64).default([]),
  risk: z.literal(RISKS).default("medium"),
  complexity: z.literal(COMPLEXITIES).default("medium"),
  security_review: z.boolean().optional(),
  resource_review: z.boolean().optional(),
  evidence: EvidenceSchema.default({}),
});

/** A task as given. */
export type TaskInput = z.input<typeof TaskSchema>;
/** A validated task. */
export type Task = z.output<typeof TaskSchema>;

/** What to do when a replayed journal record differs from the call about to be made. */
export const MismatchPolicySchema = z.literal(["pause", "fail", "rerun"]);

/** A mismatch policy: `pause` (default), `fail` or `rerun`. */
export type MismatchPolicy = z.output<typeof MismatchPolicySchema>;

/** A handoff packet: the bounded output of one skill, bound by digest to the task snapshot and sources. */
export const HandoffPacketSchema = z.strictObject({
  schemaVersion: z.literal(1),
  runId: RunIdSchema,
  stage: SafeNameSchema,
  skill: SafeNameSchema,
  role: SafeNameSchema,
  model: z.string().min(1).max(128),
  callIndex: z.number().int().nonnegative(),
  cycle: z.number().int().nonnegative(),
  taskDigest: z.string().max(80),
  sourceDigest: z.string().max(80),
  text: z.string().max(12_000),
  cut: z.boolean(),
});

/** A handoff packet. */
export type HandoffPacket = z.output<typeof HandoffPacketSchema>;

/** A handoff packet with the digest of its canonical JSON. */
export interface SignedPacket {
  digest: string;
  packet: HandoffPacket;
}

/**
 * The body of `step`: the latest version, fresh evidence, packets passed back, a lower tier cap,
 * a mismatch policy, and `continueHandoff` to continue a run handed off because a step was
 * interrupted (`outcome.reason: "interrupted"`): the interrupted stage's call then runs again,
 * paid again, by the caller's explicit choice.
 */
export const StepBodySchema = z.strictObject({
  version: RunVersionSchema,
  continueHandoff: z.boolean().optional(),
  evidence: EvidenceSchema.optional(),
  packets: z.array(z.strictObject({ digest: z.string().max(80), packet: HandoffPacketSchema })).max(32).optional(),
  tierCap: TierSchema.optional(),
  onMismatch: MismatchPolicySchema.optional(),
});

/** The body of `step` as given. */
export type StepBodyInput = z.input<typeof StepBodySchema>;

/** The actions of a checkpoint. */
export const CHECKPOINT_ACTIONS = ["accept", "reject", "revise", "abort"] as const;

/** A checkpoint action. */
export type CheckpointAction = (typeof CHECKPOINT_ACTIONS)[number];

/**
 * The body of `checkpoint`: the supervisor's decision. `revise` needs evidence; accepting the
 * final checkpoint with failed or unrun checks needs `acknowledgeUnverifiedChecks`.
 */
export const CheckpointBodySchema = z.strictObject({
  version: RunVersionSchema,
  action: z.literal(CHECKPOINT_ACTIONS),
  note: z.string().max(4000).optional(),
  evidence: EvidenceSchema.optional(),
  acknowledgeUnverifiedChecks: z.boolean().optional(),
  disposition: z.string().min(1).max(200).optional(),
});

/** The body of `checkpoint` as given. */
export type CheckpointBodyInput = z.input<typeof CheckpointBodySchema>;

/** The body of `abort`. */
export const AbortBodySchema = z.strictObject({ version: RunVersionSchema, note: z.string().max(4000).optional() });

/** The body of `abort` as given. */
export type AbortBodyInput = z.input<typeof AbortBodySchema>;

/** `step` as one request (what an MCP tool or `keel workflow step` takes). */
export const StepRequestSchema = StepBodySchema.extend({ runId: RunIdSchema });
/** `checkpoint` as one request. */
export const CheckpointRequestSchema = CheckpointBodySchema.extend({ runId: RunIdSchema });
/** `abort` as one request. */
export const AbortRequestSchema = AbortBodySchema.extend({ runId: RunIdSchema });
/** `status` as one request. */
export const StatusRequestSchema = z.strictObject({ runId: RunIdSchema });
/** `plan` and `start` as one request: a task. */
export const PlanRequestSchema = TaskSchema;
