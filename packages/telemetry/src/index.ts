/**
 * `@keel/telemetry`: Keel's events kept and read back (an event log in a store, a JSONL sink and
 * reader), redacted, analysed and rendered as reports. The zod schemas and the constants are in
 * `@keel/telemetry/schemas`.
 *
 * @packageDocumentation
 */
export { analyzeEvents } from "./analysis.js";
export type {
  ActionCounts,
  EventAnalysis,
  PolicyAnalysis,
  RepeatedRead,
  RoleAnalysis,
  RoundAgreement,
  RoundVerdict,
  TurnPoint,
  VerdictAgreement,
} from "./analysis-types.js";
export { redactEvent } from "./event-redaction.js";
export type { RedactedContent } from "./event-redaction.js";
export { createEventLog } from "./event-log.js";
export type { EventLog, EventLogOptions } from "./event-log.js";
export type { EventSink } from "./event-sink.js";
export { parseEventsJsonl, readEventsJsonl } from "./jsonl-read.js";
export type { EventsJsonl, ReadEventsJsonlOptions, TornLine } from "./jsonl-read.js";
export { createJsonlEventSink } from "./jsonl-sink.js";
export type { JsonlEventSink, JsonlEventSinkOptions } from "./jsonl-sink.js";
export { renderReport, reportHeadline } from "./report-render.js";
export type { RenderReportOptions } from "./report-render.js";
export { analyzeWorkSessions } from "./work-session-analysis.js";
export type { AuditState, OutsideSessions, SessionSlice, TokenWindow, WorkSessionAnalysis } from "./work-session-analysis.js";
export { renderWorkSessionReport } from "./work-session-report.js";
