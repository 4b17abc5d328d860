import { validateOrThrow } from "@keel/core";
import { z } from "zod";
import { type Backend, type BackendCapabilities } from "@keel/backend";
import {
  CLAUDE_STYLE_RESUME_FAILURE,
  CliBackendOptionsSchema,
  createClaudeStyleParser,
  createCliBackend,
  invocation,
  promptArgument,
  withPlainEnv,
  type CliBackendOptions,
  type BackendAdapterInfo,
} from "../kit/index.js";

const CAPABILITIES = Object.freeze({ resume: true, skills: "prompt", usage: "full" }) satisfies BackendCapabilities;

/**
 * What `keel doctor` shows for the Qoder CLI adapter: its command, capabilities and the CLI
 * versions it is proven against (recorded output streams only).
 */
export const adapterInfo: BackendAdapterInfo<QoderBackendOptions> = {
  id: "qoder",
  kind: "cli",
  command: "qodercli",
  capabilities: CAPABILITIES,
  provenAgainst: "recordings",
  versions: null,
  create: (options) => createQoderBackend(options),
};

/**
 * Qoder's bad-session message is not documented; its engine mirrors Claude Code's, so Claude's
 * "No conversation found with session ID" family is matched, plus a plain "session … not found".
 */
export const QODER_RESUME_FAILURE = CLAUDE_STYLE_RESUME_FAILURE;

/** Options of {@link createQoderBackend}. */
export interface QoderBackendOptions extends CliBackendOptions {
  /** Pass `--yolo` (default true: headless Qoder denies anything that would need a prompt). */
  yolo?: boolean;
}

const OptionsSchema = CliBackendOptionsSchema.extend({ yolo: z.boolean().optional() });

/**
 * The Qoder CLI (`qodercli`), whose flags and stream mirror Claude Code's:
 * `qodercli -p --output-format stream-json [-m M] [--yolo] -w <cwd> [-r <id>] [extra…] <prompt>`.
 * Observed stream (qodercli 1.0.45–1.1.2): `system/init` with `session_id`, `assistant` messages,
 * a terminal `result` with `is_error`, `usage` and `total_cost_usd` — read with the Claude Code
 * parser. The `result` text and the exact usage fields are unverified; the parser falls back to
 * the last assistant text.
 *
 * Skills are `prompt`: Qoder only scans `.qoder/skills`, so the host lists the skills in the
 * prompt.
 */
export function createQoderBackend(options: QoderBackendOptions = {}): Backend {
  validateOrThrow(OptionsSchema, withPlainEnv(options), "qoder backend options");
  const { yolo = true, ...common } = options;
  return createCliBackend(
    {
      id: "qoder",
      capabilities: CAPABILITIES,
      defaultCommand: "qodercli",
      buildInvocation: ({ request, model, resumeThreadId }) =>
        invocation([
          "-p",
          "--output-format",
          "stream-json",
          ...(model ? ["-m", model] : []),
          ...(yolo ? ["--yolo"] : []),
          "-w",
          request.cwd,
          ...(resumeThreadId ? ["-r", resumeThreadId] : []),
          ...(common.extraArgs ?? []),
          promptArgument(request.prompt),
        ]),
      createParser: () => createClaudeStyleParser("qoder"),
      outcome: { resumeFailure: QODER_RESUME_FAILURE, requireThreadId: true },
    },
    common,
  );
}
