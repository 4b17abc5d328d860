import { MAX_RECORD_ID_LENGTH } from "@keel/store/kit";
import { z } from "zod";

/**
 * The entries of a transcript and their zod schemas.
 *
 * Every entry is a node of the session tree: `id`, `parentId` (`null` for a root) and `timestamp`
 * (ISO 8601). Message payloads keep pi's shapes (`user`, `assistant`, `toolResult`,
 * `bashExecution`, `custom` roles; `text`, `image`, `thinking`, `toolCall` blocks) so a pi
 * session file maps onto a transcript field for field. Objects are loose: a field a newer writer
 * added is kept and written back, never dropped.
 */

/** The longest entry id (the store's record id limit). */
export const MAX_ENTRY_ID_LENGTH: number = MAX_RECORD_ID_LENGTH;

// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/**
 * True for an entry id a store can keep as a record id: 1 to {@link MAX_ENTRY_ID_LENGTH}
 * characters, no control character (NUL included). The one check of the schemas and the fast path.
 */
export function isEntryId(value: unknown): value is string {
  return typeof value === "string" && value.length > 0 && value.length <= MAX_ENTRY_ID_LENGTH && !CONTROL_CHARACTER.test(value);
}

/** An entry id: see {@link isEntryId}. */
export const EntryIdSchema = z.string().refine(isEntryId, `an entry id is 1 to ${MAX_ENTRY_ID_LENGTH} characters without control characters`);

/** An ISO 8601 UTC or offset time to the second or finer, as `Date.prototype.toISOString` and pi write it. */
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * True for an ISO 8601 time (`2026-01-01T00:00:00.000Z`, or with an offset) that names a real
 * instant: the one check of entry and header timestamps, shared by the schemas and the fast path.
 */
export function isIsoTimestamp(value: unknown): value is string {
  return typeof value === "string" && value.length <= 40 && ISO_TIMESTAMP.test(value) && !Number.isNaN(Date.parse(value));
}

/** An entry's (or a pi header's) `timestamp`: see {@link isIsoTimestamp}. */
export const TimestampSchema = z.string().refine(isIsoTimestamp, "timestamp must be an ISO 8601 time such as 2026-01-01T00:00:00.000Z");

/** A text block. */
export const TextContentSchema = z.looseObject({ type: z.literal("text"), text: z.string() });
/** An image block (base64 data). */
export const ImageContentSchema = z.looseObject({ type: z.literal("image"), data: z.string(), mimeType: z.string() });
/** A thinking block of an assistant message. */
export const ThinkingContentSchema = z.looseObject({ type: z.literal("thinking"), thinking: z.string() });
/** A tool call of an assistant message. */
export const ToolCallContentSchema = z.looseObject({
  type: z.literal("toolCall"),
  id: z.string(),
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()),
});

const KNOWN_BLOCKS: Record<string, z.ZodType> = {
  text: TextContentSchema,
  image: ImageContentSchema,
  thinking: ThinkingContentSchema,
  toolCall: ToolCallContentSchema,
};

/** Any content block: a known block is checked by its schema, a block of another type is kept as it is. */
export const ContentBlockSchema = z.looseObject({ type: z.string() }).superRefine((block, context) => {
  const known = KNOWN_BLOCKS[block.type];
  if (!known) return;
  const parsed = known.safeParse(block);
  if (!parsed.success) for (const issue of parsed.error.issues) context.addIssue({ ...issue, code: "custom", message: issue.message });
});

/** A text block. */
export type TextContent = z.output<typeof TextContentSchema>;
/** An image block. */
export type ImageContent = z.output<typeof ImageContentSchema>;
/** A thinking block. */
export type ThinkingContent = z.output<typeof ThinkingContentSchema>;
/** A tool call block. */
export type ToolCallContent = z.output<typeof ToolCallContentSchema>;
/** Any content block (known ones are also one of the types above). */
export type ContentBlock = z.output<typeof ContentBlockSchema>;

/** Usage of one model call as pi records it on assistant messages (`normalizeUsage(…, "pi")` maps it to Keel's `Usage`). */
export const MessageUsageSchema = z.looseObject({
  input: z.number().nonnegative(),
  output: z.number().nonnegative(),
  cacheRead: z.number().nonnegative(),
  cacheWrite: z.number().nonnegative(),
  totalTokens: z.number().nonnegative().optional(),
  cost: z.looseObject({}).optional(),
});

/** A user message. */
export const UserMessageSchema = z.looseObject({
  role: z.literal("user"),
  content: z.union([z.string(), z.array(ContentBlockSchema)]),
  timestamp: z.number().optional(),
});
/** An assistant message, with the usage of the call that produced it. */
export const AssistantMessageSchema = z.looseObject({
  role: z.literal("assistant"),
  content: z.array(ContentBlockSchema),
  provider: z.string().optional(),
  model: z.string().optional(),
  usage: MessageUsageSchema.optional(),
  stopReason: z.string().optional(),
  errorMessage: z.string().optional(),
  timestamp: z.number().optional(),
});
/** The result of a tool call. `excludeFromContext` keeps its output out of the model's context. */
export const ToolResultMessageSchema = z.looseObject({
  role: z.literal("toolResult"),
  toolCallId: z.string(),
  toolName: z.string(),
  content: z.array(ContentBlockSchema),
  isError: z.boolean().optional(),
  excludeFromContext: z.boolean().optional(),
  timestamp: z.number().optional(),
});
/** A shell command the user ran (pi's `!cmd`); `excludeFromContext` (pi's `!!cmd`) keeps it out of the context. */
export const BashExecutionMessageSchema = z.looseObject({
  role: z.literal("bashExecution"),
  command: z.string(),
  output: z.string(),
  exitCode: z.number().nullable().optional(),
  cancelled: z.boolean().optional(),
  truncated: z.boolean().optional(),
  fullOutputPath: z.string().optional(),
  excludeFromContext: z.boolean().optional(),
  timestamp: z.number().optional(),
});
/** A message an extension sent (pi v3 `custom`, v2 `hookMessage`); reaches the model as user content. */
export const CustomRoleMessageSchema = z.looseObject({
  role: z.literal("custom"),
  customType: z.string(),
  content: z.union([z.string(), z.array(ContentBlockSchema)]),
  display: z.boolean().optional(),
  timestamp: z.number().optional(),
});

const KNOWN_ROLES = ["user", "assistant", "toolResult", "bashExecution", "custom"] as const;
/** A message of a role this version does not know: kept, never sent to the model. */
export const OtherRoleMessageSchema = z.looseObject({
  role: z.string().refine((role) => !(KNOWN_ROLES as readonly string[]).includes(role), "a known role must match its schema"),
});

/** Any message payload. */
export const MessageSchema = z.union([
  UserMessageSchema,
  AssistantMessageSchema,
  ToolResultMessageSchema,
  BashExecutionMessageSchema,
  CustomRoleMessageSchema,
  OtherRoleMessageSchema,
]);

/** A user message. */
export type UserMessage = z.output<typeof UserMessageSchema>;
/** An assistant message. */
export type AssistantMessage = z.output<typeof AssistantMessageSchema>;
/** A tool result. */
export type ToolResultMessage = z.output<typeof ToolResultMessageSchema>;
/** A user shell command and its output. */
export type BashExecutionMessage = z.output<typeof BashExecutionMessageSchema>;
/** An extension's message. */
export type CustomRoleMessage = z.output<typeof CustomRoleMessageSchema>;
/** Any stored message payload (a role this version does not know included). */
export type TranscriptMessage = z.output<typeof MessageSchema>;

const base = {
  id: EntryIdSchema,
  parentId: EntryIdSchema.nullable(),
  timestamp: TimestampSchema,
};

/** Where a summary came from: Keel's summarizer call, a hook that supplied it, or an imported file. */
export const SummarySourceSchema = z.union([z.literal("summarizer"), z.literal("hook"), z.literal("import")]);
/** Where a summary came from. */
export type SummarySource = z.output<typeof SummarySourceSchema>;

/** Files read and modified, carried by compactions and branch summaries. */
export const FileListsSchema = z.looseObject({
  readFiles: z.array(z.string()).optional(),
  modifiedFiles: z.array(z.string()).optional(),
});

/** The entry schemas, by type. */
export const ENTRY_SCHEMAS = {
  message: z.looseObject({ type: z.literal("message"), ...base, message: MessageSchema }),
  model_change: z.looseObject({ type: z.literal("model_change"), ...base, provider: z.string(), modelId: z.string() }),
  thinking_change: z.looseObject({ type: z.literal("thinking_change"), ...base, thinkingLevel: z.string() }),
  compaction: z.looseObject({
    type: z.literal("compaction"),
    ...base,
    summary: z.string(),
    firstKeptEntryId: EntryIdSchema,
    tokensBefore: z.number().nonnegative(),
    tokensAfter: z.number().nonnegative().optional(),
    details: z.unknown().optional(),
    source: SummarySourceSchema.optional(),
    summarizerUsage: z.unknown().optional(),
  }),
  branch_summary: z.looseObject({
    type: z.literal("branch_summary"),
    ...base,
    fromId: z.string(),
    summary: z.string(),
    details: z.unknown().optional(),
    source: SummarySourceSchema.optional(),
    summarizerUsage: z.unknown().optional(),
  }),
  custom: z.looseObject({ type: z.literal("custom"), ...base, customType: z.string(), data: z.unknown().optional() }),
  custom_message: z.looseObject({
    type: z.literal("custom_message"),
    ...base,
    customType: z.string(),
    content: z.union([z.string(), z.array(ContentBlockSchema)]),
    display: z.boolean(),
    details: z.unknown().optional(),
  }),
  label: z.looseObject({ type: z.literal("label"), ...base, targetId: EntryIdSchema, label: z.string().optional() }),
  session_info: z.looseObject({ type: z.literal("session_info"), ...base, name: z.string().optional() }),
} as const;

/** The entry types this version knows. */
export const ENTRY_TYPES = Object.keys(ENTRY_SCHEMAS) as readonly KnownEntryType[];

/** A known entry type. */
export type KnownEntryType = keyof typeof ENTRY_SCHEMAS;

/** A message entry. */
export type MessageEntry = z.output<(typeof ENTRY_SCHEMAS)["message"]>;
/** A model change: the model in force from here on. */
export type ModelChangeEntry = z.output<(typeof ENTRY_SCHEMAS)["model_change"]>;
/** A thinking level change (pi's `thinking_level_change`). */
export type ThinkingChangeEntry = z.output<(typeof ENTRY_SCHEMAS)["thinking_change"]>;
/** A compaction: the summary replaces everything on the path before `firstKeptEntryId`. */
export type CompactionEntry = z.output<(typeof ENTRY_SCHEMAS)["compaction"]>;
/** A summary of an abandoned branch, attached where the conversation came back to. */
export type BranchSummaryEntry = z.output<(typeof ENTRY_SCHEMAS)["branch_summary"]>;
/** Host state; never reaches the model. */
export type CustomEntry = z.output<(typeof ENTRY_SCHEMAS)["custom"]>;
/** A host message that reaches the model as user content (`display` only affects UIs). */
export type CustomMessageEntry = z.output<(typeof ENTRY_SCHEMAS)["custom_message"]>;
/** Sets (or, without `label`, clears) the label of `targetId`. */
export type LabelEntry = z.output<(typeof ENTRY_SCHEMAS)["label"]>;
/** Session metadata (a display name). */
export type SessionInfoEntry = z.output<(typeof ENTRY_SCHEMAS)["session_info"]>;

/** Any entry of a known type. */
export type KnownTranscriptEntry =
  | MessageEntry
  | ModelChangeEntry
  | ThinkingChangeEntry
  | CompactionEntry
  | BranchSummaryEntry
  | CustomEntry
  | CustomMessageEntry
  | LabelEntry
  | SessionInfoEntry;

/** An entry of a type a newer writer added: kept and written back, ignored by the projection. */
export interface UnknownTranscriptEntry {
  type: string;
  id: string;
  parentId: string | null;
  timestamp: string;
  [field: string]: unknown;
}

/** Any entry. Narrow with {@link isKnownEntry} before switching on `type`. */
export type TranscriptEntry = KnownTranscriptEntry | UnknownTranscriptEntry;

/** The schema of an entry of a type this version does not know. */
export const UnknownEntrySchema = z.looseObject({
  type: z.string().min(1, "an entry needs a type"),
  ...base,
});

const KNOWN_TYPE_SET: ReadonlySet<string> = new Set(ENTRY_TYPES);

/** True for an entry of a type this version knows (and so validated by its schema); false for anything else, never a throw. */
export function isKnownEntry(entry: TranscriptEntry): entry is KnownTranscriptEntry {
  if (typeof entry !== "object" || entry === null) return false;
  try {
    return KNOWN_TYPE_SET.has(entry.type);
  } catch {
    // A proxy or a getter whose read throws is no entry.
    return false;
  }
}

/** True for a known entry type name. */
export function isKnownEntryType(type: string): type is KnownEntryType {
  return KNOWN_TYPE_SET.has(type);
}

/** Drops the tree fields of an entry type, keeping its named fields. */
export type WithoutTreeFields<T> = { [P in keyof T as P extends "id" | "parentId" | "timestamp" ? never : P]: T[P] };

/**
 * What {@link Transcript.append} takes: an entry without its tree fields. The transcript assigns
 * `parentId` (the leaf), and `id` and `timestamp` unless given.
 */
export type TranscriptEntryInput = (
  | WithoutTreeFields<MessageEntry>
  | WithoutTreeFields<ModelChangeEntry>
  | WithoutTreeFields<ThinkingChangeEntry>
  | WithoutTreeFields<CompactionEntry>
  | WithoutTreeFields<BranchSummaryEntry>
  | WithoutTreeFields<CustomEntry>
  | WithoutTreeFields<CustomMessageEntry>
  | WithoutTreeFields<LabelEntry>
  | WithoutTreeFields<SessionInfoEntry>
) & { id?: string; timestamp?: string };
