import { resolve } from "node:path";
import { createBudget } from "@keel/budget";
import { KeelError, validate, type JsonValue } from "@keel/core";
import type { KeelStore } from "@keel/store";
import { createCatalog, inspectCatalogDirectory, inspectDefinitions, createWorkflowEngine, type Catalog, type CatalogIssue, type WorkflowEngine } from "@keel/workflow";
import { errAsync, okAsync, ResultAsync, type Result } from "neverthrow";
import { createHostExecutor } from "./internal/host-executor.js";
import { WorkflowHostConfigSchema, type WorkflowHostConfigInput } from "./workflow-host-config.js";
import { WORKFLOW_TOOLS, validateRequest, type WorkflowOperation } from "./workflow-tools.js";

/** Options of {@link createWorkflowHost}. */
export interface WorkflowHostOptions {
  /** Where runs, tasks, journals, budgets and leases live. */
  store: KeelStore;
  /** The host config (models, executor, limits): validated here. */
  config: WorkflowHostConfigInput;
  /** A project catalog directory (`skills/`, `roles/`, `workflows/`, `profiles/`), added to the built-ins. */
  catalogDir?: string;
  /** Where relative paths of the config resolve and CLI stages run (default the process's cwd). */
  cwd?: string;
}

/** What `workflow_catalog` answers. */
export interface CatalogReport {
  valid: boolean;
  /** The project catalog directory inspected, or null for the built-ins only. */
  catalogDir: string | null;
  /** Every problem, with its file, the path inside the document, the rule and the reason. */
  issues: CatalogIssue[];
  /** The definitions' ids by kind (only when valid). */
  definitions: { skills: string[]; roles: string[]; workflows: string[]; profiles: string[] } | null;
  digest: string | null;
}

/** A workflow engine behind the six operations, each taking the JSON a tool or `keel workflow` takes. */
export interface WorkflowHost {
  /** Runs one operation on a request (validated with the engine's own schema) and answers plain JSON. */
  run(operation: WorkflowOperation, request: unknown): ResultAsync<JsonValue, KeelError>;
  /** Inspects the definitions without building an engine. */
  inspectCatalog(): ResultAsync<CatalogReport, KeelError>;
}

/**
 * Creates a workflow host: the engine over a store, the built-in plus project definitions, and
 * the config's models and executor. The catalog is read on first use; a catalog with issues
 * refuses every operation but `catalog` with `invalid_input` and the issues.
 *
 * @throws KeelError `invalid_input` for a malformed config (a programmer or operator error).
 */
export function createWorkflowHost(options: WorkflowHostOptions): WorkflowHost {
  const config = validate(WorkflowHostConfigSchema, options.config, "workflow host config");
  if (config.isErr()) throw config.error;
  const cwd = options.cwd ?? process.cwd();
  const catalogDir = options.catalogDir === undefined ? undefined : resolve(cwd, options.catalogDir);
  const valid = config.value;
  let engine: Promise<Result<WorkflowEngine, KeelError>> | undefined;

  const inspectCatalog = (): ResultAsync<CatalogReport, KeelError> =>
    (catalogDir === undefined ? okAsync(inspectDefinitions({})) : inspectCatalogDirectory(catalogDir)).map((inspection) => ({
      valid: inspection.issues.length === 0 && inspection.catalog !== undefined,
      catalogDir: catalogDir ?? null,
      issues: inspection.issues,
      definitions: inspection.catalog ? idsOf(inspection.catalog) : null,
      digest: inspection.catalog?.digest ?? null,
    }));

  function buildEngine(catalog: Catalog): WorkflowEngine {
    const store = options.store;
    return createWorkflowEngine({
      store,
      catalog,
      budget: createBudget({ store }),
      executeStage: createHostExecutor(valid.executor, cwd),
      models: valid.models,
      ...(valid.preference === undefined ? {} : { preference: valid.preference }),
      ...(valid.limits === undefined ? {} : { limits: valid.limits }),
      ...(valid.sourceRoot === undefined ? {} : { sourceRoot: resolve(cwd, valid.sourceRoot) }),
    });
  }

  const engineOf = (): ResultAsync<WorkflowEngine, KeelError> => {
    engine ??= (async (): Promise<Result<WorkflowEngine, KeelError>> => {
      const catalog = catalogDir === undefined ? createCatalog() : await loadCatalogOrIssues(catalogDir);
      // A catalog with issues is read again next time: a long-lived server sees the fix.
      if (catalog.isErr()) engine = undefined;
      return catalog.map(buildEngine);
    })();
    return new ResultAsync(engine);
  };

  return Object.freeze({
    inspectCatalog,
    run: (operation: WorkflowOperation, request: unknown): ResultAsync<JsonValue, KeelError> => {
      const spec = WORKFLOW_TOOLS.find((candidate) => candidate.operation === operation);
      if (!spec) return errAsync(new KeelError("invalid_input", `unknown workflow operation "${String(operation)}"`));
      const parsed = validateRequest(spec, request);
      if (parsed.isErr()) return errAsync(parsed.error);
      if (operation === "catalog") return inspectCatalog().map((report) => report as unknown as JsonValue);
      // The engine validates again, with the same schemas: the given request, not zod's output, goes in.
      const given = request as Record<string, unknown>;
      const { runId, ...body } = given as { runId: string } & Record<string, unknown>;
      return engineOf().andThen((ready): ResultAsync<unknown, KeelError> => {
        switch (operation) {
          case "plan":
            return ready.plan(given as never);
          case "start":
            return ready.start(given as never);
          case "step":
            return ready.step(runId, body as never);
          case "checkpoint":
            return ready.checkpoint(runId, body as never);
          case "status":
            return ready.status(runId);
        }
      }).map((answer) => answer as JsonValue);
    },
  });
}

function loadCatalogOrIssues(directory: string): ResultAsync<Catalog, KeelError> {
  return inspectCatalogDirectory(directory).andThen((inspection) =>
    inspection.catalog && inspection.issues.length === 0
      ? okAsync(inspection.catalog)
      : errAsync(new KeelError("invalid_input", `the catalog at ${directory} has ${inspection.issues.length} issue(s): run workflow_catalog (keel workflow catalog) to see them`, { details: { issues: inspection.issues.slice(0, 20) as unknown as JsonValue[] } })),
  );
}

function idsOf(catalog: Catalog): NonNullable<CatalogReport["definitions"]> {
  return { skills: [...catalog.skills.keys()], roles: [...catalog.roles.keys()], workflows: [...catalog.workflows.keys()], profiles: [...catalog.profiles.keys()] };
}

