export { analyzeEvents } from "./analysis.js";
export { EventAnalysisSchema } from "./analysis-types.js";
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
export {
  CONTENT_FIELD_NAMES,
  isContentField,
  isRedactedContent,
  redactEvent,
  redactValue,
} from "./event-redaction.js";
export type { RedactedContent } from "./event-redaction.js";
export { DEFAULT_EVENT_LOG_KEY, createEventLog } from "./event-log.js";
export type { EventLog, EventLogOptions } from "./event-log.js";
export { EventBaseSchema, KeelEventSchema, MAX_EVENT_TYPE_LENGTH } from "./event-schema.js";
export type { EventSink } from "./event-sink.js";
export { DEFAULT_MAX_EVENTS_FILE_BYTES, parseEventsJsonl, readEventsJsonl } from "./jsonl-read.js";
export type { EventsJsonl, ReadEventsJsonlOptions, TornLine } from "./jsonl-read.js";
export { DEFAULT_MAX_EVENT_BYTES, createJsonlEventSink } from "./jsonl-sink.js";
export type { JsonlEventSink, JsonlEventSinkOptions } from "./jsonl-sink.js";
export { renderReport, reportHeadline } from "./report-render.js";
export type { RenderReportOptions } from "./report-render.js";
export { analyzeWorkSessions } from "./work-session-analysis.js";
export type { AuditState, OutsideSessions, SessionSlice, TokenWindow, WorkSessionAnalysis } from "./work-session-analysis.js";
export { NO_DATA, renderWorkSessionReport } from "./work-session-report.js";
export { WorkSessionMarkEventSchema, WorkSessionOpenedEventSchema, WorkSessionTurnEventSchema } from "./event-schema.js";
