import { validateOrThrow } from "@keel/core";
import { z } from "zod";
import { type Backend, type BackendCapabilities } from "@keel/backend";
import { CliBackendOptionsSchema, createCliBackend, invocation, promptArgument, withPlainEnv, type CliBackendOptions, type BackendAdapterInfo } from "../kit/index.js";
import { GEMINI_RESUME_FAILURE, createGeminiParser } from "./gemini-events.js";

const CAPABILITIES = Object.freeze({ resume: true, skills: "staged", usage: "full" }) satisfies BackendCapabilities;

/**
 * What `keel doctor` shows for the Gemini CLI adapter: its command, capabilities and the CLI
 * versions it is proven against (the real CLI, offline, against a fake provider).
 */
export const adapterInfo: BackendAdapterInfo<GeminiBackendOptions> = {
  id: "gemini",
  kind: "cli",
  command: "gemini",
  capabilities: CAPABILITIES,
  provenAgainst: "real-cli",
  versions: { provenWith: "0.61.0", below: "0.62.0" },
  create: (options) => createGeminiBackend(options),
};

/** Gemini CLI approval modes. */
export type GeminiApprovalMode = "default" | "auto_edit" | "yolo" | "plan";

/** Options of {@link createGeminiBackend}. */
export interface GeminiBackendOptions extends CliBackendOptions {
  /** `--approval-mode` (default `yolo`: a headless turn cannot answer prompts). */
  approvalMode?: GeminiApprovalMode;
  /**
   * Set `GEMINI_CLI_TRUST_WORKSPACE=true` (default true): headless Gemini refuses an untrusted
   * folder (`FatalUntrustedWorkspaceError`).
   */
  trustWorkspace?: boolean;
}

const OptionsSchema = CliBackendOptionsSchema.extend({
  approvalMode: z.enum(["default", "auto_edit", "yolo", "plan"]).optional(),
  trustWorkspace: z.boolean().optional(),
});

/**
 * The Gemini CLI (`gemini`):
 * `gemini -p <prompt> --output-format stream-json [-m M] --approval-mode <mode> [--resume <id>]
 * [extra…]`, run in `cwd` (sessions are per project).
 *
 * Skills are `staged` (Gemini scans `.agents/skills` and `.gemini/skills`). A gone thread is
 * `resume_failed` (exit 42, "Invalid session identifier"). Usage comes from `result.stats`
 * (`input_tokens` = `cached` + `input`); Gemini reports no cost.
 */
export function createGeminiBackend(options: GeminiBackendOptions = {}): Backend {
  validateOrThrow(OptionsSchema, withPlainEnv(options), "gemini backend options");
  const { approvalMode = "yolo", trustWorkspace = true, ...common } = options;
  return createCliBackend(
    {
      id: "gemini",
      capabilities: CAPABILITIES,
      defaultCommand: "gemini",
      buildInvocation: ({ request, model, resumeThreadId }) =>
        invocation(
          [
            "-p",
            promptArgument(request.prompt),
            "--output-format",
            "stream-json",
            ...(model ? ["-m", model] : []),
            "--approval-mode",
            approvalMode,
            ...(resumeThreadId ? ["--resume", resumeThreadId] : []),
            ...(common.extraArgs ?? []),
          ],
          trustWorkspace ? { GEMINI_CLI_TRUST_WORKSPACE: "true" } : undefined,
        ),
      createParser: () => createGeminiParser(),
      outcome: { resumeFailure: GEMINI_RESUME_FAILURE, requireThreadId: true },
    },
    common,
  );
}
