import { rm } from "node:fs/promises";
import { join } from "node:path";
import { KeelError, totalInputTokens } from "@keel/core";
import { createScriptedBackend } from "@keel/backends/scripted";
import { createBudget } from "@keel/budget";
import { createFsStore } from "@keel/store-fs";
import { createCatalog, createWorkflowEngine, type ExecuteStage, type RunStatus } from "@keel/workflow";
import { err, ok, type Result } from "neverthrow";

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
}

/** What the demo ended with. */
export interface WorkflowDemoOutcome {
  status: RunStatus;
  store: string;
}

const DIFF_FIRST = "--- a/src/pager.ts\n+++ b/src/pager.ts\n@@ -10,3 +10,3 @@\n-  const last = items.length;\n+  const last = items.length - 1;\n";
const DIFF_SECOND = `${DIFF_FIRST}@@ -20,2 +20,3 @@\n+  if (items.length === 0) return [];\n`;

/**
 * Runs a built-in workflow end to end on the fs store with the scripted backend, acting as the
 * supervisor: the first decision at the final checkpoint is `revise` (with a corrected diff),
 * the second `accept`. Prints each stage with its status, attempts and model, and the budget.
 */
export async function runWorkflowDemo(options: WorkflowDemoOptions): Promise<Result<WorkflowDemoOutcome, KeelError>> {
  const storeDir = join(options.dir, "workflow-store");
  await rm(storeDir, { recursive: true, force: true });
  const store = createFsStore({ dir: storeDir });
  try {
    const backend = createScriptedBackend({
      resumable: false,
      script: (turn) => {
        const prompt = JSON.parse(turn.prompt) as { stage: string; skill: { id: string }; evidence: { diff: string } };
        return `${prompt.skill.id} of stage ${prompt.stage}: ${prompt.evidence.diff.includes("=== 0") ? "the empty list is handled; approve" : "the last index is fixed; the empty list is not handled"}`;
      },
    });
    const executeStage: ExecuteStage = (call) =>
      backend.runTurn({ prompt: call.prompt, cwd: options.dir, model: call.model.id, timeoutMs: call.timeoutMs }).map((result) => ({
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
    await store.close();
  }
}

function describe(status: RunStatus): string {
  const budget = status.budget;
  const spent = budget ? `calls ${budget.settled.calls}/${budget.limits.calls?.value ?? "∞"}, tokens ${budget.settled.tokens}, time ${budget.settled.timeMs} ms` : "no budget";
  return `  → ${status.status}${status.currentStage ? ` at ${status.currentStage}` : ""} · version ${status.version} · attempts ${status.attempts} · corrections ${status.corrections.used}/${status.corrections.limit} · ${spent}`;
}
