import { open, readFile } from "node:fs/promises";
import path from "node:path";
import { KeelError, unwrapOrThrow } from "@keel/core";
import { WORKFLOW_OPERATIONS, WorkflowHostConfigSchema, createWorkflowHost, parseRequestText, refusalOf, type WorkflowOperation } from "@keel/mcp";
import { openStore, parseStoreUrl, type StoreLocation } from "@keel/runtime";
import { createMemoryStore, type KeelStore } from "@keel/store";
import { ok, type Result } from "neverthrow";
import { EVIDENCE_LIMITS } from "@keel/workflow/schemas";
import { CliUsageError, type CliCommand } from "../cli-command.js";
import { parseHeartbeat, startHeartbeat } from "../cli-heartbeat.js";
import { paint, type CliIo } from "../cli-io.js";
import { printable } from "../internal/inspect-text.js";

const COMMON_OPTIONS = `Options:
  --request <file>   the request JSON (the engine's own schema), or - for standard input;
                     at most ${EVIDENCE_LIMITS.requestBytes.toLocaleString("en-US")} bytes
  --store <url>      the store runs live in: a directory (default .keel),
                     sqlite:<file> or postgres://…[?schema=<name>]
  --config <file>    the host config JSON: models, executor, limits, sourceRoot (required
                     except for catalog; every process over one store uses the same one)
  --catalog <dir>    a project catalog directory (skills/, roles/, workflows/, profiles/),
                     added to the built-in definitions; it must exist (not_found otherwise)
                     and hold at least one definition file
  --heartbeat <s>    step: seconds between the lines on stderr while its stages run
                     (default 10; 0: none)
  -h, --help`;

const EXIT_CODES = `Exit codes: 0 ok (the answer as JSON on stdout); 1 refused: stdout holds
{ "error": { "code", "message", "whatToDo", "retryable", "details" } } with the KeelError
code (conflict, too_large, invalid_input, not_found, lease_held, ...); 2 bad usage (unknown
option or subcommand, no --request, no --config, unreadable file, bad store URL).`;

const SUBCOMMAND_HELP: Record<WorkflowOperation, string> = {
  catalog: `keel workflow catalog — inspect the workflow definitions

Usage: keel workflow catalog [--catalog <dir>] [--request <file>]

Reads the built-in definitions and the project catalog directory, and reports every
validation issue with its file, the path inside the document, the rule and the reason, plus
the ids of every skill, role, workflow and profile. Writes nothing; opens no store and needs
no config.
A --catalog directory that does not exist is refused (not_found), and a path that is not a
directory too (invalid_input): a mistyped path never falls back to the built-ins alone. A
directory with no definition file at all is reported invalid (an issue on its file).
The request, when given, is {}. Exit code 1 when any issue is found or the directory is refused.`,
  plan: `keel workflow plan — resolve a task's workflow, writing nothing

Usage: keel workflow plan --request <task.json> --config <file> [--store <dir>] [--catalog <dir>]

The request is a task: { taskId, objective, workflow, profile?, scope?, risk?, complexity?,
evidence? }. Answers the stages (skipped ones with the reason), roles and routing. Opens no
store: nothing is created.`,
  start: `keel workflow start — start a run for a task

Usage: keel workflow start --request <task.json> --config <file> [--store <dir>] [--catalog <dir>]

The request is a task (as for plan). Answers the run's status at version 1; the same taskId
answers the live run unchanged.`,
  step: `keel workflow step — run local stages until a checkpoint, a handoff or an end

Usage: keel workflow step --request <step.json> --config <file> [--store <dir>] [--catalog <dir>]

The request is { runId, version, evidence?, packets?, tierCap?, onMismatch? }: the run's
latest version, and the handoff packets ({ digest, packet }) of earlier answers passed back.
A stale version is refused with conflict and changes nothing.`,
  checkpoint: `keel workflow checkpoint — the supervisor's decision at a checkpoint

Usage: keel workflow checkpoint --request <decision.json> --config <file> [--store <dir>] [--catalog <dir>]

The request is { runId, version, action: accept|reject|revise|abort, note?, evidence?,
acknowledgeUnverifiedChecks?, disposition? }.`,
  status: `keel workflow status — the run's bounded status

Usage: keel workflow status --request <status.json> --config <file> [--store <dir>] [--catalog <dir>]

The request is { runId }. Only reads: the store must exist (a missing one is not_found, and
nothing is created or migrated).`,
};

const HELP = `keel workflow — drive a staged workflow one command at a time

Usage: keel workflow <catalog|plan|start|step|checkpoint|status> --request <file.json|-> [options]

Each subcommand takes the same JSON as the MCP tool of the same name (workflow_<subcommand>,
see keel mcp), validated with the engine's own schemas, and prints its answer as JSON. Runs
live in the store, so separate processes carry one run through, one command at a time.
\`keel workflow <subcommand> --help\` shows one subcommand.

${COMMON_OPTIONS}

${EXIT_CODES}

Example:
  echo '{"taskId":"review-42","objective":"review the pager fix","workflow":"review_change","evidence":{"diff":"..."}}' \\
    | keel workflow start --request - --config keel-workflow.json
`;

function isOperation(value: string | undefined): value is WorkflowOperation {
  return (WORKFLOW_OPERATIONS as readonly string[]).includes(value ?? "");
}

/** Reads at most the request limit plus one byte: a larger request is refused without reading it all. */
async function readBounded(source: string, io: CliIo): Promise<string> {
  const limit = EVIDENCE_LIMITS.requestBytes + 1;
  if (source === "-") {
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      total += chunk.length;
      if (total >= limit) break;
    }
    return Buffer.concat(chunks).subarray(0, limit).toString("utf8");
  }
  const handle = await open(path.resolve(io.cwd, source), "r").catch((error: NodeJS.ErrnoException) => {
    throw new CliUsageError(`cannot read the request ${source}: ${error.code ?? error.message}`);
  });
  try {
    const buffer = Buffer.alloc(limit);
    let filled = 0;
    while (filled < limit) {
      const { bytesRead } = await handle.read(buffer, filled, limit - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled).toString("utf8");
  } finally {
    await handle.close();
  }
}

/**
 * The host config of `--config <file>` (shared with `keel mcp`): read, parsed and validated
 * with {@link WorkflowHostConfigSchema}; anything else is bad usage.
 */
export async function readHostConfig(file: string, io: CliIo): Promise<unknown> {
  const text = await readFile(path.resolve(io.cwd, file), "utf8").catch((error: NodeJS.ErrnoException) => {
    throw new CliUsageError(`cannot read the config ${file}: ${error.code ?? error.message}`);
  });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliUsageError(`the config ${file} is not JSON: ${(error as Error).message}`);
  }
  const parsed = WorkflowHostConfigSchema.safeParse(value);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new CliUsageError(`the config ${file} is invalid${first?.path.length ? ` at ${first.path.join(".")}` : ""}: ${first?.message ?? ""}`);
  }
  return value;
}

function refuse(io: CliIo, error: KeelError): number {
  io.stdout(`${JSON.stringify(refusalOf(error), null, 2)}\n`);
  io.stderr(`${paint(io, "red", "refused")} (${error.code}): ${printable(error.message)}\n`);
  return 1;
}

/** The value of a string option, `undefined` when absent; an empty value is bad usage (shared with `keel mcp`). */
export function stringOption(args: { values: Record<string, unknown> }, name: string): string | undefined {
  const value = args.values[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value === "") throw new CliUsageError(`--${name} needs a value`);
  return value;
}

/**
 * The store of `--store <url>` (a directory, `sqlite:<file>` or `postgres://…`, default `.keel`;
 * see `parseStoreUrl` of `@keel/runtime`), opened for writing, shared with `keel mcp`: a bad URL
 * is bad usage, checked before anything is opened; a store that cannot be opened (its adapter
 * not installed, among other things) is thrown as its `KeelError`.
 */
export async function openStoreOption(args: { values: Record<string, unknown> }, io: CliIo): Promise<KeelStore> {
  const location = storeOption(args, io);
  return unwrapOrThrow(await openStore(location));
}

/** The parsed `--store <url>` (default `.keel`); a bad URL is bad usage. */
function storeOption(args: { values: Record<string, unknown> }, io: CliIo): StoreLocation {
  const location = parseStoreUrl(stringOption(args, "store") ?? ".keel", io.cwd);
  if (location.isErr()) throw new CliUsageError(`--store: ${location.error.message}`);
  return location.value;
}

/**
 * The store an operation runs against. `catalog` and `plan` read no store (the catalog and the
 * task are all they need): an empty memory store stands in, and nothing is opened or created.
 * `status` only reads: the store is opened for reading (`mode: "read"`), so a
 * missing one is `not_found`, never created. The others write, and create a missing store.
 */
async function storeForOperation(operation: WorkflowOperation, args: { values: Record<string, unknown> }, io: CliIo): Promise<Result<KeelStore, KeelError>> {
  const location = storeOption(args, io);
  if (operation === "catalog" || operation === "plan") return ok(createMemoryStore());
  if (operation === "status") return openStore(location, { mode: "read" });
  // A store that cannot be opened for writing fails the command (`error (<code>)`), not the operation.
  return ok(unwrapOrThrow(await openStore(location)));
}

/** `keel workflow <operation> --request <file|->`: one workflow operation per process, JSON in and out. */
export const workflowCommand: CliCommand & { helpFor(positionals: readonly string[]): string } = {
  name: "workflow",
  summary: "drive a staged workflow: catalog, plan, start, step, checkpoint, status (JSON in, JSON out)",
  help: HELP,
  helpFor: (positionals) => {
    const operation = positionals[0];
    return isOperation(operation) ? `${SUBCOMMAND_HELP[operation]}\n\n${COMMON_OPTIONS}\n\n${EXIT_CODES}\n` : HELP;
  },
  options: { request: { type: "string" }, store: { type: "string" }, config: { type: "string" }, catalog: { type: "string" }, heartbeat: { type: "string" } },
  allowPositionals: true,
  run: async (args, io) => {
    const [operation, ...extra] = args.positionals;
    if (!isOperation(operation)) throw new CliUsageError(operation === undefined ? `workflow needs a subcommand: ${WORKFLOW_OPERATIONS.join(", ")}` : `unknown workflow subcommand "${operation}": use ${WORKFLOW_OPERATIONS.join(", ")}`);
    if (extra.length > 0) throw new CliUsageError(`workflow ${operation} takes no positional arguments, got ${extra.join(" ")}`);
    const requestSource = stringOption(args, "request");
    const configFile = stringOption(args, "config");
    const catalogDir = stringOption(args, "catalog");
    const heartbeatMs = parseHeartbeat(stringOption(args, "heartbeat"));
    if (requestSource === undefined && operation !== "catalog") throw new CliUsageError(`workflow ${operation} needs --request <file.json> (or - for standard input)`);
    if (configFile === undefined && operation !== "catalog") throw new CliUsageError(`workflow ${operation} needs --config <file.json> (models and executor)`);
    const text = requestSource === undefined ? "{}" : await readBounded(requestSource, io);
    const request = parseRequestText(text);
    if (request.isErr()) return refuse(io, request.error);
    const config = configFile === undefined ? { models: [], executor: { kind: "scripted" as const } } : await readHostConfig(configFile, io);
    const opened = await storeForOperation(operation, args, io);
    if (opened.isErr()) return refuse(io, opened.error);
    const store = opened.value;
    try {
      const host = createWorkflowHost({ store, config: config as never, cwd: io.cwd, ...(catalogDir === undefined ? {} : { catalogDir }) });
      // A step runs model calls (seconds to minutes each): a line on stderr now and then says it is alive.
      const stop = operation === "step" ? startHeartbeat(heartbeatMs, (seconds) => io.stderr(`keel workflow step: stages running for ${seconds} s\n`)) : () => undefined;
      let answer: Awaited<ReturnType<typeof host.run>>;
      try {
        answer = await host.run(operation, request.value);
      } finally {
        stop();
      }
      if (answer.isErr()) return refuse(io, answer.error);
      io.stdout(`${JSON.stringify(answer.value, null, 2)}\n`);
      return operation === "catalog" && (answer.value as { valid?: boolean }).valid === false ? 1 : 0;
    } finally {
      await store.close();
    }
  },
};
