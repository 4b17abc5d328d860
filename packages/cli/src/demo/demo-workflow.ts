import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Backend } from "@keel/backend";
import { KeelError, totalInputTokens } from "@keel/core";
import { createScriptedBackend } from "@keel/backends/scripted";
import { createBudget } from "@keel/budget";
import { createFsStore } from "@keel/store-fs";
import { createCatalog, createWorkflowEngine, type ExecuteStage, type RunStatus } from "@keel/workflow";
import type { FakeProviderRequest, FakeReply } from "@keel/testkit/provider";
import { err, ok, type Result } from "neverthrow";
import type { DemoBackendOpener } from "./demo-run.js";

/** The workflows the demo can run. */
export const DEMO_WORKFLOWS = ["review_change", "implement_issue"] as const;

/** A demo workflow id. */
export type DemoWorkflow = (typeof DEMO_WORKFLOWS)[number];

/** Options of {@link runWorkflowDemo}. */
export interface WorkflowDemoOptions {
  /** The demo directory (absolute); its `workflow-store` is replaced. */
  dir: string;
  workflow: DemoWorkflow;
  /** One line per stage, checkpoint and status. */
  progress: (line: string) => void;
  /**
   * What runs each stage's call: `scripted` (default), a backend, or an opener of one (a real
   * CLI against the fake provider, answering with {@link workflowProviderReply}). A real CLI runs
   * every call on the model it is configured with, in `<dir>/workspace`; the routed model id
   * (the demo registry's) is what the run records.
   */
  backend?: Backend | "scripted" | DemoBackendOpener;
}

/** What the demo ended with. */
export interface WorkflowDemoOutcome {
  status: RunStatus;
  store: string;
}

const DIFF_FIRST = "--- a/src/pager.ts\n+++ b/src/pager.ts\n@@ -10,3 +10,3 @@\n-  const last = items.length;\n+  const last = items.length - 1;\n";
const DIFF_SECOND = `${DIFF_FIRST}@@ -20,2 +20,3 @@\n+  if (items.length === 0) return [];\n`;

/**
 * Runs a built-in workflow end to end on the fs store (the scripted backend by default, or a
 * real CLI), acting as the supervisor: the first decision at the final checkpoint is `revise` (with a corrected diff),
 * the second `accept`. Prints each stage with its status, attempts and model, and the budget.
 */
export async function runWorkflowDemo(options: WorkflowDemoOptions): Promise<Result<WorkflowDemoOutcome, KeelError>> {
  const storeDir = join(options.dir, "workflow-store");
  const workspace = join(options.dir, "workspace");
  await rm(storeDir, { recursive: true, force: true });
  await mkdir(workspace, { recursive: true });
  const chosen = options.backend ?? "scripted";
  const store = createFsStore({ dir: storeDir });
  let opened: Awaited<ReturnType<DemoBackendOpener>> | undefined;
  try {
    opened = typeof chosen === "function" ? await chosen({ dir: options.dir, workspace, store }) : undefined;
    const scripted = chosen === "scripted";
    const backend: Backend = opened?.backend ?? (chosen === "scripted" ? createScriptedBackend({ resumable: false, script: (turn) => stageAnswer(turn.prompt) }) : (chosen as Backend));
    const executeStage: ExecuteStage = (call) =>
      backend.runTurn({ prompt: call.prompt, cwd: workspace, ...(scripted ? { model: call.model.id } : {}), timeoutMs: call.timeoutMs }).map((result) => ({
        text: result.text,
        tokens: (totalInputTokens(result.usage) ?? 0) + (result.usage.output ?? 0),
        durationMs: result.durationMs,
      }));
    const engine = createWorkflowEngine({
      store,
      catalog: createCatalog()._unsafeUnwrap(),
      budget: createBudget({ store }),
      executeStage,
      models: [
        { id: "local-coder", strength: 50, contextWindow: 64_000, location: "installed", latencyMs: 400, tier: "medium" },
        { id: "remote-reviewer", strength: 80, contextWindow: 200_000, location: "remote", latencyMs: 3000, tier: "large", reviewed: true },
      ],
      limits: { calls: 40, timeMs: 3_600_000 },
    });
    const issue = options.workflow === "implement_issue";
    const started = await engine.start({
      taskId: `demo-${options.workflow}`,
      objective: issue ? "fix the off-by-one in the pager's last page" : "review the pager change",
      workflow: options.workflow,
      risk: issue ? "medium" : "high",
      complexity: "medium",
      evidence: issue ? { context: "the pager shows an empty last page" } : { diff: DIFF_FIRST, testOutput: "pager.test.ts: 12 passed", validationStatus: "passed" },
    });
    if (started.isErr()) return err(started.error);
    let status = started.value;
    let revised = false;
    options.progress(`run ${status.runId}: ${status.workflow.id} v${status.workflow.version}, version ${status.version}`);
    for (let turn = 0; turn < 20 && !status.terminal; turn++) {
      if (status.status !== "awaiting_checkpoint") {
        const step = await engine.step(status.runId, { version: status.version });
        if (step.isErr()) return err(step.error);
        for (const call of step.value.ran) options.progress(`  stage ${call.stage.padEnd(16)} ${call.skill.padEnd(16)} ${call.ok ? "completed" : "failed"}  attempt ${call.attempt} on ${call.model} (${call.source})`);
        status = step.value.status;
        for (const stage of status.stages) if (stage.status === "skipped" && step.value.ran.length > 0 && stage.skipReason) options.progress(`  stage ${stage.id.padEnd(16)} ${"".padEnd(16)} skipped (${stage.skipReason})`);
        options.progress(describe(status));
        continue;
      }
      const awaiting = status.awaiting!;
      let decision: Parameters<typeof engine.checkpoint>[1];
      if (!awaiting.final) {
        decision = { version: status.version, action: "accept", note: "implemented the plan", evidence: { diff: DIFF_FIRST, testOutput: "pager.test.ts: 11 passed, 1 failed (empty list)", validationStatus: "failed" } };
      } else if (!revised) {
        revised = true;
        decision = { version: status.version, action: "revise", note: "handle the empty list too", evidence: { diff: DIFF_SECOND, testOutput: "pager.test.ts: 12 passed", validationStatus: "passed" } };
      } else {
        decision = { version: status.version, action: "accept", note: "good to merge", disposition: "merge" };
      }
      options.progress(`  supervisor at checkpoint "${awaiting.stage}": ${decision.action}`);
      const decided = await engine.checkpoint(status.runId, decision);
      if (decided.isErr()) return err(decided.error);
      status = decided.value;
      options.progress(describe(status));
    }
    return ok({ status, store: storeDir });
  } finally {
    await opened?.close();
    await store.close();
  }
}

/**
 * The demo reviewer's answer to a stage prompt (the engine's canonical JSON): the first diff
 * leaves the empty list unhandled, the revised one (`=== 0`) handles it.
 */
export function stageAnswer(prompt: string): string {
  let stage = "?";
  let skill = "?";
  try {
    const parsed = JSON.parse(prompt) as { stage?: string; skill?: { id?: string } };
    stage = parsed.stage ?? stage;
    skill = parsed.skill?.id ?? skill;
  } catch {
    // Not the prompt alone (a CLI may wrap it): read the two fields from the text.
    skill = /"skill":\{"id":"([^"]+)"/.exec(prompt)?.[1] ?? skill;
    stage = /\},"stage":"([^"]+)"/.exec(prompt)?.[1] ?? stage;
  }
  return `${skill} of stage ${stage}: ${prompt.includes("=== 0") ? "the empty list is handled; approve" : "the last index is fixed; the empty list is not handled"}`;
}

/** Usage billed per model call by the fake provider: a fixed figure. */
const PROVIDER_USAGE = { inputUncached: 400, output: 40 };

/**
 * The fake provider's answer to a real CLI's model call in the workflow demo: the stage prompt
 * is the conversation's line naming `workflow-stage/1`, answered as the scripted demo answers it.
 */
export function workflowProviderReply(request: FakeProviderRequest): FakeReply {
  const prompt = request.text.split("\n").find((line) => line.includes('"keel":"workflow-stage/1"'));
  if (!prompt) return { text: "no workflow stage in this call", usage: PROVIDER_USAGE };
  const start = prompt.indexOf("{");
  const end = prompt.lastIndexOf("}");
  return { text: stageAnswer(start >= 0 && end > start ? prompt.slice(start, end + 1) : prompt), usage: PROVIDER_USAGE };
}

function describe(status: RunStatus): string {
  const budget = status.budget;
  const spent = budget ? `calls ${budget.settled.calls}/${budget.limits.calls?.value ?? "∞"}, tokens ${budget.settled.tokens}, time ${budget.settled.timeMs} ms` : "no budget";
  return `  → ${status.status}${status.currentStage ? ` at ${status.currentStage}` : ""} · version ${status.version} · attempts ${status.attempts} · corrections ${status.corrections.used}/${status.corrections.limit} · ${spent}`;
}
