export { adapterInfo, createCodexBackend } from "./codex-backend.js";
export type { CodexBackendOptions, CodexSandbox } from "./codex-backend.js";
export { CODEX_RESUME_FAILURE, codexRunningTotal, codexTurnUsage, createCodexParser } from "./codex-events.js";
export type { CodexParserOptions } from "./codex-events.js";
export { normalizeCodexUsage } from "./codex-usage.js";
