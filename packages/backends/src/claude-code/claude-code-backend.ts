import { validateOrThrow } from "@keel/core";
import { z } from "zod";
import { type Backend, type BackendCapabilities } from "@keel/backend";
import { CliBackendOptionsSchema, createCliBackend, invocation, promptArgument, withPlainEnv, type CliBackendOptions, type BackendAdapterInfo } from "../kit/index.js";
import { stageSkillLinks } from "../kit/index.js";
import { CLAUDE_CODE_RESUME_FAILURE, createClaudeCodeParser } from "./claude-code-events.js";

const CAPABILITIES = Object.freeze({ resume: true, skills: "native", usage: "full" }) satisfies BackendCapabilities;

/**
 * What `keel doctor` shows for the Claude Code adapter: its command, capabilities and the CLI
 * versions it is proven against (the real CLI, offline, against a fake provider).
 */
export const adapterInfo: BackendAdapterInfo<ClaudeCodeBackendOptions> = {
  id: "claude-code",
  kind: "cli",
  command: "claude",
  capabilities: CAPABILITIES,
  provenAgainst: "real-cli",
  versions: { provenWith: "2.1.197", below: "2.2.0" },
  create: (options) => createClaudeCodeBackend(options),
};

/** Whether this process runs as root (uid 0); `false` where there are no uids. */
function runsAsRoot(): boolean {
  return typeof process.getuid === "function" && process.getuid() === 0;
}

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
 * `result` event is `backend_failed` whatever the exit code. Run as root in `bypassPermissions`
 * mode, the adapter sets `IS_SANDBOX=1` (unless the environment sets it), without which Claude
 * Code refuses the mode as root.
 */
export function createClaudeCodeBackend(options: ClaudeCodeBackendOptions = {}): Backend {
  validateOrThrow(OptionsSchema, withPlainEnv(options), "claude-code backend options");
  const { permissionMode = "bypassPermissions", ...common } = options;
  return createCliBackend(
    {
      id: "claude-code",
      capabilities: CAPABILITIES,
      defaultCommand: "claude",
      buildInvocation: ({ request, model, resumeThreadId, env }) => {
        // As root, Claude Code refuses bypassPermissions ("cannot be used with root/sudo
        // privileges") unless it is told it runs in a sandbox.
        const sandboxEnv: Record<string, string> | undefined =
          permissionMode === "bypassPermissions" && runsAsRoot() && env.IS_SANDBOX === undefined ? { IS_SANDBOX: "1" } : undefined;
        // `--add-dir` takes every following word up to the next flag (it is variadic), so it
        // comes right after `-p`, before a flag, never before the prompt.
        const args = (skillArgs: string[]) => [
          "-p",
          ...skillArgs,
          "--output-format",
          "stream-json",
          "--verbose",
          "--permission-mode",
          permissionMode,
          ...(model ? ["--model", model] : []),
          ...(resumeThreadId ? ["--resume", resumeThreadId] : []),
          ...(common.extraArgs ?? []),
          promptArgument(request.prompt),
        ];
        const skillPaths = request.skillPaths ?? [];
        if (skillPaths.length === 0) return invocation(args([]), sandboxEnv);
        return stageSkillLinks("claude-code", skillPaths, ".claude/skills").map((staged) => ({
          args: args(["--add-dir", staged.dir]),
          ...(sandboxEnv ? { env: sandboxEnv } : {}),
          cleanup: staged.cleanup,
        }));
      },
      createParser: () => createClaudeCodeParser(),
      outcome: { resumeFailure: CLAUDE_CODE_RESUME_FAILURE, requireThreadId: true },
    },
    common,
  );
}
