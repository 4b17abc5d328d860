export { instrumentKeel, KEEL_OTEL_SCOPE } from "./instrument-keel.js";
export type { KeelInstrumentation } from "./instrument-keel.js";
export type { KeelEventSource, KeelOtelOptions, TracedTurn } from "./otel-options.js";
export { replayEvents } from "./replay-events.js";
export type { ReplayOptions, ReplaySummary } from "./replay-events.js";
