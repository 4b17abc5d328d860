/**
 * The ids of the backends Keel has adapters for (`@keel/backends`, one subpath each). Packages
 * that keep a table per backend (usage dialects, skill delivery) key it by these.
 */
export const KEEL_BACKEND_IDS = [
  "claude-code",
  "codex",
  "pi",
  "opencode",
  "copilot",
  "cursor",
  "gemini",
  "grok",
  "qoder",
  "deepseek",
] as const;

/** The id of a backend Keel has an adapter for. */
export type KeelBackendId = (typeof KEEL_BACKEND_IDS)[number];
