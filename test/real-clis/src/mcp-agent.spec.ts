// One real agent over MCP: Claude Code, pointed at the fake provider, is configured with
// `keel mcp` (stdio) through `--mcp-config` over a store and the built-in workflows. The scripted model calls
// Keel's tools — `workflow_step`, `workflow_status`, then `workflow_checkpoint` with the version
// the status answered — and the test proves from what the provider received that each tool's
// result reached the next model request, and from the store that the run was carried to its end.
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { runCli, type CliIo } from "@keel/cli";
import { startFakeProvider, type FakeProvider, type FakeProviderRequest, type FakeReply } from "@keel/testkit/provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REAL_CLI_VERSIONS, cliInstalled } from "./cli-sandbox.js";
import { createRealCliSetup, type RealCliSetup } from "./cli-setups.js";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const KEEL_BIN = join(REPO_ROOT, "packages", "cli", "src", "bin.ts");
/** tsx's loader by absolute URL: Claude Code starts the server in its own cwd, outside the repository. */
const TSX_LOADER = (() => {
  const manifest = createRequire(join(REPO_ROOT, "package.json")).resolve("tsx/package.json");
  const exported = (JSON.parse(readFileSync(manifest, "utf8")) as { exports: { ".": string } }).exports["."];
  return pathToFileURL(join(dirname(manifest), exported)).href;
})();

const DIFF = "--- a/src/pager.ts\n+++ b/src/pager.ts\n@@ -10,3 +10,3 @@\n-  const last = items.length;\n+  const last = items.length - 1;\n";
const TASK = { taskId: "review-mcp-agent", objective: "review the pager fix", workflow: "review_change", risk: "low", evidence: { diff: DIFF, validationStatus: "passed" } };
const REVIEW_TEXT = "the last index is fixed; no defects found (review-marker-5521)";

/** The text of the tool results in the last message of an Anthropic Messages request. */
function lastToolResults(request: FakeProviderRequest): string[] {
  const messages = (request.body as { messages?: { role: string; content: unknown }[] }).messages ?? [];
  const last = messages.at(-1);
  if (!last || !Array.isArray(last.content)) return [];
  return (last.content as { type: string; content?: unknown }[])
    .filter((block) => block.type === "tool_result")
    .map((block) => (typeof block.content === "string" ? block.content : Array.isArray(block.content) ? (block.content as { text?: string }[]).map((part) => part.text ?? "").join("") : ""));
}

/** The one tool result of the last message, parsed as Keel's JSON answer (a non-JSON result fails with its text). */
function toolAnswer(request: FakeProviderRequest): Record<string, unknown> {
  const results = lastToolResults(request);
  expect(results, "one tool result in the request").toHaveLength(1);
  try {
    return JSON.parse(results[0]!) as Record<string, unknown>;
  } catch {
    throw new Error(`the tool result is not Keel's JSON: ${results[0]!.slice(0, 2000)}`);
  }
}

/** `keel <args>` in process, its stdout parsed as JSON. */
async function keel(args: string[], cwd: string): Promise<{ code: number; value: Record<string, unknown>; err: string }> {
  let out = "";
  let err = "";
  const io: CliIo = { stdout: (text) => void (out += text), stderr: (text) => void (err += text), color: false, cwd, env: { PATH: process.env.PATH } };
  const code = await runCli(args, io);
  return { code, value: out.trim() === "" ? {} : (JSON.parse(out) as Record<string, unknown>), err };
}

describe.skipIf(!cliInstalled("claude-code") && process.env.CI !== "true")(`claude-code ${REAL_CLI_VERSIONS["claude-code"]} drives a workflow through keel mcp`, () => {
  let provider: FakeProvider;
  let setup: RealCliSetup;
  let scratch: string;
  let engineArgs: string[];
  let respond: (request: FakeProviderRequest) => FakeReply | undefined = () => undefined;

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), "keel-mcp-agent-"));
    const config = join(scratch, "keel-workflow.json");
    const store = `sqlite:${join(scratch, "keel.db")}`;
    await writeFile(
      config,
      JSON.stringify({
        models: [{ id: "local-coder", strength: 50, contextWindow: 64_000, location: "installed", tier: "medium" }],
        executor: { kind: "scripted", replies: { explore: "the change touches src/pager.ts only", diff_review: REVIEW_TEXT } },
        limits: { calls: 20 },
      }),
    );
    // The built-in workflows alone: no --catalog (an empty catalog directory is refused).
    engineArgs = ["--config", config, "--store", store];
    // The MCP config a user writes for Claude Code, with `keel mcp` run from the source tree.
    const mcpConfig = join(scratch, "keel.mcp.json");
    await writeFile(
      mcpConfig,
      JSON.stringify({ mcpServers: { keel: { type: "stdio", command: process.execPath, args: ["--import", TSX_LOADER, "--conditions=@keel/source", KEEL_BIN, "mcp", ...engineArgs] } } }),
    );
    provider = (await startFakeProvider({ respond: (request) => setup.sideCall(request) ?? respond(request) }))._unsafeUnwrap();
    setup = await createRealCliSetup("claude-code", provider, {
      extraArgs: ["--mcp-config", mcpConfig, "--strict-mcp-config"],
      // Claude Code 2.1 waits for --mcp-config servers only MCP_CONNECT_TIMEOUT_MS (default 5 s)
      // before its first model call, then answers a call to a server still connecting with "No
      // such tool available". `keel mcp` started through tsx on a loaded machine needs longer.
      // MCP_CONNECTION_NONBLOCKING=false keeps that wait; MCP_TIMEOUT is the server's own
      // start-up timeout.
      env: { MCP_CONNECTION_NONBLOCKING: "false", MCP_CONNECT_TIMEOUT_MS: "120000", MCP_TIMEOUT: "120000" },
    });
  });
  afterAll(async () => {
    await provider?.close();
    await setup?.sandbox.cleanup();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it("calls workflow_step, workflow_status and workflow_checkpoint; each result reaches the next model request, the store shows the run completed", { timeout: 300_000 }, async () => {
    const started = await keel(["workflow", "start", "--request", await writeRequest("start", TASK), ...engineArgs], scratch);
    expect(started.code, started.err).toBe(0);
    const runId = started.value["runId"] as string;
    expect(started.value).toMatchObject({ version: 1, status: "ready" });

    // The model: step the run, read its status, then accept at the version the status answered.
    let statusVersion: number | undefined;
    const script: ((request: FakeProviderRequest) => FakeReply)[] = [
      () => ({ toolCalls: [{ name: "mcp__keel__workflow_step", arguments: { runId, version: 1 } }], usage: { inputUncached: 400, output: 20 } }),
      () => ({ toolCalls: [{ name: "mcp__keel__workflow_status", arguments: { runId } }], usage: { inputUncached: 500, output: 12 } }),
      (request) => {
        const status = toolAnswer(request) as { version?: number };
        statusVersion = status.version;
        return { toolCalls: [{ name: "mcp__keel__workflow_checkpoint", arguments: { runId, version: status.version ?? -1, action: "accept", disposition: "merge" } }], usage: { inputUncached: 600, output: 25 } };
      },
      () => ({ text: "Accepted: the review_change run is completed.", usage: { inputUncached: 700, output: 10 } }),
    ];
    respond = () => script.shift()?.(provider.requests.at(-1)!) ?? { error: { status: 400, message: "fake provider: the test scripted no more calls" } };

    const from = provider.requests.length;
    const result = await setup.backend.runTurn({ prompt: `Drive the Keel workflow run ${runId} to its checkpoint and accept it.`, cwd: setup.sandbox.cwd, timeoutMs: 240_000 });
    const turnCalls = provider.requests.slice(from).filter((call) => call.format !== null && !setup.isSideCall(call) && call.hasTools);
    if (result.isErr()) throw new Error(`the turn failed: ${result.error.code}: ${result.error.message}\n${JSON.stringify(provider.failures)}`);
    expect(result.value.text).toContain("run is completed");
    expect(provider.failures.filter((failure) => failure.kind === "outside_host" || failure.kind === "unknown_route" || failure.kind === "unscripted")).toEqual([]);
    expect(turnCalls).toHaveLength(4);

    // Claude Code declared Keel's tools (from the server's tools/list) to the model.
    const declared = ((turnCalls[0]!.body as { tools?: { name: string }[] }).tools ?? []).map((tool) => tool.name);
    expect(declared).toEqual(expect.arrayContaining(["mcp__keel__workflow_step", "mcp__keel__workflow_status", "mcp__keel__workflow_checkpoint", "mcp__keel__role_session_status"]));

    // Each tool's result is in the very next request.
    const stepped = toolAnswer(turnCalls[1]!) as unknown as { ran: { stage: string; packet: { text: string } }[]; status: { status: string; version: number } };
    expect(stepped.ran.map((call) => call.stage)).toEqual(["explore", "review"]);
    expect(stepped.ran[1]!.packet.text).toBe(REVIEW_TEXT);
    expect(stepped.status.status).toBe("awaiting_checkpoint");
    const status = toolAnswer(turnCalls[2]!) as unknown as { runId: string; status: string; version: number };
    expect(status).toMatchObject({ runId, status: "awaiting_checkpoint", version: stepped.status.version });
    expect(statusVersion).toBe(stepped.status.version);
    const decided = toolAnswer(turnCalls[3]!) as unknown as { status: string; terminal: boolean };
    expect(decided).toMatchObject({ status: "completed", terminal: true });

    // The store — read by another process — shows what the agent did.
    const final = await keel(["workflow", "status", "--request", await writeRequest("status", { runId }), ...engineArgs], scratch);
    expect(final.code, final.err).toBe(0);
    expect(final.value).toMatchObject({ runId, status: "completed", budget: { settled: { calls: 2 } } });
  });

  async function writeRequest(name: string, body: unknown): Promise<string> {
    const file = join(scratch, `${name}.json`);
    await writeFile(file, JSON.stringify(body));
    return file;
  }
});
