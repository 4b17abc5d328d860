import type { KeelEventMap } from "@keel/core";
import { context, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from "@opentelemetry/api";
import { epoch, GEN_AI, KEEL, OPERATION } from "./semconv.js";

type WorkflowEventType = Extract<keyof KeelEventMap, `workflow.${string}`>;
type AnyWorkflowEvent = KeelEventMap[WorkflowEventType];

interface RunSpans {
  runId: string;
  span: Span;
  stages: Map<string, Span>;
}

/**
 * Turns `workflow.*` events into a run span (`invoke_workflow`) with one child span per stage.
 * A run whose first event here is not `workflow.run.started` (resumed by this process) gets its
 * run span at that event. A stage completed without a start (skipped) is a zero-length span
 * marked `keel.workflow.stage.skipped`. Checkpoint decisions are events on the run span, with the
 * decision (`status`) only.
 */
export function createWorkflowSpans(tracer: Tracer): { handle(event: AnyWorkflowEvent): void; endAll(at: number): void } {
  const runs = new Map<string, RunSpans>();

  const runOf = (event: AnyWorkflowEvent): RunSpans => {
    const open = runs.get(event.runId);
    if (open) return open;
    const span = tracer.startSpan(
      OPERATION.invokeWorkflow,
      {
        kind: SpanKind.INTERNAL,
        startTime: epoch(event.at),
        attributes: { [GEN_AI.operationName]: OPERATION.invokeWorkflow, [KEEL.workflowRunId]: event.runId, [KEEL.workflowVersion]: event.version },
      },
      context.active(),
    );
    const created: RunSpans = { runId: event.runId, span, stages: new Map() };
    runs.set(event.runId, created);
    return created;
  };

  const startStage = (run: RunSpans, stage: string, at: number): Span => {
    const span = tracer.startSpan(
      `stage ${stage}`,
      { kind: SpanKind.INTERNAL, startTime: epoch(at), attributes: { [KEEL.workflowRunId]: run.runId, [KEEL.workflowStage]: stage } },
      trace.setSpan(context.active(), run.span),
    );
    run.stages.set(stage, span);
    return span;
  };

  const endRun = (runId: string, run: RunSpans, at: number): void => {
    for (const stage of run.stages.values()) stage.end(epoch(at));
    run.span.end(epoch(at));
    runs.delete(runId);
  };

  return {
    handle(event) {
      const run = runOf(event);
      run.span.setAttribute(KEEL.workflowVersion, event.version);
      switch (event.type) {
        case "workflow.run.started":
          return;
        case "workflow.stage.started":
          if (event.stage !== null && !run.stages.has(event.stage)) startStage(run, event.stage, event.at);
          return;
        case "workflow.stage.completed": {
          if (event.stage === null) return;
          const skipped = !run.stages.has(event.stage);
          const span = run.stages.get(event.stage) ?? startStage(run, event.stage, event.at);
          span.setAttribute(KEEL.workflowStatus, event.status);
          if (skipped || event.status === "skipped") span.setAttribute(KEEL.workflowSkipped, true);
          span.end(epoch(event.at));
          run.stages.delete(event.stage);
          return;
        }
        case "workflow.checkpoint.recorded":
          run.span.addEvent(event.type, { [KEEL.workflowStage]: event.stage ?? "", [KEEL.workflowStatus]: event.status }, epoch(event.at));
          return;
        default: {
          // workflow.run.completed / failed / paused (and any later run.* event): the run span ends.
          run.span.setAttribute(KEEL.workflowStatus, event.status);
          if (event.type === "workflow.run.failed") run.span.setStatus({ code: SpanStatusCode.ERROR, message: event.status });
          endRun(event.runId, run, event.at);
        }
      }
    },
    endAll(at) {
      for (const [runId, run] of [...runs]) endRun(runId, run, at);
    },
  };
}
