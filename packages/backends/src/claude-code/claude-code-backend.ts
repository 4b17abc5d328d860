import { validateOrThrow } from "@keel/core";
import { z } from "zod";
import { withPlainEnv, type Backend } from "../backend-port.js";
import { CliBackendOptionsSchema, createCliBackend, invocation, promptArgument, type CliBackendOptions } from "../cli-backend.js";
import { stageSkillLinks } from "../internal/skill-staging.js";
import { CLAUDE_CODE_RESUME_FAILURE, createClaudeCodeParser } from "./claude-code-events.js";

/** Claude Code permission modes usable headless. */
export type ClaudeCodePermissionMode = "default" | "acceptEdits" | "bypassPermissions" | "plan";

/** Options of {@link createClaudeCodeBackend}. */
export interface ClaudeCodeBackendOptions extends CliBackendOptions {
  /**
   * `--permission-mode` (default `bypassPermissions`: a headless turn cannot answer prompts; pin
   * `cwd` and sandbox the host instead).
   */
  permissionMode?: ClaudeCodePermissionMode;
}

const OptionsSchema = CliBackendOptionsSchema.extend({
  permissionMode: z.enum(["default", "acceptEdits", "bypassPermissions", "plan"]).optional(),
});

/**
 * The Claude Code CLI (`claude`):
 * `claude -p --output-format stream-json --verbose --permission-mode <mode> [--model M]
 * [--resume <id>] [--add-dir <skills>] [extra…] <prompt>`, run in `cwd` (Claude has no cwd flag;
 * sessions are stored per cwd, so resume from the same one).
 *
 * Skills are `native`: the turn's skill directories are linked into a temporary
 * `<dir>/.claude/skills/` and passed with `--add-dir <dir>`, which Claude Code scans for skills.
 * A gone thread is `resume_failed` ("No conversation found with session ID"); `is_error` on the
 * `result` event is `backend_failed` whatever the exit code.
 */
export function createClaudeCodeBackend(options: ClaudeCodeBackendOptions = {}): Backend {
  validateOrThrow(OptionsSchema, withPlainEnv(options), "claude-code backend options");
  const { permissionMode = "bypassPermissions", ...common } = options;
  return createCliBackend(
    {
      id: "claude-code",
      capabilities: { resume: true, skills: "native", usage: "full" },
      defaultCommand: "claude",
      buildInvocation: ({ request, model, resumeThreadId }) => {
        const args = (skillArgs: string[]) => [
          "-p",
          "--output-format",
          "stream-json",
          "--verbose",
          "--permission-mode",
          permissionMode,
          ...(model ? ["--model", model] : []),
          ...(resumeThreadId ? ["--resume", resumeThreadId] : []),
          ...skillArgs,
          ...(common.extraArgs ?? []),
          promptArgument(request.prompt),
        ];
        const skillPaths = request.skillPaths ?? [];
        if (skillPaths.length === 0) return invocation(args([]));
        return stageSkillLinks("claude-code", skillPaths, ".claude/skills").map((staged) => ({
          args: args(["--add-dir", staged.dir]),
          cleanup: staged.cleanup,
        }));
      },
      createParser: () => createClaudeCodeParser(),
      outcome: { resumeFailure: CLAUDE_CODE_RESUME_FAILURE, requireThreadId: true },
    },
    common,
  );
}
