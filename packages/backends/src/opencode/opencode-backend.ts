import { KeelError, validateOrThrow } from "@keel/core";
import { errAsync } from "neverthrow";
import { z } from "zod";
import { withPlainEnv, type Backend } from "../backend-port.js";
import { backendError } from "../backend-errors.js";
import { CliBackendOptionsSchema, createCliBackend, invocation, promptArgument, type CliBackendOptions } from "../cli-backend.js";
import { stageSkillLinks } from "../internal/skill-staging.js";
import { OPENCODE_RESUME_FAILURE, createOpenCodeParser } from "./opencode-events.js";

/** Options of {@link createOpenCodeBackend}. */
export interface OpenCodeBackendOptions extends CliBackendOptions {
  /**
   * Pass `--dangerously-skip-permissions` (default true: without it `opencode run` rejects every
   * permission request and prints a warning on stdout, which breaks the JSON stream).
   */
  skipPermissions?: boolean;
}

const OptionsSchema = CliBackendOptionsSchema.extend({ skipPermissions: z.boolean().optional() });

function withSkillPaths(existing: string | undefined, paths: readonly string[]): Record<string, unknown> | KeelError {
  let config: unknown = {};
  if (existing !== undefined && existing.trim() !== "") {
    try {
      config = JSON.parse(existing);
    } catch {
      config = undefined;
    }
  }
  if (typeof config !== "object" || config === null || Array.isArray(config)) {
    return backendError("invalid_input", "opencode", "OPENCODE_CONFIG_CONTENT is not a JSON object: fix it or unset it");
  }
  const record = config as Record<string, unknown>;
  const skills = typeof record.skills === "object" && record.skills !== null ? (record.skills as Record<string, unknown>) : {};
  const before = Array.isArray(skills.paths) ? skills.paths : [];
  return { ...record, skills: { ...skills, paths: [...before, ...paths] } };
}

/**
 * The OpenCode CLI (`opencode`):
 * `opencode run --format json [-m provider/model] [--dangerously-skip-permissions] [-s <id>]
 * [extra…] <prompt>`, run in `cwd`.
 *
 * Skills are `native`: the turn's skill directories are linked into a temporary directory that
 * is added to `skills.paths` through `OPENCODE_CONFIG_CONTENT` (merged with any inline config
 * already set). OpenCode exits 0 on logical errors and on a gone session: an `error` event is
 * `backend_failed`, and a resume that prints no event (stderr "Session not found") is
 * `resume_failed`. Usage and cost are summed over `step_finish` events.
 */
export function createOpenCodeBackend(options: OpenCodeBackendOptions = {}): Backend {
  validateOrThrow(OptionsSchema, withPlainEnv(options), "opencode backend options");
  const { skipPermissions = true, ...common } = options;
  return createCliBackend(
    {
      id: "opencode",
      capabilities: { resume: true, skills: "native", usage: "full" },
      defaultCommand: "opencode",
      buildInvocation: ({ request, model, resumeThreadId, env }) => {
        const args = [
          "run",
          "--format",
          "json",
          ...(model ? ["-m", model] : []),
          ...(skipPermissions ? ["--dangerously-skip-permissions"] : []),
          ...(resumeThreadId ? ["-s", resumeThreadId] : []),
          ...(common.extraArgs ?? []),
          promptArgument(request.prompt),
        ];
        const skillPaths = request.skillPaths ?? [];
        if (skillPaths.length === 0) return invocation(args);
        const config = withSkillPaths(env.OPENCODE_CONFIG_CONTENT, []);
        if (config instanceof KeelError) return errAsync(config);
        return stageSkillLinks("opencode", skillPaths, ".").map((staged) => ({
          args,
          env: { OPENCODE_CONFIG_CONTENT: JSON.stringify(withSkillPaths(env.OPENCODE_CONFIG_CONTENT, [staged.dir])) },
          cleanup: staged.cleanup,
        }));
      },
      createParser: () => createOpenCodeParser(),
      outcome: { resumeFailure: OPENCODE_RESUME_FAILURE, emptyResumeIsFailure: true, requireThreadId: true },
    },
    common,
  );
}
