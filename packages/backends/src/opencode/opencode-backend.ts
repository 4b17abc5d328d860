import { KeelError, validateOrThrow } from "@keel/core";
import { errAsync, okAsync } from "neverthrow";
import { z } from "zod";
import { type Backend, type BackendCapabilities } from "@keel/backend";
import { backendError } from "@keel/backend";
import { CliBackendOptionsSchema, createCliBackend, withPlainEnv, type CliBackendOptions, type BackendAdapterInfo } from "../kit/index.js";
import { stageSkillLinks } from "../kit/index.js";
import { OPENCODE_RESUME_FAILURE, createOpenCodeParser } from "./opencode-events.js";

const CAPABILITIES = Object.freeze({ resume: true, skills: "native", usage: "full" }) satisfies BackendCapabilities;

/**
 * What `keel doctor` shows for the OpenCode adapter: its command, capabilities and the CLI
 * versions it is proven against (the real CLI, offline, against a fake provider).
 */
export const adapterInfo: BackendAdapterInfo<OpenCodeBackendOptions> = {
  id: "opencode",
  kind: "cli",
  command: "opencode",
  capabilities: CAPABILITIES,
  provenAgainst: "real-cli",
  versions: { provenWith: "1.18.33", below: "1.19.0" },
  create: (options) => createOpenCodeBackend(options),
};

/** Options of {@link createOpenCodeBackend}. */
export interface OpenCodeBackendOptions extends CliBackendOptions {
  /**
   * Pass `--dangerously-skip-permissions` (default true: without it `opencode run` rejects every
   * permission request and prints a warning on stdout, which breaks the JSON stream).
   */
  skipPermissions?: boolean;
  /**
   * The title given to a new session with `--title` (default `keel`). Without one OpenCode makes
   * an extra model call to title the session, whose usage its stream never reports.
   */
  title?: string;
  /**
   * Switch off OpenCode's background network use (default true): models fetch, auto-update, LSP
   * downloads, default plugins, sharing and the Claude Code compatibility scan — each
   * `OPENCODE_DISABLE_*` variable set to `1` — and its install of `@opencode-ai/plugin` into its
   * config directories, which no OpenCode switch stops: `NPM_CONFIG_OFFLINE=true` for the npm it
   * bundles. Each variable is set unless the environment sets it already. Commands the agent
   * runs inherit the environment, so its own `npm` then uses the npm cache only: set
   * `NPM_CONFIG_OFFLINE=false` in `env` to let it reach the registry (and OpenCode with it).
   */
  offline?: boolean;
}

/**
 * The variables that keep OpenCode 1.18 off the network beyond its provider (real-clis.md). On
 * every run OpenCode installs `@opencode-ai/plugin` from the npm registry, in the background,
 * into each config directory that has no `node_modules` yet (or whose lock file lacks it),
 * whatever its `OPENCODE_DISABLE_*` switches say; the npm it bundles reads `NPM_CONFIG_OFFLINE`,
 * and offline it resolves from the cache without a connection (a warning in its log).
 */
export const OPENCODE_OFFLINE_ENV: Readonly<Record<string, string>> = Object.freeze({
  OPENCODE_DISABLE_MODELS_FETCH: "1",
  OPENCODE_DISABLE_AUTOUPDATE: "1",
  OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
  OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
  OPENCODE_DISABLE_SHARE: "1",
  OPENCODE_DISABLE_CLAUDE_CODE: "1",
  NPM_CONFIG_OFFLINE: "true",
});

const OptionsSchema = CliBackendOptionsSchema.extend({
  skipPermissions: z.boolean().optional(),
  title: z.string().min(1).max(200).optional(),
  offline: z.boolean().optional(),
});

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
 * `opencode run --format json [-m provider/model] [--dangerously-skip-permissions]
 * (--title <title> | -s <id>) [extra…]` with the prompt on stdin, run in `cwd`: a positional
 * prompt with spaces reached the model JSON-quoted (1.18.33), one on stdin arrives unchanged,
 * and stdin has no argument-length limit.
 *
 * Skills are `native`: the turn's skill directories are linked into a temporary directory that
 * is added to `skills.paths` through `OPENCODE_CONFIG_CONTENT` (merged with any inline config
 * already set). OpenCode exits 0 on logical errors and on a gone session: an `error` event is
 * `backend_failed`, and a resume that prints no event (stderr "Session not found") is
 * `resume_failed`. Usage and cost are summed over `step_finish` events.
 */
export function createOpenCodeBackend(options: OpenCodeBackendOptions = {}): Backend {
  validateOrThrow(OptionsSchema, withPlainEnv(options), "opencode backend options");
  const { skipPermissions = true, title = "keel", offline = true, ...common } = options;
  return createCliBackend(
    {
      id: "opencode",
      capabilities: CAPABILITIES,
      defaultCommand: "opencode",
      promptOnStdin: true,
      buildInvocation: ({ request, model, resumeThreadId, env }) => {
        const args = [
          "run",
          "--format",
          "json",
          ...(model ? ["-m", model] : []),
          ...(skipPermissions ? ["--dangerously-skip-permissions"] : []),
          ...(resumeThreadId ? ["-s", resumeThreadId] : ["--title", title]),
          ...(common.extraArgs ?? []),
        ];
        const offlineEnv = offline ? Object.fromEntries(Object.entries(OPENCODE_OFFLINE_ENV).filter(([key]) => env[key] === undefined)) : {};
        const skillPaths = request.skillPaths ?? [];
        if (skillPaths.length === 0) return okAsync({ args, env: offlineEnv, stdin: request.prompt });
        const config = withSkillPaths(env.OPENCODE_CONFIG_CONTENT, []);
        if (config instanceof KeelError) return errAsync(config);
        return stageSkillLinks("opencode", skillPaths, ".").map((staged) => ({
          args,
          env: { ...offlineEnv, OPENCODE_CONFIG_CONTENT: JSON.stringify(withSkillPaths(env.OPENCODE_CONFIG_CONTENT, [staged.dir])) },
          stdin: request.prompt,
          cleanup: staged.cleanup,
        }));
      },
      createParser: () => createOpenCodeParser(),
      outcome: { resumeFailure: OPENCODE_RESUME_FAILURE, emptyResumeIsFailure: true, requireThreadId: true },
    },
    common,
  );
}
