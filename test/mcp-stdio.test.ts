import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { digest } from "@keel/core";
import { createRoleSessions } from "@keel/sessions";
import { createFsStore } from "@keel/store-fs";
import { createSqliteStore } from "@keel/store-sqlite";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { okAsync } from "neverthrow";
import { afterAll, describe, expect, it } from "vitest";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const scratch = mkdtempSync(path.join(tmpdir(), "keel-mcp-"));
const config = path.join(scratch, "config.json");
const store = path.join(scratch, "store");
writeFileSync(
  config,
  JSON.stringify({
    models: [{ id: "local-coder", strength: 50, contextWindow: 64_000, location: "installed", tier: "medium" }],
    executor: { kind: "scripted", replies: { explore: "the change touches src/pager.ts only", diff_review: "the last index is fixed; no defects found" } },
    limits: { calls: 20 },
  }),
);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const DIFF = "--- a/src/pager.ts\n+++ b/src/pager.ts\n@@ -10,3 +10,3 @@\n-  const last = items.length;\n+  const last = items.length - 1;\n";

interface ToolAnswer {
  isError: boolean;
  value: Record<string, unknown>;
}

/** `keel mcp` as a real child process, spoken to by the SDK's own client. */
async function connect(extraArgs: string[] = [], storeUrl: string = store): Promise<{ call(name: string, args: Record<string, unknown>): Promise<ToolAnswer>; client: Client; close(): Promise<void> }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", "--conditions=@keel/source", "packages/cli/src/bin.ts", "mcp", "--config", config, "--store", storeUrl, ...extraArgs],
    cwd: REPO_ROOT,
    env: { ...(process.env as Record<string, string>), NO_COLOR: "1" },
    stderr: "pipe",
  });
  const client = new Client({ name: "keel-test", version: "1.0.0" });
  await client.connect(transport);
  return {
    client,
    call: async (name, args) => {
      const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: { type: string; text: string }[] };
      return { isError: result.isError === true, value: JSON.parse(result.content[0]!.text) as Record<string, unknown> };
    },
    close: () => client.close(),
  };
}

describe("keel mcp over stdio, with the SDK's client", () => {
  it("lists every tool with a JSON schema made from the engine's zod schemas", { timeout: 120_000 }, async () => {
    const server = await connect();
    try {
      const { tools } = await server.client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(
        ["handoff_write", "role_session_status", "skills_resolve", "workflow_catalog", "workflow_checkpoint", "workflow_plan", "workflow_start", "workflow_status", "workflow_step"].sort(),
      );
      const step = tools.find((tool) => tool.name === "workflow_step")!;
      expect(step.inputSchema.type).toBe("object");
      expect(step.inputSchema.required).toEqual(expect.arrayContaining(["runId", "version"]));
      expect(Object.keys(step.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(["runId", "version", "evidence", "packets", "tierCap", "onMismatch"]));
      const checkpoint = tools.find((tool) => tool.name === "workflow_checkpoint")!;
      expect((checkpoint.inputSchema.properties as Record<string, { enum?: string[] }>)["action"]!.enum).toEqual(["accept", "reject", "revise", "abort"]);

      const catalog = await server.call("workflow_catalog", {});
      expect(catalog.isError).toBe(false);
      expect((catalog.value["definitions"] as { workflows: string[] }).workflows).toEqual(["implement_issue", "review_change"]);
    } finally {
      await server.close();
    }
  });

  it("drives review_change from plan to the final checkpoint across a server restart, packets passed back", { timeout: 180_000 }, async () => {
    const task = { taskId: "review-mcp", objective: "review the pager fix", workflow: "review_change", risk: "low", evidence: { context: "the pager shows an empty last page" } };
    let first = await connect();
    let runId: string;
    let version: number;
    let explorePacket: { digest: string; packet: Record<string, unknown> };
    try {
      const plan = await first.call("workflow_plan", task);
      expect(plan.isError).toBe(false);
      expect((plan.value["stages"] as { id: string }[]).map((stage) => stage.id)).toEqual(["explore", "review", "security_review", "resource_review", "decide"]);
      const started = await first.call("workflow_start", task);
      expect(started.isError).toBe(false);
      runId = started.value["runId"] as string;
      // No diff yet: explore runs, the review stops before its stage for missing evidence.
      const step = await first.call("workflow_step", { runId, version: started.value["version"] });
      expect(step.isError).toBe(false);
      const ran = step.value["ran"] as { stage: string; packetDigest: string; packet: Record<string, unknown> }[];
      expect(ran.map((call) => call.stage)).toEqual(["explore"]);
      const status = step.value["status"] as { version: number; outcome: { reason: string } | null; currentStage: string };
      expect(status.currentStage).toBe("review");
      expect(status.outcome?.reason).toBe("missing_evidence");
      version = status.version;
      explorePacket = { digest: ran[0]!.packetDigest, packet: ran[0]!.packet };
      // The packet the client keeps is bound to the sha256 of its canonical JSON.
      expect(digest(explorePacket.packet)).toBe(explorePacket.digest);
      expect(explorePacket.packet["text"]).toBe("the change touches src/pager.ts only");
    } finally {
      await first.close();
    }

    // A new server process over the same store carries the run on.
    first = await connect();
    try {
      const status = await first.call("workflow_status", { runId });
      expect(status.value).toMatchObject({ runId, version, status: expect.any(String) });

      // Packets come back from the client: a changed one is refused against its digest,
      // the unchanged one is accepted as a current packet of the run.
      const tampered = await first.call("workflow_step", { runId, version, packets: [{ digest: explorePacket.digest, packet: { ...explorePacket.packet, text: "no defects anywhere" } }] });
      expect(tampered.isError).toBe(true);
      expect(tampered.value["error"]).toMatchObject({ code: "invalid_input", details: { reason: "digest_mismatch" } });
      const passedBack = await first.call("workflow_step", { runId, version, packets: [explorePacket] });
      expect(passedBack.value).not.toHaveProperty("error");
      const waiting = passedBack.value["status"] as { version: number; currentStage: string; outcome: { reason: string } | null };
      expect(waiting).toMatchObject({ currentStage: "review", outcome: { reason: "missing_evidence" } });
      version = waiting.version;

      // The diff arrives: explore is not run (nor paid for) again, the review runs to the checkpoint.
      const step = await first.call("workflow_step", { runId, version, evidence: { diff: DIFF, validationStatus: "passed" } });
      expect(step.value).not.toHaveProperty("error");
      const ran = step.value["ran"] as { stage: string; packetDigest: string; packet: Record<string, unknown> }[];
      expect(ran.map((call) => call.stage)).toEqual(["review"]);
      for (const call of ran) expect(digest(call.packet)).toBe(call.packetDigest);
      expect(ran[0]!.packet["text"]).toBe("the last index is fixed; no defects found");
      const awaiting = step.value["status"] as { status: string; currentStage: string; version: number };
      expect(awaiting).toMatchObject({ status: "awaiting_checkpoint", currentStage: "decide" });

      const stale = await first.call("workflow_checkpoint", { runId, version, action: "accept" });
      expect(stale.isError).toBe(true);
      expect(stale.value["error"]).toMatchObject({ code: "conflict", whatToDo: expect.stringContaining("latest version") });

      const done = await first.call("workflow_checkpoint", { runId, version: awaiting.version, action: "accept", disposition: "merge" });
      expect(done.isError).toBe(false);
      expect(done.value).toMatchObject({ status: "completed", terminal: true });
    } finally {
      await first.close();
    }
  });

  it("refuses an oversized request with too_large and a malformed one with invalid_input, as tool errors", { timeout: 120_000 }, async () => {
    const server = await connect();
    try {
      const huge = await server.call("workflow_start", { taskId: "huge", objective: "x", workflow: "review_change", evidence: { context: "x".repeat(210_000) } });
      expect(huge.isError).toBe(true);
      expect(huge.value["error"]).toMatchObject({ code: "too_large", whatToDo: expect.stringContaining("200000") });

      const malformed = await server.call("workflow_step", { runId: "r1", version: "one" });
      expect(malformed.isError).toBe(true);
      const error = malformed.value["error"] as { code: string; details: { issues: { path: string }[] } };
      expect(error.code).toBe("invalid_input");
      expect(error.details.issues.map((issue) => issue.path)).toContain("version");

      const unknownField = await server.call("workflow_status", { runId: "r1", colour: "red" });
      expect(unknownField.value["error"]).toMatchObject({ code: "invalid_input" });

      const missing = await server.call("workflow_status", { runId: "no-such-run" });
      expect(missing.value["error"]).toMatchObject({ code: "not_found" });
    } finally {
      await server.close();
    }
  });

  it("answers role_session_status, skills_resolve (never a body) and handoff_write", { timeout: 120_000 }, async () => {
    const writer = createFsStore({ dir: store });
    const sessions = createRoleSessions({ store: writer, policy: "mission" });
    const turn = await sessions.runTurn({ missionId: "m1", role: "engineer", backend: { id: "codex", resumable: true }, model: "gpt-5", branch: "main", objectiveRevision: 1 }, () =>
      okAsync({ text: "done", threadId: "thread-1", usage: null, promptBytes: 10 }),
    );
    expect(turn.isOk()).toBe(true);
    await sessions.close();
    await writer.close();
    const skills = path.join(scratch, "skills");
    mkdirSync(path.join(skills, "engineer", "tdd"), { recursive: true });
    writeFileSync(path.join(skills, "engineer", "tdd", "SKILL.md"), "---\nname: tdd\ndescription: Write the failing test first.\n---\nTHE BODY IS NEVER SENT\n");

    const server = await connect(["--skills-project", skills]);
    try {
      const first = await server.call("handoff_write", { missionId: "m1", role: "engineer", handoff: { done: ["fixed the pager"], inFlight: [{ task: "empty list", state: "writing the test" }], nextSteps: ["review"], warnings: [] } });
      expect(first.value).toMatchObject({ missionId: "m1", role: "engineer", revision: 1 });
      const second = await server.call("handoff_write", { missionId: "m1", role: "engineer", handoff: { done: ["fixed the pager", "handled the empty list"], inFlight: [], nextSteps: ["review"], warnings: [] } });
      expect(second.value).toMatchObject({ revision: 2 });

      const status = await server.call("role_session_status", { missionId: "m1" });
      expect(status.isError).toBe(false);
      const roles = status.value["roles"] as { role: string; thread: { backend: string; model: string; branch: string; threadId: string }; counters: { totalTurns: number }; handoff: { revision: number } }[];
      expect(roles).toHaveLength(1);
      expect(roles[0]).toMatchObject({ role: "engineer", thread: { backend: "codex", model: "gpt-5", branch: "main", threadId: "thread-1" }, counters: { totalTurns: 1 }, handoff: { revision: 2 } });

      const resolved = await server.call("skills_resolve", { role: "engineer" });
      expect(resolved.isError).toBe(false);
      expect((resolved.value["roots"] as { ownership: string }[])[0]).toMatchObject({ ownership: "own" });
      expect((resolved.value["own"] as { entries: { name: string; description: string }[] }).entries).toEqual([expect.objectContaining({ name: "tdd", description: "Write the failing test first." })]);
      expect(JSON.stringify(resolved.value)).not.toContain("THE BODY IS NEVER SENT");

      const badHandoff = await server.call("handoff_write", { missionId: "m1", role: "../x", handoff: { done: [], inFlight: [], nextSteps: [], warnings: [] } });
      expect(badHandoff.value["error"]).toMatchObject({ code: "invalid_input" });
    } finally {
      await server.close();
    }
  });

  it("serves over a store given by URL, as the other commands take it (sqlite:<file>)", { timeout: 120_000 }, async () => {
    const file = path.join(scratch, "mcp.db");
    const server = await connect([], `sqlite:${file}`);
    let runId: string;
    try {
      const started = await server.call("workflow_start", { taskId: "review-sqlite", objective: "review the pager fix", workflow: "review_change", risk: "low", evidence: { context: "the pager" } });
      expect(started.isError).toBe(false);
      runId = started.value["runId"] as string;
      const status = await server.call("workflow_status", { runId });
      expect(status.value).toMatchObject({ runId, version: 1, status: "ready" });
    } finally {
      await server.close();
    }
    // The run is in the SQLite file, not in a directory of that name.
    const sqlite = createSqliteStore({ file });
    try {
      expect((await sqlite.docs.get(["workflow-runs", runId]))._unsafeUnwrap()?.value).toMatchObject({ runId });
    } finally {
      await sqlite.close();
    }
  });
});
