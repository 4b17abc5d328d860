import { describe, expect, it } from "vitest";
import { issueTask, makeEngine, reviewTask } from "../test/support.js";

describe("workflow engine: review_change end to end", () => {
  it("runs the local stages to the decide checkpoint and completes on accept", async () => {
    const { engine, calls } = makeEngine();
    const started = (await engine.start(reviewTask()))._unsafeUnwrap();
    expect(started.status).toBe("ready");
    expect(started.version).toBe(1);
    const step = (await engine.step(started.runId, { version: 1 }))._unsafeUnwrap();
    expect(step.status.status).toBe("awaiting_checkpoint");
    expect(step.status.awaiting).toMatchObject({ stage: "decide", final: true });
    expect(step.status.stages.map((stage) => [stage.id, stage.status])).toEqual([
      ["explore", "completed"],
      ["review", "completed"],
      ["security_review", "skipped"],
      ["resource_review", "skipped"],
      ["decide", "awaiting"],
    ]);
    expect(calls.map((call) => call.stage)).toEqual(["explore", "review"]);
    const done = (await engine.checkpoint(started.runId, { version: step.status.version, action: "accept" }))._unsafeUnwrap();
    expect(done.status).toBe("completed");
    expect(done.terminal).toBe(true);
  });
});
