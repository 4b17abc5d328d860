import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const INSPECTOR = path.join(REPO_ROOT, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js");
const scratch = mkdtempSync(path.join(tmpdir(), "keel-inspector-"));
const home = path.join(scratch, "home");
mkdirSync(home);
const config = path.join(scratch, "config.json");
writeFileSync(config, JSON.stringify({ models: [{ id: "local-coder", strength: 50, contextWindow: 64_000, location: "installed", tier: "medium" }], executor: { kind: "scripted", reply: "ok" } }));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The real MCP Inspector CLI (`inspector --cli`), offline, starting `keel mcp` itself over stdio. */
function inspector(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const server = [process.execPath, "--import", "tsx", "--conditions=@keel/source", "packages/cli/src/bin.ts", "mcp", "--config", config, "--store", path.join(scratch, "store")];
  return new Promise((resolve, reject) => {
    // HOME in the scratch directory: the Inspector keeps its catalog there, never in the real home.
    const child = spawn(process.execPath, [INSPECTOR, "--cli", ...args, "--", ...server], { cwd: REPO_ROOT, env: { ...process.env, HOME: home, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("keel mcp under the real MCP Inspector CLI", () => {
  it("lists the tools with their input schemas", { timeout: 120_000 }, async () => {
    const listed = await inspector(["--method", "tools/list"]);
    expect(listed.code).toBe(0);
    const tools = (JSON.parse(listed.stdout) as { tools: { name: string; inputSchema: { type: string } }[] }).tools;
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["workflow_plan", "workflow_step", "workflow_status", "role_session_status", "skills_resolve", "handoff_write"]));
    for (const tool of tools) expect(tool.inputSchema.type).toBe("object");
  });

  it("calls a tool: workflow_catalog answers, workflow_status of an unknown run is a tool error with its code", { timeout: 120_000 }, async () => {
    const catalog = await inspector(["--method", "tools/call", "--tool-name", "workflow_catalog"]);
    expect(catalog.code).toBe(0);
    const answer = JSON.parse(catalog.stdout) as { isError?: boolean; content: { text: string }[] };
    expect(answer.isError ?? false).toBe(false);
    expect(JSON.parse(answer.content[0]!.text)).toMatchObject({ valid: true, definitions: { workflows: ["implement_issue", "review_change"] } });

    const missing = await inspector(["--method", "tools/call", "--tool-name", "workflow_status", "--tool-arg", "runId=no-such-run"]);
    const refused = JSON.parse(missing.stdout) as { isError?: boolean; content: { text: string }[] };
    expect(refused.isError).toBe(true);
    expect(JSON.parse(refused.content[0]!.text)).toMatchObject({ error: { code: "not_found" } });
  });
});
