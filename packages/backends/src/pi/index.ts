export { adapterInfo, createPiBackend } from "./pi-backend.js";
export type { PiBackendOptions, PiThinkingLevel } from "./pi-backend.js";
export { PI_RESUME_FAILURE, createPiParser, piToolAccesses } from "./pi-events.js";
export { normalizePiUsage } from "./pi-usage.js";
