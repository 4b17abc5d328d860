import { KeelError, validateOrThrow } from "@keel/core";
import { errAsync } from "neverthrow";
import { z } from "zod";
import { withPlainEnv, type Backend, type BackendCapabilities } from "@keel/backend";
import { backendError } from "@keel/backend";
import { CliBackendOptionsSchema, createCliBackend, invocation, promptArgument, type CliBackendOptions, type CliAdapterInfo } from "../kit/index.js";
import { stageSkillLinks } from "../kit/index.js";
import { OPENCODE_RESUME_FAILURE, createOpenCodeParser } from "./opencode-events.js";

const CAPABILITIES = Object.freeze({ resume: true, skills: "native", usage: "full" }) satisfies BackendCapabilities;

/**
 * What `keel doctor` shows for the OpenCode adapter: its command, capabilities and the CLI
 * versions it is proven against (the real CLI, offline, against a fake provider).
 */
export const adapterInfo: CliAdapterInfo = {
  id: "opencode",
  kind: "cli",
  command: "opencode",
  capabilities: CAPABILITIES,
  provenAgainst: "real-cli",
  versions: { provenWith: "1.18.33", below: "1.19.0" },
};

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
      capabilities: CAPABILITIES,
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
