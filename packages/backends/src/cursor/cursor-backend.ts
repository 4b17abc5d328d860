import { validateOrThrow } from "@keel/core";
import { z } from "zod";
import { type Backend, type BackendCapabilities } from "@keel/backend";
import {
  CliBackendOptionsSchema,
  createClaudeStyleParser,
  createCliBackend,
  invocation,
  promptArgument,
  withPlainEnv,
  type CliBackendOptions,
  type BackendAdapterInfo,
} from "../kit/index.js";

const CAPABILITIES = Object.freeze({ resume: true, skills: "staged", usage: "none" }) satisfies BackendCapabilities;

/**
 * What `keel doctor` shows for the Cursor CLI adapter: its command, capabilities and the CLI
 * versions it is proven against (recorded output streams only).
 */
export const adapterInfo: BackendAdapterInfo<CursorBackendOptions> = {
  id: "cursor",
  kind: "cli",
  command: "cursor-agent",
  capabilities: CAPABILITIES,
  provenAgainst: "recordings",
  versions: null,
  create: (options) => createCursorBackend(options),
};

/**
 * How Cursor says a chat is gone is not documented; these are the messages integrators match
 * (Paperclip's pattern), on stderr with a non-zero exit.
 */
export const CURSOR_RESUME_FAILURE =
  /unknown\s+(session|chat)|session\s+.*\s*not\s+found|chat\s+.*\s*not\s+found|resume\s+.*\s*not\s+found|could\s+not\s+resume/i;

/** Options of {@link createCursorBackend}. */
export interface CursorBackendOptions extends CliBackendOptions {
  /** Pass `--force` so tool calls run without approval in print mode (default true). */
  force?: boolean;
  /** Pass `--trust` so the workspace trust prompt does not end a headless run with exit 1 (default true). */
  trust?: boolean;
}

const OptionsSchema = CliBackendOptionsSchema.extend({ force: z.boolean().optional(), trust: z.boolean().optional() });

/**
 * The Cursor CLI (`cursor-agent`):
 * `cursor-agent -p --output-format stream-json [--model M] [--force] [--trust] --workspace <cwd>
 * [--resume <chatId>] [extra…] <prompt>`. Its stream-json follows Claude Code's (`system/init`
 * with `session_id`, `assistant`, `result`), so it shares that parser.
 *
 * Skills are `staged` (Cursor scans `.agents/skills` and `.cursor/skills`). Usage is `none`: Cursor
 * documents no token counts. Its bad-chat-id behaviour is undocumented: a non-zero exit whose
 * message matches {@link CURSOR_RESUME_FAILURE} is `resume_failed`.
 */
export function createCursorBackend(options: CursorBackendOptions = {}): Backend {
  validateOrThrow(OptionsSchema, withPlainEnv(options), "cursor backend options");
  const { force = true, trust = true, ...common } = options;
  return createCliBackend(
    {
      id: "cursor",
      capabilities: CAPABILITIES,
      defaultCommand: "cursor-agent",
      buildInvocation: ({ request, model, resumeThreadId }) =>
        invocation([
          "-p",
          "--output-format",
          "stream-json",
          ...(model ? ["--model", model] : []),
          ...(force ? ["--force"] : []),
          ...(trust ? ["--trust"] : []),
          "--workspace",
          request.cwd,
          ...(resumeThreadId ? ["--resume", resumeThreadId] : []),
          ...(common.extraArgs ?? []),
          promptArgument(request.prompt),
        ]),
      createParser: () => createClaudeStyleParser("cursor"),
      outcome: { resumeFailure: CURSOR_RESUME_FAILURE, requireThreadId: true },
    },
    common,
  );
}
