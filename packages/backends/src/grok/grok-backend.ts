import { randomUUID } from "node:crypto";
import { validateOrThrow } from "@keel/core";
import { z } from "zod";
import { type Backend, type BackendCapabilities } from "@keel/backend";
import { CliBackendOptionsSchema, createCliBackend, invocation, promptArgument, withPlainEnv, type CliBackendOptions, type BackendAdapterInfo } from "../kit/index.js";
import { GROK_RESUME_FAILURE, createGrokParser } from "./grok-events.js";

const CAPABILITIES = Object.freeze({ resume: true, skills: "staged", usage: "full" }) satisfies BackendCapabilities;

/**
 * What `keel doctor` shows for the Grok adapter: its command, capabilities and the CLI
 * versions it is proven against (recorded output streams only).
 */
export const adapterInfo: BackendAdapterInfo<GrokBackendOptions> = {
  id: "grok",
  kind: "cli",
  command: "grok",
  capabilities: CAPABILITIES,
  provenAgainst: "recordings",
  versions: null,
  create: (options) => createGrokBackend(options),
};

/** Options of {@link createGrokBackend}. */
export interface GrokBackendOptions extends CliBackendOptions {
  /**
   * Pass `--always-approve` (default true: headless Grok Build cancels any tool call that would
   * prompt, ending the turn with `stopReason: Cancelled`).
   */
  alwaysApprove?: boolean;
  /** Give a fresh thread a host-chosen UUID with `-s` (default true), so its id is known from the start. */
  assignSessionId?: boolean;
}

const OptionsSchema = CliBackendOptionsSchema.extend({ alwaysApprove: z.boolean().optional(), assignSessionId: z.boolean().optional() });

/**
 * xAI Grok Build (`grok`):
 * `grok -p <prompt> --output-format streaming-json [-m M] [--always-approve] --cwd <cwd>
 * (-s <new uuid> | -r <id>) [extra…]`. Its `streaming-json` output names the session only in the
 * final `end` event, hence the host-chosen id for fresh threads.
 *
 * Skills are `staged` (Grok Build scans `.agents/skills` and `.grok/skills` up to the repository
 * root). Usage: `input_tokens` excludes the cache and `output_tokens` includes
 * `reasoning_tokens`. Tool calls are counted from `tool_use`/`tool_call` events when they
 * appear; a turn without one reports `toolCalls: null` (unknown). A gone thread is `resume_failed`.
 */
export function createGrokBackend(options: GrokBackendOptions = {}): Backend {
  validateOrThrow(OptionsSchema, withPlainEnv(options), "grok backend options");
  const { alwaysApprove = true, assignSessionId = true, ...common } = options;
  return createCliBackend(
    {
      id: "grok",
      capabilities: CAPABILITIES,
      defaultCommand: "grok",
      ...(assignSessionId ? { assignThreadId: () => randomUUID() } : {}),
      buildInvocation: ({ request, model, resumeThreadId, assignedThreadId }) =>
        invocation([
          "-p",
          promptArgument(request.prompt),
          "--output-format",
          "streaming-json",
          ...(model ? ["-m", model] : []),
          ...(alwaysApprove ? ["--always-approve"] : []),
          "--cwd",
          request.cwd,
          ...(resumeThreadId ? ["-r", resumeThreadId] : []),
          ...(assignedThreadId ? ["-s", assignedThreadId] : []),
          ...(common.extraArgs ?? []),
        ]),
      createParser: ({ assignedThreadId }) => createGrokParser(assignedThreadId),
      // No Grok Build tool event was ever recorded: a turn showing none has an unknown count, not 0.
      unseenToolCalls: "unknown",
      outcome: { resumeFailure: GROK_RESUME_FAILURE, requireThreadId: true },
    },
    common,
  );
}
