import { builtInAdapterIds } from "@keel/backends";
import { LimitsSchema } from "@keel/budget/schemas";
import { ModelRegistrySchema } from "@keel/workflow/schemas";
import { z } from "zod";

// The adapter ids of @keel/backends, read from its exports map: no adapter is loaded here.
const adapterId = z
  .string()
  .refine((id) => builtInAdapterIds().includes(id), { error: () => `must be an adapter of @keel/backends: ${builtInAdapterIds().join(", ")}` });

/**
 * How a host runs a stage's call:
 * - `scripted`: answers from the config, per skill (`replies`) or with one `reply`: for dry runs,
 *   demos and tests; nothing leaves the process.
 * - `cli`: an adapter of `@keel/backends` (`backend`: `codex`, `claude-code`, … — a coding-agent
 *   CLI, optionally at another `command`), run in `cwd`. Its folder is loaded at the first stage.
 */
export const HostExecutorSchema = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("scripted"),
    replies: z.record(z.string().min(1).max(128), z.string().min(1).max(12_000)).optional(),
    reply: z.string().min(1).max(12_000).optional(),
  }),
  z.strictObject({
    kind: z.literal("cli"),
    backend: adapterId,
    command: z.string().min(1).max(4096).optional(),
    cwd: z.string().min(1).max(4096).optional(),
  }),
]);

/** A host executor config. */
export type HostExecutor = z.output<typeof HostExecutorSchema>;

/**
 * The config of a workflow host (`--config <file.json>` of `keel workflow` and `keel mcp`):
 * the model registry, routing preference, global limits, the evidence source root and how a
 * stage's call runs. Every process over one store must use the same models and preference, or
 * a run refuses to resume with `routing_changed`.
 */
export const WorkflowHostConfigSchema = z.strictObject({
  models: ModelRegistrySchema,
  preference: z.literal(["balanced", "quality"]).optional(),
  limits: LimitsSchema.optional(),
  sourceRoot: z.string().min(1).max(4096).optional(),
  executor: HostExecutorSchema,
});

/** A workflow host config as written. */
export type WorkflowHostConfigInput = z.input<typeof WorkflowHostConfigSchema>;
/** A validated workflow host config. */
export type WorkflowHostConfig = z.output<typeof WorkflowHostConfigSchema>;
