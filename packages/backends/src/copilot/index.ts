export { adapterInfo, createCopilotBackend } from "./copilot-backend.js";
export type { CopilotBackendOptions } from "./copilot-backend.js";
export { COPILOT_RESUME_FAILURE, createCopilotParser } from "./copilot-events.js";
export { normalizeCopilotUsage } from "./copilot-usage.js";
