/**
 * `@keel/telemetry/schemas`: the zod schemas of events and of an event analysis, and the
 * constants and defaults the logs, sinks and reports use. The main entry, `@keel/telemetry`,
 * holds what a host writes against: the event log, the JSONL sink and reader, the analyses and
 * the reports.
 *
 * @packageDocumentation
 */
export { EventAnalysisSchema } from "./analysis-types.js";
export { CONTENT_FIELD_NAMES } from "./event-redaction.js";
export { DEFAULT_EVENT_LOG_KEY } from "./event-log.js";
export { EventBaseSchema, KeelEventSchema, MAX_EVENT_TYPE_LENGTH, WorkSessionMarkEventSchema, WorkSessionOpenedEventSchema, WorkSessionTurnEventSchema } from "./event-schema.js";
export { DEFAULT_MAX_EVENTS_FILE_BYTES } from "./jsonl-read.js";
export { DEFAULT_MAX_EVENT_BYTES } from "./jsonl-sink.js";
export { NO_DATA } from "./work-session-report.js";
