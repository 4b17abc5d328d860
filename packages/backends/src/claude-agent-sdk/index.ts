export { claudeAgentSdkCapabilities, createClaudeAgentSdkBackend } from "./claude-agent-sdk-backend.js";
export type { ClaudeAgentSdkBackendOptions } from "./claude-agent-sdk-backend.js";
export { CLAUDE_AGENT_SDK_ID, claudeAgentSdkTurnCost, decideClaudeAgentSdkOutcome } from "./claude-agent-sdk-outcome.js";
export type { ClaudeAgentSdkRun } from "./claude-agent-sdk-outcome.js";
export { CLAUDE_AGENT_SDK_PACKAGE, loadClaudeAgentSdkQuery } from "./claude-agent-sdk-loader.js";
export { createClaudeSessionStore } from "./claude-session-store.js";
export type { ClaudeSessionEntry, ClaudeSessionKey, ClaudeSessionLogs, ClaudeSessionStore, ClaudeSessionStoreOptions } from "./claude-session-store.js";
export type {
  ClaudeAgentSdkHookCallback,
  ClaudeAgentSdkHooks,
  ClaudeAgentSdkPostToolUseInput,
  ClaudeAgentSdkSessionStore,
  ClaudeAgentSdkModule,
  ClaudeAgentSdkPermissionMode,
  ClaudeAgentSdkQuery,
  ClaudeAgentSdkQueryHandle,
  ClaudeAgentSdkQueryOptions,
  ClaudeAgentSdkSettingSource,
  ClaudeAgentSdkSystemPrompt,
} from "./claude-agent-sdk-types.js";
