import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "@keel/runtime";
import { describeWithPostgres, dropSchema, freshSchemaName, testPostgresUrl } from "../packages/store-postgres/test-support/postgres-test-database.js";
import { hasStackTrace, spawnKeel, temporaryDirectory } from "./support/cli-harness.js";

/** Runs the real `keel` binary with `stdin` piped in (each call is its own process). */
function keel(args: readonly string[], stdin = "") {
  return spawnKeel(args, {}, { stdin });
}

const scratch = temporaryDirectory("workflow");
const config = path.join(scratch.dir, "config.json");
const store = path.join(scratch.dir, "store");
const DIFF = "--- a/src/pager.ts\n+++ b/src/pager.ts\n@@ -10,3 +10,3 @@\n-  const last = items.length;\n+  const last = items.length - 1;\n";
const TASK = { taskId: "review-42", objective: "review the pager fix", workflow: "review_change", risk: "low", evidence: { diff: DIFF, validationStatus: "passed" } };

async function request(name: string, body: unknown): Promise<string> {
  const file = path.join(scratch.dir, `${name}.json`);
  await writeFile(file, JSON.stringify(body));
  return file;
}

const engineArgs = ["--config", config, "--store", store];

beforeAll(async () => {
  await writeFile(
    config,
    JSON.stringify({
      models: [{ id: "local-coder", strength: 50, contextWindow: 64_000, location: "installed", tier: "medium" }],
      executor: { kind: "scripted", replies: { explore: "the change touches src/pager.ts only", diff_review: "the last index is fixed; no defects found" } },
      limits: { calls: 20 },
    }),
  );
});

afterAll(() => scratch.remove());

/**
 * Carries review_change from plan to the final checkpoint, one process per command, over the
 * store of `storeUrl`, refusing a stale version on the way; answers the run's id.
 */
async function carryReviewThrough(storeUrl: string): Promise<string> {
  const args = ["--config", config, "--store", storeUrl];
  const plan = await keel(["workflow", "plan", "--request", "-", ...args], JSON.stringify(TASK));
  expect(plan.code, plan.stderr).toBe(0);
  const planned = JSON.parse(plan.stdout) as { workflow: string; stages: { id: string; status: string }[] };
  expect(planned.workflow).toBe("review_change");
  expect(planned.stages.map((stage) => `${stage.id}:${stage.status}`)).toEqual(["explore:pending", "review:pending", "security_review:skipped", "resource_review:skipped", "decide:pending"]);

  const start = await keel(["workflow", "start", "--request", await request("start", TASK), ...args]);
  expect(start.code, start.stderr).toBe(0);
  const started = JSON.parse(start.stdout) as { runId: string; version: number; status: string };
  expect(started).toMatchObject({ version: 1, status: "ready" });

  const step = await keel(["workflow", "step", "--request", await request("step", { runId: started.runId, version: started.version }), ...args]);
  expect(step.code, step.stderr).toBe(0);
  const stepped = JSON.parse(step.stdout) as { status: { status: string; currentStage: string; version: number }; ran: { stage: string; skill: string; model: string; packetDigest: string; packet: { text: string } }[] };
  expect(stepped.ran.map((call) => `${call.stage}/${call.skill}@${call.model}`)).toEqual(["explore/explore@local-coder", "review/diff_review@local-coder"]);
  expect(stepped.ran[1]!.packet.text).toBe("the last index is fixed; no defects found");
  expect(stepped.status).toMatchObject({ status: "awaiting_checkpoint", currentStage: "decide" });

  // The first start's version is stale now: refused with conflict, exit 1, nothing changed.
  const stale = await keel(["workflow", "checkpoint", "--request", await request("stale", { runId: started.runId, version: started.version, action: "accept" }), ...args]);
  expect(stale.code).toBe(1);
  const refused = JSON.parse(stale.stdout) as { error: { code: string; whatToDo: string } };
  expect(refused.error.code).toBe("conflict");
  expect(refused.error.whatToDo).toContain("latest version");
  expect(hasStackTrace(stale.stderr)).toBe(false);

  const decide = await keel(["workflow", "checkpoint", "--request", await request("accept", { runId: started.runId, version: stepped.status.version, action: "accept", disposition: "merge" }), ...args]);
  expect(decide.code, decide.stderr).toBe(0);
  expect(JSON.parse(decide.stdout)).toMatchObject({ status: "completed", terminal: true });

  const status = await keel(["workflow", "status", "--request", "-", ...args], JSON.stringify({ runId: started.runId }));
  expect(status.code, status.stderr).toBe(0);
  const final = JSON.parse(status.stdout) as { status: string; version: number; budget: { settled: { calls: number } } };
  expect(final.status).toBe("completed");
  expect(final.budget.settled.calls).toBe(2);
  return started.runId;
}

/** The completed run as the store itself holds it (opened by URL, outside any keel process). */
async function storedRun(storeUrl: string, runId: string): Promise<unknown> {
  const opened = await openStore(storeUrl, { cwd: scratch.dir });
  if (opened.isErr()) throw opened.error;
  const store = opened.value;
  try {
    const found = await store.docs.get(["workflow-runs", runId]);
    if (found.isErr()) throw found.error;
    return found.value?.value;
  } finally {
    await store.close();
  }
}

describe("keel workflow: one command per process", () => {
  it("carries review_change from plan to the final checkpoint, refusing a stale version", { timeout: 120_000 }, async () => {
    const runId = await carryReviewThrough(store);
    expect(await storedRun(store, runId)).toMatchObject({ runId });
  });

  it("takes a store URL as the other commands do: sqlite:<file>, and a bad URL is bad usage", { timeout: 120_000 }, async () => {
    const url = `sqlite:${path.join(scratch.dir, "workflow.db")}`;
    const runId = await carryReviewThrough(url);
    expect(await storedRun(url, runId)).toMatchObject({ runId });
    const unknownScheme = await keel(["workflow", "status", "--request", "-", "--config", config, "--store", "mysql://db/keel"], JSON.stringify({ runId }));
    expect(unknownScheme.code).toBe(2);
    expect(unknownScheme.stderr).toContain("--store");
    expect(unknownScheme.stdout).toBe("");
  });

  it("refuses an oversized request with too_large and a malformed one with invalid_input (exit 1)", { timeout: 60_000 }, async () => {
    const huge = await keel(["workflow", "start", "--request", "-", ...engineArgs], JSON.stringify({ ...TASK, evidence: { context: "x".repeat(250_000) } }));
    expect(huge.code).toBe(1);
    expect((JSON.parse(huge.stdout) as { error: { code: string } }).error.code).toBe("too_large");

    const malformed = await keel(["workflow", "step", "--request", "-", ...engineArgs], JSON.stringify({ runId: "r1", version: "one" }));
    expect(malformed.code).toBe(1);
    const refused = JSON.parse(malformed.stdout) as { error: { code: string; details: { issues: { path: string }[] } } };
    expect(refused.error.code).toBe("invalid_input");
    expect(refused.error.details.issues.map((issue) => issue.path)).toContain("version");

    const notJson = await keel(["workflow", "status", "--request", "-", ...engineArgs], "{ runId:");
    expect(notJson.code).toBe(1);
    expect((JSON.parse(notJson.stdout) as { error: { code: string } }).error.code).toBe("invalid_input");
  });

  it("answers bad usage with exit 2, and each subcommand's help lists options and exit codes", { timeout: 60_000 }, async () => {
    const noRequest = await keel(["workflow", "step", ...engineArgs]);
    expect(noRequest.code).toBe(2);
    expect(noRequest.stderr).toContain("--request");
    const unknown = await keel(["workflow", "rewind", "--request", "-"]);
    expect(unknown.code).toBe(2);
    const noConfig = await keel(["workflow", "status", "--request", "-"], "{}");
    expect(noConfig.code).toBe(2);
    for (const operation of ["catalog", "step"]) {
      const help = await keel(["workflow", operation, "--help"]);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`keel workflow ${operation}`);
      for (const option of ["--request", "--store", "--config", "--catalog", "Exit codes: 0 ok"]) expect(help.stdout).toContain(option);
    }
  });

  it("catalog reports every validation issue of a project directory with its file and path", { timeout: 60_000 }, async () => {
    const catalog = path.join(scratch.dir, "catalog");
    await mkdir(path.join(catalog, "skills"), { recursive: true });
    await mkdir(path.join(catalog, "roles"), { recursive: true });
    await writeFile(path.join(catalog, "skills", "look.json"), JSON.stringify({ schemaVersion: 1, id: "look_skill", version: "1.0.0", description: "look", instructions: "look", colour: "red" }));
    await writeFile(path.join(catalog, "roles", "looker.yaml"), "schemaVersion: 1\nid: looker\nversion: 1.0.0\ndescription: looks\nskills: [missing_skill]\n");
    const inspected = await keel(["workflow", "catalog", "--catalog", catalog]);
    expect(inspected.code).toBe(1);
    const report = JSON.parse(inspected.stdout) as { valid: boolean; issues: { file: string; path: string; rule: string }[] };
    expect(report.valid).toBe(false);
    expect(report.issues).toContainEqual(expect.objectContaining({ file: path.join(catalog, "skills", "look.json"), rule: "schema" }));
    expect(report.issues.some((issue) => issue.file === path.join(catalog, "roles", "looker.yaml") && issue.path.startsWith("skills"))).toBe(true);

    const builtins = await keel(["workflow", "catalog"]);
    expect(builtins.code).toBe(0);
    expect((JSON.parse(builtins.stdout) as { definitions: { workflows: string[] } }).definitions.workflows).toEqual(["implement_issue", "review_change"]);
  });

  it("keel mcp --help lists its options, tools and exit codes; no --config is bad usage", { timeout: 60_000 }, async () => {
    const help = await keel(["mcp", "--help"]);
    expect(help.code).toBe(0);
    for (const text of ["--config", "--store", "--catalog", "--skills-project", "workflow_step", "role_session_status", "Exit codes: 0", "mcpServers"]) expect(help.stdout).toContain(text);
    const bad = await keel(["mcp"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--config");
  });
});

describe("keel workflow step's heartbeat", () => {
  it("prints a line to stderr every --heartbeat seconds while its stages run, and none with --heartbeat 0", { timeout: 120_000 }, async () => {
    // A CLI executor whose command takes 1.5 s and then fails: the step runs long enough to beat.
    const slow = path.join(scratch.dir, "slow-cli.sh");
    await writeFile(slow, "#!/bin/sh\nsleep 1.5\nexit 3\n", { mode: 0o755 });
    const slowConfig = path.join(scratch.dir, "slow-config.json");
    await writeFile(
      slowConfig,
      JSON.stringify({
        models: [{ id: "local-coder", strength: 50, contextWindow: 64_000, location: "installed", tier: "medium" }],
        executor: { kind: "cli", backend: "codex", command: slow, cwd: scratch.dir },
        limits: { calls: 20 },
      }),
    );
    const beats = async (heartbeat: string, taskId: string): Promise<string[]> => {
      const args = ["--config", slowConfig, "--store", path.join(scratch.dir, `slow-store-${taskId}`)];
      const start = await keel(["workflow", "start", "--request", await request(`slow-${taskId}`, { ...TASK, taskId }), ...args]);
      expect(start.code, start.stderr).toBe(0);
      const started = JSON.parse(start.stdout) as { runId: string; version: number };
      const step = await keel(["workflow", "step", "--heartbeat", heartbeat, "--request", await request(`step-${taskId}`, { runId: started.runId, version: started.version }), ...args]);
      expect(hasStackTrace(step.stderr)).toBe(false);
      expect(step.stdout.length).toBeGreaterThan(0);
      return step.stderr.split("\n").filter((line) => line.startsWith("keel workflow step: stages running for "));
    };
    expect((await beats("0.2", "slow-a")).length).toBeGreaterThanOrEqual(2);
    expect(await beats("0", "slow-b")).toEqual([]);
    const bad = await keel(["workflow", "step", "--heartbeat", "soon", "--request", "-", ...engineArgs], "{}");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--heartbeat must be a number of seconds from 0.05 to 3600, or 0 for none, got "soon"');
  });
});

describeWithPostgres("keel workflow over PostgreSQL", () => {
  it("carries review_change through separate processes in a postgres:// store", { timeout: 120_000 }, async () => {
    const schema = freshSchemaName();
    const url = `${testPostgresUrl}?schema=${schema}`;
    try {
      const runId = await carryReviewThrough(url);
      expect(await storedRun(url, runId)).toMatchObject({ runId });
    } finally {
      await dropSchema(schema);
    }
  });
});
