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
  isKnownEntry,
  isKnownEntryType,
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
  KnownTranscriptEntry,
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
  TranscriptEntry,
  TranscriptEntryInput,
  TranscriptMessage,
  UnknownTranscriptEntry,
  UserMessage,
  WithoutTreeFields,
} from "./entry-schema.js";
export { parseEntry } from "./entry-parse.js";
export {
  BRANCH_SUMMARY_PREFIX,
  BRANCH_SUMMARY_SUFFIX,
  COMPACTION_SUMMARY_PREFIX,
  COMPACTION_SUMMARY_SUFFIX,
  DEFAULT_THINKING_LEVEL,
  EXCLUDED_OUTPUT_TEXT,
  bashExecutionText,
  buildContextFromPath,
  compactionMessage,
  entryToContextMessage,
} from "./context-build.js";
export type { ContextMessage, ContextModel, TranscriptContext } from "./context-build.js";
export { checkForest, createTranscriptTree } from "./transcript-tree.js";
export type { TranscriptTree } from "./transcript-tree.js";
export { TRANSCRIPT_FORMAT_VERSION, TranscriptHeadSchema, TranscriptParentSchema, entriesKey, headKey } from "./transcript-head.js";
export type { TranscriptHead, TranscriptParent } from "./transcript-head.js";
export { openTranscript } from "./transcript-open.js";
export type { ForkOptions, OpenTranscriptOptions, Transcript } from "./transcript-open.js";
export { PI_SESSION_VERSION, importPiSession } from "./pi-session-import.js";
export type { ImportPiSessionOptions, ImportedPiSession, PiImportDiagnostic, PiSessionHeader } from "./pi-session-import.js";
export { exportPiSession } from "./pi-session-export.js";
export type { ExportPiSessionOptions, PiExportSource } from "./pi-session-export.js";
export { importPiSessionToStore } from "./pi-session-store.js";
export type { ImportPiSessionToStoreOptions } from "./pi-session-store.js";
export { IMAGE_TOKENS, estimateEntryTokens, estimateMessageTokens } from "./compaction-tokens.js";
export { MODIFYING_TOOLS, createFileTracker, formatFileOperations, normalizeFilePath } from "./compaction-files.js";
export type { FileOperations, FileTracker } from "./compaction-files.js";
export { CompactionPlanSchema, isTurnStart, planCompaction, toolPairBlocks } from "./compaction-plan.js";
export type { CompactionPlan, CompactionSpan, PlanCompactionOptions } from "./compaction-plan.js";
export { REQUIRED_SECTIONS, SUMMARY_SYSTEM_PROMPT, TOOL_RESULT_MAX_CHARS, buildSummaryPrompt, serializeConversation } from "./summary-prompt.js";
export type { SummaryKind, SummaryPromptInput } from "./summary-prompt.js";
export { checkSummary } from "./summarizer.js";
export type { Summarizer, SummaryRequest, SummaryResponse } from "./summarizer.js";
export { compact, compactTranscript } from "./compaction-compact.js";
export type { CompactOptions, CompactTranscriptOptions, CompactionInput } from "./compaction-compact.js";
export type { BeforeCompactionEvent, BeforeNavigationEvent, HookDecision, TranscriptHooks } from "./transcript-hooks.js";
export { BRANCH_SUMMARY_PREAMBLE, abandonedBranch, navigateTranscript } from "./transcript-navigate.js";
export type { NavigateOptions, NavigationResult } from "./transcript-navigate.js";
export { TRUNCATION_MARKER, compactAgentHistory } from "./agent-history.js";
export type { AgentHistoryItem, AgentHistoryLimits, CompactedAgentHistory } from "./agent-history.js";
