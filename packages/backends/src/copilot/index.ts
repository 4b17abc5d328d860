export { adapterInfo, createCopilotBackend } from "./copilot-backend.js";
export type { CopilotBackendOptions } from "./copilot-backend.js";
export { COPILOT_RESUME_FAILURE, copilotToolAccesses, createCopilotParser } from "./copilot-events.js";
export { copilotEventsPath, copilotTurnUsage, readCopilotSessionUsage } from "./copilot-session-usage.js";
export { normalizeCopilotUsage } from "./copilot-usage.js";
