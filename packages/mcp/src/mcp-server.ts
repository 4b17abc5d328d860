import { KeelError, utf8Bytes, type JsonValue } from "@keel/core";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { SkillLayer } from "@keel/skills";
import type { KeelStore } from "@keel/store";
import { EVIDENCE_LIMITS } from "@keel/workflow/schemas";
import type { ResultAsync } from "neverthrow";
import { z } from "zod";
import { HandoffWriteRequestSchema, RoleSessionStatusRequestSchema, SkillsResolveRequestSchema, createSessionTools } from "./session-tools.js";
import { createWorkflowHost } from "./workflow-host.js";
import type { WorkflowHostConfigInput } from "./workflow-host-config.js";
import { WORKFLOW_TOOLS, refusalOf } from "./workflow-tools.js";

/** The version the server reports in its MCP `initialize` answer. */
export const KEEL_MCP_VERSION = "0.1.0";

/** Options of {@link createKeelMcpServer}. */
export interface KeelMcpServerOptions {
  /** Where runs, role sessions and handoffs live. The caller opens and closes it. */
  store: KeelStore;
  /** The workflow host config: models, executor, limits, sourceRoot. */
  config: WorkflowHostConfigInput;
  /** A project catalog directory added to the built-in definitions. */
  catalogDir?: string;
  /** The skill layers `skills_resolve` reads, in precedence order. */
  skillLayers?: SkillLayer[];
  /** Where relative paths resolve and CLI stages run (default the process's cwd). */
  cwd?: string;
}

/** A Keel MCP server: the SDK's `Server` with Keel's tools, not yet connected. */
export interface KeelMcpServer {
  /** The SDK server: connect it to any transport (`serveStdio` uses stdio). */
  readonly server: Server;
  /** The tools it lists, with their JSON schemas. */
  readonly tools: readonly Tool[];
  /** Closes the transport and releases the role-session leases held (the store stays open). */
  close(): Promise<void>;
}

const SESSION_TOOLS = [
  { name: "role_session_status", schema: RoleSessionStatusRequestSchema, description: "A mission's roles with their capsules' thread bindings (backend, model, branch, thread id) and counters, the handoff revision of each, and the mission checkpoint version. Writes nothing." },
  { name: "skills_resolve", schema: SkillsResolveRequestSchema, description: "A role's skill view: the ordered roots, then its OWN and REFERENCE skills (name, description, path; never a body) and the diagnostics." },
  { name: "handoff_write", schema: HandoffWriteRequestSchema, description: "Write a role's handoff (done, inFlight, nextSteps, warnings) for a mission, replacing the previous one. Always writable whatever the hygiene limits; resets no counter." },
] as const;

function inputSchemaOf(schema: z.ZodType): Tool["inputSchema"] {
  const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  delete json["$schema"];
  return { ...json, type: "object" } as Tool["inputSchema"];
}

function answered(value: JsonValue): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value) }] };
}

function refused(error: KeelError): CallToolResult {
  return { isError: true, content: [{ type: "text", text: JSON.stringify(refusalOf(error)) }] };
}

/**
 * Creates the Keel MCP server over a store and a workflow host config: the six workflow tools
 * (`workflow_catalog`, `_plan`, `_start`, `_step`, `_checkpoint`, `_status`), whose input
 * schemas are generated from the engine's own zod schemas, plus `role_session_status`,
 * `skills_resolve` and `handoff_write`. A refusal is an MCP tool error (`isError`) whose text
 * is `{ "error": { code, message, whatToDo, retryable, details } }`.
 *
 * @throws KeelError `invalid_input` for a malformed config.
 *
 * @example
 * ```ts
 * const keel = createKeelMcpServer({ store, config: { models, executor: { kind: "cli", backend: "claude-code" } } });
 * await keel.server.connect(new StdioServerTransport());
 * ```
 */
export function createKeelMcpServer(options: KeelMcpServerOptions): KeelMcpServer {
  const host = createWorkflowHost({ store: options.store, config: options.config, ...(options.catalogDir === undefined ? {} : { catalogDir: options.catalogDir }), ...(options.cwd === undefined ? {} : { cwd: options.cwd }) });
  const sessionTools = createSessionTools({ store: options.store, ...(options.skillLayers === undefined ? {} : { skillLayers: options.skillLayers }) });
  const tools: Tool[] = [...WORKFLOW_TOOLS, ...SESSION_TOOLS].map((spec) => ({ name: spec.name, description: spec.description, inputSchema: inputSchemaOf(spec.schema) }));
  const handlers = new Map<string, (request: unknown) => ResultAsync<JsonValue, KeelError>>([
    ...WORKFLOW_TOOLS.map((spec) => [spec.name, (request: unknown) => host.run(spec.operation, request)] as const),
    ["role_session_status", sessionTools.roleSessionStatus],
    ["skills_resolve", sessionTools.skillsResolve],
    ["handoff_write", sessionTools.handoffWrite],
  ]);
  const server = new Server({ name: "keel", version: KEEL_MCP_VERSION }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const handler = handlers.get(request.params.name);
    if (!handler) return refused(new KeelError("not_found", `unknown tool "${request.params.name}": list the tools for their names`, { details: { tool: request.params.name } }));
    const input = request.params.arguments ?? {};
    const bytes = utf8Bytes(JSON.stringify(input));
    if (bytes > EVIDENCE_LIMITS.requestBytes) return refused(new KeelError("too_large", `the request is ${bytes} bytes, over the limit of ${EVIDENCE_LIMITS.requestBytes}`, { details: { bytes, limit: EVIDENCE_LIMITS.requestBytes } }));
    const result = await handler(input);
    return result.isOk() ? answered(result.value) : refused(result.error);
  });
  return Object.freeze({
    server,
    tools,
    close: async () => {
      await server.close();
      await sessionTools.close();
    },
  });
}

/**
 * Serves {@link createKeelMcpServer} on this process's stdin and stdout until stdin ends or
 * the client closes the connection, then resolves (the store stays open: close it after).
 */
export async function serveStdio(options: KeelMcpServerOptions): Promise<void> {
  const keel = createKeelMcpServer(options);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
  });
  await keel.server.connect(transport);
  await closed;
  await keel.close();
}
