import { expect, it } from "vitest";
import { runReadmeExample } from "./support/run-ts.js";

// Every step of docs/getting-started.md is run as it is written, so the guide can never rot.
const guide = "docs/getting-started.md";

async function runStep(marker: string): Promise<string[]> {
  const output = await runReadmeExample(marker, guide);
  expect(output, `${guide} has the ${marker} example`).toBeDefined();
  expect(output?.stderr).toBe("");
  expect(output?.code).toBe(0);
  return (output?.stdout ?? "").trim().split("\n");
}

it("runs a first turn, then resumes it", async () => {
  expect(await runStep("first-turn")).toEqual(["fresh Decision: answered turn 1", "resumed Decision: answered turn 2"]);
});

it("lists every adapter with whether it is installed and resumes", async () => {
  const lines = await runStep("detect");
  for (const id of ["claude-code", "codex", "pi", "opencode", "copilot", "cursor", "gemini", "grok", "qoder", "deepseek"]) {
    expect(lines.some((line) => line.startsWith(`${id}: `)), id).toBe(true);
  }
  for (const line of lines) expect(line).toMatch(/^[\w-]+: (available .*|not installed), (resumes threads|fresh only)$/);
});

it("seeds a rotated session from the capsule", async () => {
  expect(await runStep("capsules")).toEqual([
    "fresh Decision: parse flags with node:util parseArgs",
    "rotated Decision: tests written (seeded: yes)",
    "decisive output: tests written (seeded: yes)",
    "inspected: src/cli.ts",
  ]);
});

it("offers the role's skills in the prompt", async () => {
  expect(await runStep("skills")).toEqual(["prompt Decision: the json-output skill was offered"]);
});

it("refuses the turn over the mission's call limit before it runs", async () => {
  expect(await runStep("budgets")).toEqual(["Decision: step 1 done", "Decision: step 2 done", "refused before running: budget_exceeded", "backend calls: 2"]);
});
