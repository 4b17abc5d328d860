export { adapterInfo, createClaudeCodeBackend } from "./claude-code-backend.js";
export type { ClaudeCodeBackendOptions, ClaudeCodePermissionMode } from "./claude-code-backend.js";
export { CLAUDE_CODE_RESUME_FAILURE, createClaudeCodeParser } from "./claude-code-events.js";
export { normalizeClaudeCodeUsage } from "../kit/claude-style-usage.js";
