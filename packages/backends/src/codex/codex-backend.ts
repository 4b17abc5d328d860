import { validateOrThrow } from "@keel/core";
import { z } from "zod";
import { type Backend, type BackendCapabilities } from "@keel/backend";
import { CliBackendOptionsSchema, createCliBackend, invocation, promptArgument, withPlainEnv, type CliBackendOptions, type BackendAdapterInfo } from "../kit/index.js";
import { CODEX_RESUME_FAILURE, createCodexParser } from "./codex-events.js";

const CAPABILITIES = Object.freeze({ resume: true, skills: "staged", usage: "full" }) satisfies BackendCapabilities;

/**
 * What `keel doctor` shows for the Codex adapter: its command, capabilities and the CLI
 * versions it is proven against (the real CLI, offline, against a fake provider).
 */
export const adapterInfo: BackendAdapterInfo<CodexBackendOptions> = {
  id: "codex",
  kind: "cli",
  command: "codex",
  capabilities: CAPABILITIES,
  provenAgainst: "real-cli",
  versions: { provenWith: "0.171.0", below: "0.172.0" },
  create: (options) => createCodexBackend(options),
};

/** Codex sandbox modes. */
export type CodexSandbox = "read-only" | "workspace-write" | "danger-full-access";

/** Options of {@link createCodexBackend}. */
export interface CodexBackendOptions extends CliBackendOptions {
  /** `--sandbox` (default `workspace-write`: the agent may edit `cwd`; `exec` never asks for approval). */
  sandbox?: CodexSandbox;
  /** Pass `--skip-git-repo-check` (default true: Keel pins `cwd`, which need not be a git repository). */
  skipGitRepoCheck?: boolean;
  /**
   * Codex features to switch off with `--disable <feature>` (default `["plugins", "apps"]`:
   * without them Codex 0.171 reaches outside hosts even with a local provider).
   */
  disable?: readonly string[];
}

const OptionsSchema = CliBackendOptionsSchema.extend({
  sandbox: z.enum(["read-only", "workspace-write", "danger-full-access"]).optional(),
  skipGitRepoCheck: z.boolean().optional(),
  disable: z.array(z.string().regex(/^[a-z0-9_-]+$/)).optional(),
});

/**
 * The OpenAI Codex CLI (`codex`):
 * `codex exec --json --cd <cwd> --sandbox <mode> [--skip-git-repo-check] [--disable <feature>…]
 * [-m M] [extra…] [resume <id>] <prompt>` — every flag goes before `resume`, which re-passes
 * model and sandbox (Codex keeps only the conversation).
 *
 * Skills are `staged`: Codex has no skill flag and reads `<cwd>/.agents/skills` (up to the
 * repository root). A gone thread is `resume_failed` (exit 1, "no rollout found for thread id").
 * Usage maps `input_tokens` (which includes `cached_input_tokens`) to disjoint buckets; Codex
 * reports no cost. A resumed turn's usage is the thread's running total: the adapter returns the
 * total as `resumeState` and reports, on the next resume, the difference (pass the state back).
 */
export function createCodexBackend(options: CodexBackendOptions = {}): Backend {
  validateOrThrow(OptionsSchema, withPlainEnv(options), "codex backend options");
  const { sandbox = "workspace-write", skipGitRepoCheck = true, disable = ["plugins", "apps"], ...common } = options;
  return createCliBackend(
    {
      id: "codex",
      capabilities: CAPABILITIES,
      defaultCommand: "codex",
      buildInvocation: ({ request, model, resumeThreadId }) =>
        invocation([
          "exec",
          "--json",
          "--cd",
          request.cwd,
          "--sandbox",
          sandbox,
          ...(skipGitRepoCheck ? ["--skip-git-repo-check"] : []),
          ...disable.flatMap((feature) => ["--disable", feature]),
          ...(model ? ["-m", model] : []),
          ...(common.extraArgs ?? []),
          ...(resumeThreadId ? ["resume", resumeThreadId] : []),
          promptArgument(request.prompt),
        ]),
      createParser: ({ resumeThreadId, resumeState }) => createCodexParser({ resumeThreadId, resumeState }),
      outcome: { resumeFailure: CODEX_RESUME_FAILURE, requireThreadId: true },
    },
    common,
  );
}
