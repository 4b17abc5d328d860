import { validateOrThrow } from "@keel/core";
import { z } from "zod";
import { type Backend, type BackendCapabilities } from "@keel/backend";
import { CliBackendOptionsSchema, createCliBackend, invocation, promptArgument, withPlainEnv, type CliBackendOptions, type BackendAdapterInfo } from "../kit/index.js";
import { PI_RESUME_FAILURE, createPiParser } from "./pi-events.js";

const CAPABILITIES = Object.freeze({ resume: true, skills: "native", usage: "full" }) satisfies BackendCapabilities;

/**
 * What `keel doctor` shows for the pi adapter: its command, capabilities and the CLI
 * versions it is proven against (the real CLI, offline, against a fake provider).
 */
export const adapterInfo: BackendAdapterInfo<PiBackendOptions> = {
  id: "pi",
  kind: "cli",
  command: "pi",
  capabilities: CAPABILITIES,
  provenAgainst: "real-cli",
  versions: { provenWith: "0.73.1", below: "0.74.0" },
  create: (options) => createPiBackend(options),
};

/** pi thinking levels. */
export type PiThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh";

/** Options of {@link createPiBackend}. */
export interface PiBackendOptions extends CliBackendOptions {
  /** `--provider` (otherwise pi's default, or the provider in a `provider/model` model id). */
  provider?: string;
  /** `--thinking` level. */
  thinking?: PiThinkingLevel;
  /** `--session-dir`: where pi stores and looks up sessions (default `~/.pi/agent/sessions`). */
  sessionDir?: string;
  /** `--tools` allowlist (pi has no permission prompts; this is how to restrict it). */
  tools?: readonly string[];
}

const OptionsSchema = CliBackendOptionsSchema.extend({
  provider: z.string().min(1).optional(),
  thinking: z.enum(["off", "minimal", "low", "medium", "high", "xhigh"]).optional(),
  sessionDir: z.string().min(1).optional(),
  tools: z.array(z.string().regex(/^[A-Za-z0-9_.-]+$/)).optional(),
});

/**
 * The pi coding agent (`pi`, badlogic/pi-mono):
 * `pi --mode json [--provider P] [--model M] [--thinking T] [--session-dir D] [--tools a,b]
 * [--no-skills --skill <path>…] [--session <id>] [extra…] <prompt>`, run in `cwd` (pi stores
 * sessions per cwd; resume from the same one).
 *
 * Skills are `native`: when the request lists `skillPaths`, discovery is switched off
 * (`--no-skills`) and exactly those are loaded with `--skill`. A gone thread is `resume_failed`
 * ("No session found matching", exit 1). pi exits 0 after a model error, so the last assistant
 * message's `stopReason` decides `backend_failed`.
 */
export function createPiBackend(options: PiBackendOptions = {}): Backend {
  validateOrThrow(OptionsSchema, withPlainEnv(options), "pi backend options");
  const { provider, thinking, sessionDir, tools, ...common } = options;
  return createCliBackend(
    {
      id: "pi",
      capabilities: CAPABILITIES,
      defaultCommand: "pi",
      buildInvocation: ({ request, model, resumeThreadId }) => {
        const skillPaths = request.skillPaths;
        return invocation([
          "--mode",
          "json",
          ...(provider ? ["--provider", provider] : []),
          ...(model ? ["--model", model] : []),
          ...(thinking ? ["--thinking", thinking] : []),
          ...(sessionDir ? ["--session-dir", sessionDir] : []),
          ...(tools ? ["--tools", tools.join(",")] : []),
          ...(skillPaths ? ["--no-skills", ...skillPaths.flatMap((path) => ["--skill", path])] : []),
          ...(resumeThreadId ? ["--session", resumeThreadId] : []),
          ...(common.extraArgs ?? []),
          promptArgument(request.prompt),
        ]);
      },
      createParser: () => createPiParser(),
      outcome: { resumeFailure: PI_RESUME_FAILURE, emptyResumeIsFailure: true, requireThreadId: true },
    },
    common,
  );
}
