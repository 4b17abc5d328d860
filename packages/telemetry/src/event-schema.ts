import { UsageSchema, findNonJson, type KeelEvent } from "@keel/core";
import { z } from "zod";

/** The longest event `type` accepted (dotted names are short; this only bounds junk). */
export const MAX_EVENT_TYPE_LENGTH = 200;

const count = z.number().int().nonnegative();
const text = z.string();

/**
 * The shape every recorded event has: a `type` (a dotted name such as `role.session.turn`, or a
 * host's own name for a custom event) and `at` (epoch milliseconds). Other fields pass through.
 */
export const EventBaseSchema = z.looseObject({
  type: z.string().min(1).max(MAX_EVENT_TYPE_LENGTH),
  at: z.number().finite().nonnegative(),
});

/**
 * The fields of `role.session.turn` that telemetry reads (the analysis depends on them).
 * Fields the catalogue may gain later pass through.
 */
export const RoleSessionTurnEventSchema = EventBaseSchema.extend({
  type: z.literal("role.session.turn"),
  missionId: text,
  role: text.min(1),
  policy: text.min(1),
  action: z.enum(["fresh", "resumed", "rotated"]),
  rotationReason: text,
  promptBytes: count,
  usage: UsageSchema.nullable(),
  turn: count,
});

/** The fields of `agent.io.read` / `agent.io.write` / `agent.io.search` that telemetry reads. */
export const AgentIoEventSchema = EventBaseSchema.extend({
  type: z.enum(["agent.io.read", "agent.io.write", "agent.io.search"]),
  role: text.min(1),
  missionId: text.nullable(),
  path: text,
  bytes: count,
});

/** The fields of `round.review.completed` that telemetry reads. */
export const RoundReviewCompletedEventSchema = EventBaseSchema.extend({
  type: z.literal("round.review.completed"),
  missionId: text,
  round: count,
  verdict: text,
  reviewerPromptBytes: count,
  policy: text.min(1).optional(),
});

const nullableText = text.min(1).nullable();
const nullableCount = count.nullable();

/** The fields of `work.session.opened` that telemetry reads. */
export const WorkSessionOpenedEventSchema = EventBaseSchema.extend({
  type: z.literal("work.session.opened"),
  missionId: text.min(1),
  role: nullableText,
  sessionId: text.min(1),
  model: nullableText,
});

/** The fields of `work.session.turn` that telemetry reads: unknown usage and tool calls are `null`, never 0. */
export const WorkSessionTurnEventSchema = EventBaseSchema.extend({
  type: z.literal("work.session.turn"),
  missionId: text.min(1),
  role: text.min(1),
  sessionId: nullableText,
  tokens: nullableCount,
  toolCalls: nullableCount,
  /** The turn's model against its session's pin; absent in logs written before it. */
  modelPin: z.union([z.literal("match"), z.literal("mismatch"), z.literal("unknown")]).nullable().optional(),
  taskId: nullableText,
});

/** The fields of `work.session.closed`, `work.session.model_mismatch` and the audit events that telemetry reads. */
export const WorkSessionMarkEventSchema = EventBaseSchema.extend({
  type: z.literal(["work.session.closed", "work.session.model_mismatch", "work.session.audit_due", "work.session.audited"]),
  missionId: text.min(1),
  sessionId: text.min(1).optional(),
});

const CHECKED_TYPES: Record<string, z.ZodType> = {
  "work.session.opened": WorkSessionOpenedEventSchema,
  "work.session.turn": WorkSessionTurnEventSchema,
  "work.session.closed": WorkSessionMarkEventSchema.extend({ sessionId: text.min(1) }),
  "work.session.model_mismatch": WorkSessionMarkEventSchema.extend({ sessionId: text.min(1) }),
  "work.session.audit_due": WorkSessionMarkEventSchema,
  "work.session.audited": WorkSessionMarkEventSchema,
  "role.session.turn": RoleSessionTurnEventSchema,
  "agent.io.read": AgentIoEventSchema,
  "agent.io.write": AgentIoEventSchema,
  "agent.io.search": AgentIoEventSchema,
  "round.review.completed": RoundReviewCompletedEventSchema,
};

/**
 * zod schema of one recorded Keel event. Every event must be a plain JSON object with `type` and
 * `at`; the event types that the analysis reads (`role.session.turn`, `agent.io.*`,
 * `round.review.completed`) must also carry their fields with the right types. Any other type —
 * the rest of the catalogue, or a host's custom event — is kept with its base shape checked.
 */
export const KeelEventSchema: z.ZodType<KeelEvent> = EventBaseSchema.superRefine((event, context) => {
  const problem = findNonJson(event);
  if (problem) {
    context.addIssue({ code: "custom", message: `event is not plain JSON: ${problem}` });
    return;
  }
  const schema = CHECKED_TYPES[event.type];
  if (!schema) return;
  const parsed = schema.safeParse(event);
  if (parsed.success) return;
  for (const issue of parsed.error.issues) {
    context.addIssue({ code: "custom", path: issue.path, message: issue.message });
  }
}) as unknown as z.ZodType<KeelEvent>;
