/**
 * `@keel/transcript/schemas`: the zod schemas of entries, messages and the stored head, the
 * constants Keel writes into a context or a summary prompt, and the types of each entry,
 * message and content block. The main entry, `@keel/transcript`, holds what a host writes
 * against: `openTranscript`, compaction, navigation and the pi session files.
 *
 * @packageDocumentation
 */
export {
  AssistantMessageSchema,
  BashExecutionMessageSchema,
  ContentBlockSchema,
  CustomRoleMessageSchema,
  ENTRY_SCHEMAS,
  ENTRY_TYPES,
  FileListsSchema,
  ImageContentSchema,
  MAX_ENTRY_ID_LENGTH,
  MessageSchema,
  MessageUsageSchema,
  OtherRoleMessageSchema,
  SummarySourceSchema,
  TextContentSchema,
  ThinkingContentSchema,
  ToolCallContentSchema,
  ToolResultMessageSchema,
  UnknownEntrySchema,
  UserMessageSchema,
} from "./entry-schema.js";
export type {
  AssistantMessage,
  BashExecutionMessage,
  BranchSummaryEntry,
  CompactionEntry,
  ContentBlock,
  CustomEntry,
  CustomMessageEntry,
  CustomRoleMessage,
  ImageContent,
  KnownEntryType,
  LabelEntry,
  MessageEntry,
  ModelChangeEntry,
  SessionInfoEntry,
  SummarySource,
  TextContent,
  ThinkingChangeEntry,
  ThinkingContent,
  ToolCallContent,
  ToolResultMessage,
  UnknownTranscriptEntry,
  UserMessage,
  WithoutTreeFields,
} from "./entry-schema.js";
export {
  BRANCH_SUMMARY_PREFIX,
  BRANCH_SUMMARY_SUFFIX,
  COMPACTION_SUMMARY_PREFIX,
  COMPACTION_SUMMARY_SUFFIX,
  DEFAULT_THINKING_LEVEL,
  EXCLUDED_OUTPUT_TEXT,
} from "./context-build.js";
export type { ContextModel } from "./context-build.js";
export { TRANSCRIPT_FORMAT_VERSION, TranscriptHeadSchema, TranscriptParentSchema } from "./transcript-head.js";
export type { TranscriptHead, TranscriptParent } from "./transcript-head.js";
export { PI_SESSION_VERSION } from "./pi-session-import.js";
export type { PiImportDiagnostic, PiSessionHeader } from "./pi-session-import.js";
export type { PiExportSource } from "./pi-session-export.js";
export { IMAGE_TOKENS } from "./compaction-tokens.js";
export { MODIFYING_TOOLS } from "./compaction-files.js";
export { CompactionPlanSchema } from "./compaction-plan.js";
export type { CompactionSpan } from "./compaction-plan.js";
export type { FileOperations } from "./compaction-files.js";
export type { CompactionInput } from "./compaction-compact.js";
export { REQUIRED_SECTIONS, SUMMARY_SYSTEM_PROMPT, TOOL_RESULT_MAX_CHARS } from "./summary-prompt.js";
export type { SummaryKind } from "./summary-prompt.js";
export { BRANCH_SUMMARY_PREAMBLE } from "./transcript-navigate.js";
