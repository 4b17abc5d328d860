/**
 * `@keel/transcript`: a host's conversation as an append-only session tree on any Keel store.
 * What a host writes against: `openTranscript` and the `Transcript` it answers, compaction,
 * navigation, the summarizer, pi session files and the checks under them. The zod schemas,
 * constants and the types of each entry and message are in `@keel/transcript/schemas`.
 *
 * @packageDocumentation
 */
export { openTranscript } from "./transcript-open.js";
export type { Transcript } from "./transcript-open.js";
export type { ForkOptions, OpenTranscriptOptions } from "./transcript-options.js";
export { isKnownEntry } from "./entry-schema.js";
export type { KnownTranscriptEntry, TranscriptEntry, TranscriptEntryInput, TranscriptMessage } from "./entry-schema.js";
export { parseEntry } from "./entry-parse.js";
export type { ContextMessage, TranscriptContext } from "./context-build.js";
export { checkForest, createTranscriptTree } from "./transcript-tree.js";
export type { TranscriptTree } from "./transcript-tree.js";
export { isTurnStart, planCompaction } from "./compaction-plan.js";
export type { CompactionPlan, PlanCompactionOptions } from "./compaction-plan.js";
export { compact } from "./compaction-compact.js";
export type { CompactOptions, CompactTranscriptOptions } from "./compaction-compact.js";
export { checkSummary } from "./summarizer.js";
export type { Summarizer, SummaryRequest, SummaryResponse } from "./summarizer.js";
export type { BeforeCompactionEvent, BeforeNavigationEvent, HookDecision, TranscriptHooks } from "./transcript-hooks.js";
export type { NavigateOptions, NavigationResult } from "./transcript-navigate.js";
export { importPiSession } from "./pi-session-import.js";
export type { ImportPiSessionOptions, ImportedPiSession } from "./pi-session-import.js";
export { exportPiSession } from "./pi-session-export.js";
export type { ExportPiSessionOptions } from "./pi-session-export.js";
export { importPiSessionToStore } from "./pi-session-store.js";
export type { ImportPiSessionToStoreOptions } from "./pi-session-store.js";
export { compactAgentHistory } from "./agent-history.js";
export type { AgentHistoryItem, AgentHistoryLimits, CompactedAgentHistory } from "./agent-history.js";
