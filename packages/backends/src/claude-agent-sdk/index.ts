export { claudeAgentSdkCapabilities, createClaudeAgentSdkBackend } from "./claude-agent-sdk-backend.js";
export type { ClaudeAgentSdkBackendOptions } from "./claude-agent-sdk-backend.js";
export { CLAUDE_AGENT_SDK_ID, claudeAgentSdkTurnCost, decideClaudeAgentSdkOutcome } from "./claude-agent-sdk-outcome.js";
export type { ClaudeAgentSdkRun } from "./claude-agent-sdk-outcome.js";
export { CLAUDE_AGENT_SDK_PACKAGE, loadClaudeAgentSdkQuery } from "./claude-agent-sdk-loader.js";
export type {
  ClaudeAgentSdkModule,
  ClaudeAgentSdkPermissionMode,
  ClaudeAgentSdkQuery,
  ClaudeAgentSdkQueryHandle,
  ClaudeAgentSdkQueryOptions,
  ClaudeAgentSdkSettingSource,
  ClaudeAgentSdkSystemPrompt,
} from "./claude-agent-sdk-types.js";
