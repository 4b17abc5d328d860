export { adapterInfo, createClaudeCodeBackend } from "./claude-code-backend.js";
export type { ClaudeCodeBackendOptions, ClaudeCodePermissionMode } from "./claude-code-backend.js";
export { CLAUDE_CODE_RESUME_FAILURE, createClaudeCodeParser, createClaudeStyleParser } from "./claude-code-events.js";
export { normalizeClaudeCodeUsage } from "./claude-code-usage.js";
