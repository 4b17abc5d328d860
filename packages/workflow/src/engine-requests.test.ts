import { describe, expect, it } from "vitest";
import { z } from "zod";
import { AbortRequestSchema, CheckpointRequestSchema, HandoffPacketSchema, PlanRequestSchema, StatusRequestSchema, StepRequestSchema, TaskSchema } from "./schemas.js";

describe("request schemas are the wire contract", () => {
  it("each converts to JSON Schema for an MCP tool or a CLI", () => {
    for (const schema of [TaskSchema, PlanRequestSchema, StepRequestSchema, CheckpointRequestSchema, StatusRequestSchema, AbortRequestSchema, HandoffPacketSchema]) {
      const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as unknown as { type: string; properties: Record<string, unknown>; additionalProperties: boolean };
      expect(json.type).toBe("object");
      expect(json.additionalProperties).toBe(false);
      expect(Object.keys(json.properties).length).toBeGreaterThan(0);
    }
    const checkpoint = z.toJSONSchema(CheckpointRequestSchema, { io: "input", unrepresentable: "any" }) as unknown as { properties: { action: { enum: string[] } }; required: string[] };
    expect(checkpoint.properties.action.enum).toEqual(["accept", "reject", "revise", "abort"]);
    expect(checkpoint.required).toEqual(expect.arrayContaining(["runId", "version", "action"]));
  });

  it("refuses unknown fields and bad values the same way everywhere", () => {
    expect(StepRequestSchema.safeParse({ runId: "r1", version: 1, extra: true }).success).toBe(false);
    expect(CheckpointRequestSchema.safeParse({ runId: "r1", version: 1, action: "approve" }).success).toBe(false);
    expect(TaskSchema.safeParse({ taskId: "../x", objective: "o", workflow: "review_change" }).success).toBe(false);
    expect(TaskSchema.parse({ taskId: "t", objective: "o", workflow: "review_change" })).toMatchObject({ risk: "medium", complexity: "medium", scope: [], evidence: {} });
  });
});
