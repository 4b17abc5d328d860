import { validateOrThrow } from "@keel/core";
import { z } from "zod";
import { withPlainEnv, type Backend } from "../backend-port.js";
import { CliBackendOptionsSchema, createCliBackend, invocation, promptArgument, type CliBackendOptions } from "../cli-backend.js";
import { PI_RESUME_FAILURE, createPiParser } from "./pi-events.js";

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
      capabilities: { resume: true, skills: "native", usage: "full" },
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
