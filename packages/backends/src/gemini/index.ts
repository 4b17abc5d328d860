export { adapterInfo, createGeminiBackend } from "./gemini-backend.js";
export type { GeminiApprovalMode, GeminiBackendOptions } from "./gemini-backend.js";
export { GEMINI_RESUME_FAILURE, createGeminiParser, geminiToolAccesses } from "./gemini-events.js";
export { normalizeGeminiUsage } from "./gemini-usage.js";
