import { validateOrThrow } from "@keel/core";
import { z } from "zod";
import { withPlainEnv, type Backend } from "../backend-port.js";
import { CliBackendOptionsSchema, createCliBackend, invocation, promptArgument, type CliBackendOptions } from "../cli-backend.js";
import { GEMINI_RESUME_FAILURE, createGeminiParser } from "./gemini-events.js";

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
      capabilities: { resume: true, skills: "staged", usage: "full" },
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
