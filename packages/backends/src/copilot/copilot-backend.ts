import { randomUUID } from "node:crypto";
import { validateOrThrow } from "@keel/core";
import { z } from "zod";
import { type Backend, type BackendCapabilities } from "@keel/backend";
import { CliBackendOptionsSchema, createCliBackend, invocation, promptArgument, withPlainEnv, type CliBackendOptions, type BackendAdapterInfo } from "../kit/index.js";
import { ResultAsync } from "neverthrow";
import { COPILOT_RESUME_FAILURE, createCopilotParser } from "./copilot-events.js";
import { readCopilotSessionUsage } from "./copilot-session-usage.js";

const CAPABILITIES = Object.freeze({ resume: true, skills: "staged", usage: "full" }) satisfies BackendCapabilities;

/**
 * What `keel doctor` shows for the Copilot CLI adapter: its command, capabilities and the CLI
 * versions it is proven against (the real CLI, offline, against a fake provider).
 */
export const adapterInfo: BackendAdapterInfo<CopilotBackendOptions> = {
  id: "copilot",
  kind: "cli",
  command: "copilot",
  capabilities: CAPABILITIES,
  provenAgainst: "real-cli",
  versions: { provenWith: "1.0.102", below: "1.1.0" },
  create: (options) => createCopilotBackend(options),
};

/** Options of {@link createCopilotBackend}. */
export interface CopilotBackendOptions extends CliBackendOptions {
  /** Pass `--allow-all --no-ask-user` (default true: a headless turn cannot answer prompts). */
  allowAll?: boolean;
  /** Pass `--autopilot`, so the agent keeps going past its first response cycle (default false). */
  autopilot?: boolean;
  /**
   * Give a fresh thread a host-chosen UUID with `--session-id` (default true; Copilot CLI ≥ 1.0.51),
   * so its id is known even if the turn is interrupted before the final `result` event. Turn off
   * for older CLIs.
   */
  assignSessionId?: boolean;
}

const OptionsSchema = CliBackendOptionsSchema.extend({
  allowAll: z.boolean().optional(),
  autopilot: z.boolean().optional(),
  assignSessionId: z.boolean().optional(),
});

/**
 * The GitHub Copilot CLI (`copilot`):
 * `copilot -p <prompt> --output-format json [--model M] [--allow-all --no-ask-user] [--autopilot]
 * (--session-id=<new uuid> | --resume=<id>) [extra…]`, run in `cwd` (sessions are per cwd).
 *
 * Skills are `staged` (Copilot scans `.agents/skills`, `.github/skills`, `.claude/skills` from
 * `cwd` up to the repository root). Usage comes from the session's own log,
 * `$COPILOT_HOME/session-state/<id>/events.jsonl` (Copilot 1.0.102 prints no token counts on
 * stdout): the usage records of the turn's prompt onward; without the log, whatever stdout showed
 * (older builds: output tokens only), every other bucket `null`. A gone thread is
 * `resume_failed` ("No session, task, or name matched", exit 1).
 */
export function createCopilotBackend(options: CopilotBackendOptions = {}): Backend {
  validateOrThrow(OptionsSchema, withPlainEnv(options), "copilot backend options");
  const { allowAll = true, autopilot = false, assignSessionId = true, ...common } = options;
  return createCliBackend(
    {
      id: "copilot",
      capabilities: CAPABILITIES,
      defaultCommand: "copilot",
      ...(assignSessionId ? { assignThreadId: () => randomUUID() } : {}),
      buildInvocation: ({ request, model, resumeThreadId, assignedThreadId }) =>
        invocation([
          "-p",
          promptArgument(request.prompt),
          "--output-format",
          "json",
          ...(model ? ["--model", model] : []),
          ...(allowAll ? ["--allow-all", "--no-ask-user"] : []),
          ...(autopilot ? ["--autopilot"] : []),
          ...(resumeThreadId ? [`--resume=${resumeThreadId}`] : []),
          ...(assignedThreadId ? [`--session-id=${assignedThreadId}`] : []),
          ...(common.extraArgs ?? []),
        ]),
      createParser: ({ assignedThreadId }) => createCopilotParser(assignedThreadId),
      completeTurn: (turn, { env }) =>
        ResultAsync.fromSafePromise(turn.threadId === null ? Promise.resolve(null) : readCopilotSessionUsage(env, turn.threadId)).map(
          (usage) => (usage === null ? turn : { ...turn, usage }),
        ),
      outcome: { resumeFailure: COPILOT_RESUME_FAILURE, requireThreadId: true },
    },
    common,
  );
}
