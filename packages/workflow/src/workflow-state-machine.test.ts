import { KeelError } from "@keel/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runInvariants } from "./run-state.js";
import { TERMINAL_STATES, type RunDoc } from "./schemas.js";
import { issueTask, makeEngine, reviewTask, scriptedExecutor } from "../../../test/support/workflow-harness.js";
import { readRun } from "./internal/engine-context.js";

type Command =
  | { kind: "step"; stale: boolean; evidence: boolean }
  | { kind: "checkpoint"; action: "accept" | "reject" | "revise" | "abort"; stale: boolean; evidence: boolean; acknowledge: boolean }
  | { kind: "abort"; stale: boolean }
  | { kind: "status" };

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("step" as const), stale: fc.boolean(), evidence: fc.boolean() }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("checkpoint" as const),
      action: fc.constantFrom("accept" as const, "reject" as const, "revise" as const, "abort" as const),
      stale: fc.boolean(),
      evidence: fc.boolean(),
      acknowledge: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("abort" as const), stale: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("status" as const) }) },
);

describe("workflow state machine", () => {
  it("random valid and invalid command sequences never reach an illegal state", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("review_change", "implement_issue"),
        fc.constantFrom("low" as const, "high" as const),
        fc.integer({ min: 0, max: 5 }),
        fc.array(command, { minLength: 1, maxLength: 14 }),
        async (workflow, risk, failEvery, commands) => {
          let count = 0;
          const executor = scriptedExecutor({ fail: () => (failEvery > 0 && ++count % failEvery === 0 ? new KeelError("backend_failed", "scripted failure") : undefined) });
          const { engine, store } = makeEngine({ executeStage: executor.executeStage });
          const task = workflow === "review_change" ? reviewTask("sm", { risk }) : issueTask("sm", { risk });
          const started = (await engine.start(task))._unsafeUnwrap();
          const runId = started.runId;
          const read = async (): Promise<RunDoc> => (await readRun({ store }, runId))._unsafeUnwrap().value;
          let before = await read();
          for (const next of commands) {
            const version = next.kind === "status" ? 0 : next.stale ? before.version - 1 : before.version;
            const evidence = { diff: "+changed", testOutput: "ok", validationStatus: "passed" as const };
            let outcome;
            switch (next.kind) {
              case "step":
                outcome = await engine.step(runId, { version, ...(next.evidence ? { evidence } : {}) });
                break;
              case "checkpoint":
                outcome = await engine.checkpoint(runId, { version, action: next.action, ...(next.evidence ? { evidence } : {}), acknowledgeUnverifiedChecks: next.acknowledge });
                break;
              case "abort":
                outcome = await engine.abort(runId, { version });
                break;
              case "status":
                outcome = await engine.status(runId);
            }
            const after = await read();
            expect(runInvariants(after)).toEqual([]);
            if (outcome.isErr()) {
              // A refused command changes nothing: no partial write.
              expect(after).toEqual(before);
              expect(["conflict", "invalid_input", "limit_exceeded"]).toContain(outcome.error.code);
              if (next.kind !== "status" && next.stale) expect(outcome.error.code).toBe(version >= 1 ? "conflict" : "invalid_input");
            } else if (next.kind === "status") {
              expect(after).toEqual(before);
            } else {
              expect(next.stale).toBe(false);
              expect(after.version).toBe(before.version + 1);
              expect(TERMINAL_STATES).not.toContain(before.status);
              if (next.kind === "step") expect(before.status === "ready" || before.status === "paused").toBe(true);
              if (next.kind === "checkpoint") expect(before.status).toBe("awaiting_checkpoint");
            }
            if (TERMINAL_STATES.includes(before.status)) expect(after.status).toBe(before.status);
            expect(after.corrections).toBeGreaterThanOrEqual(before.corrections);
            expect(after.callIndex).toBeGreaterThanOrEqual(before.callIndex);
            before = after;
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
