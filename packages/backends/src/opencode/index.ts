export { OPENCODE_OFFLINE_ENV, adapterInfo, createOpenCodeBackend } from "./opencode-backend.js";
export type { OpenCodeBackendOptions } from "./opencode-backend.js";
export { OPENCODE_RESUME_FAILURE, createOpenCodeParser, openCodeToolAccesses } from "./opencode-events.js";
export { normalizeOpenCodeUsage } from "./opencode-usage.js";
