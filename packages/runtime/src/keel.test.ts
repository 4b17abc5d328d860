import { mkdtemp, mkdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KeelError, createEventBus, type KeelEvent } from "@keel/core";
import { createKeel } from "@keel/runtime";
import { createMemoryStore } from "@keel/store";
import { createFaultyStore } from "@keel/testkit";
import { describe, expect, it } from "vitest";
import { createFakeBackend } from "../../../test/support/runtime-fake-backend.js";

const collect = () => {
  const events = createEventBus();
  const seen: KeelEvent[] = [];
  events.on("*", (event) => seen.push(event));
  return { events, seen };
};

describe("createKeel + runRoleTurn", () => {
  it("sends the objective and capsule on fresh turns and only the new part on resumed ones", async () => {
    const backend = createFakeBackend({ answer: (request) => `Decision: step for ${request.prompt.length}\nInspected: src/a.ts` });
    const { events, seen } = collect();
    const keel = createKeel({ store: createMemoryStore(), backends: [backend], policy: "rolling", events });
    const first = (await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Add the flag.", objective: "Ship --json" }))._unsafeUnwrap();
    expect(first.plan.action).toBe("fresh");
    expect(backend.requests[0]!.prompt).toContain("## Objective (revision 1)\nShip --json");
    expect(backend.requests[0]!.prompt).toContain("## Task\nAdd the flag.");
    const second = (await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Now test it.", objective: "Ship --json" }))._unsafeUnwrap();
    expect(second.plan.action).toBe("resumed");
    expect(backend.requests[1]!.prompt).toBe("Now test it.");
    expect(backend.requests[1]!.threadId).toBe(first.threadId);
    expect(second.promptBytes).toBeLessThan(first.promptBytes);
    const capsule = (await keel.sessions.readCapsule("m1", "engineer"))._unsafeUnwrap();
    expect(capsule?.inspectedPaths).toEqual(["src/a.ts"]);
    expect(capsule?.decisiveOutput).toMatch(/^step for /);
    const turns = seen.filter((event) => event.type === "role.session.turn");
    expect(turns.map((event) => event.type === "role.session.turn" && event.action)).toEqual(["fresh", "resumed"]);
    expect(seen.filter((event) => event.type === "agent.io.read")).toHaveLength(2);
    expect(seen.some((event) => event.type === "budget.reserved")).toBe(true);
    expect(seen.some((event) => event.type === "budget.settled")).toBe(true);
    await keel.close();
  });

  it("seeds a rotated or fresh turn from the capsule", async () => {
    const backend = createFakeBackend({ answer: () => "Decision: use the parser\nRepository-Map: src/ (cli, core)" });
    const keel = createKeel({ store: createMemoryStore(), backends: [backend], policy: "rolling" });
    await keel.runRoleTurn({ missionId: "m1", role: "planner", prompt: "Plan.", objective: "O" });
    const rotated = (await keel.runRoleTurn({ missionId: "m1", role: "planner", prompt: "Plan again.", objective: "O2", objectiveRevision: 2 }))._unsafeUnwrap();
    expect(rotated.plan.action).toBe("rotated");
    expect(rotated.plan.reason).toBe("objective_revised");
    const prompt = backend.requests[1]!.prompt;
    expect(prompt).toContain("## Where the work stands");
    expect(prompt).toContain("Repository map:\nsrc/ (cli, core)");
    expect(prompt).toContain("Your latest decisive output:\nuse the parser");
    await keel.close();
  });

  it("retries fresh from the capsule when the thread cannot be resumed", async () => {
    const backend = createFakeBackend();
    const keel = createKeel({ store: createMemoryStore(), backends: [backend], policy: "rolling" });
    await keel.runRoleTurn({ missionId: "m1", role: "reviewer", prompt: "Review.", objective: "O" });
    backend.forgetThreads();
    const turn = (await keel.runRoleTurn({ missionId: "m1", role: "reviewer", prompt: "Review again.", objective: "O" }))._unsafeUnwrap();
    expect(turn.plan.action).toBe("fresh");
    expect(turn.plan.reason).toBe("resume_failed");
    expect(backend.requests).toHaveLength(3);
    expect(backend.requests[2]!.threadId).toBeUndefined();
    expect(backend.requests[2]!.prompt).toContain("## Task\nReview again.");
    await keel.close();
  });

  it("refuses a turn over budget before the backend runs", async () => {
    const backend = createFakeBackend();
    const { events, seen } = collect();
    const keel = createKeel({ store: createMemoryStore(), backends: [backend], budget: { mission: { calls: 1 } }, events });
    expect((await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "One." })).isOk()).toBe(true);
    const refused = await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Two." });
    expect(refused.isErr() && refused.error.code).toBe("budget_exceeded");
    expect(backend.requests).toHaveLength(1);
    expect(seen.some((event) => event.type === "budget.refused")).toBe(true);
    await keel.close();
  });

  it("returns a backend failure as is and keeps the reservation (abandoned)", async () => {
    const backend = createFakeBackend({ fail: () => new KeelError("backend_failed", "exit 1") });
    const keel = createKeel({ store: createMemoryStore(), backends: [backend], budget: { mission: { calls: 5 } } });
    const failed = await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "One." });
    expect(failed.isErr() && failed.error.code).toBe("backend_failed");
    const snapshot = (await keel.budget.scope("mission.m1", { limits: { calls: 5 } }).snapshot())._unsafeUnwrap();
    expect(JSON.stringify(snapshot)).toContain("calls");
    await keel.close();
  });

  it("never lets a persistence fault change a successful result", async () => {
    const store = createFaultyStore(createMemoryStore(), [{ operation: "docs.put", keyPrefix: ["missions"], code: "io_failed" }]);
    const backend = createFakeBackend({ answer: () => "the answer" });
    const keel = createKeel({ store, backends: [backend], policy: "rolling" });
    const turn = (await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Go." }))._unsafeUnwrap();
    expect(turn.text).toBe("the answer");
    expect(turn.warnings.some((warning) => warning.target === "capsule" && warning.code === "io_failed")).toBe(true);
    await keel.close();
  });

  it("answers bad input with invalid_input", async () => {
    const keel = createKeel({ store: createMemoryStore(), backends: [createFakeBackend()] });
    const cases = [
      { missionId: "m1", role: "eng/../x", prompt: "x" },
      { missionId: "", role: "engineer", prompt: "x" },
      { missionId: "m1", role: "engineer", prompt: "" },
      { missionId: "m1", role: "engineer", prompt: "x", backend: "missing" },
      { missionId: "m1", role: "engineer", prompt: "x", unknown: true },
    ];
    for (const input of cases) {
      const result = await keel.runRoleTurn(input as never);
      expect(result.isErr() && result.error.code, JSON.stringify(input)).toBe("invalid_input");
    }
    const none = createKeel({ store: createMemoryStore() });
    const noBackend = await none.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "x" });
    expect(noBackend.isErr() && noBackend.error.code).toBe("invalid_input");
    expect(() => createKeel({ policy: "sometimes" as never })).toThrowError(KeelError);
    expect(() => createKeel({ store: createMemoryStore(), backends: [createFakeBackend()], defaultBackend: "other" })).toThrowError(KeelError);
    expect(() => createKeel({ cwd: "relative/dir" })).toThrowError(KeelError);
    await keel.close();
    await none.close();
  });

  it("defaults to the filesystem store in the given directory", async () => {
    const dir = await mkdtemp(join(tmpdir(), "keel-runtime-"));
    const keel = createKeel({ dir, backends: [createFakeBackend()], policy: "mission" });
    (await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Go." }))._unsafeUnwrap();
    await keel.close();
    const capsule = JSON.parse(await readFile(join(dir, "missions", "m1", "role-sessions", "engineer.json"), "utf8"));
    expect(JSON.stringify(capsule)).toContain("engineer");
  });

  it("delivers the role's skills: the contract on fresh turns, paths to a native backend", async () => {
    const root = await mkdtemp(join(tmpdir(), "keel-skills-"));
    const skill = join(root, "project", "engineer", "release-notes");
    await mkdir(skill, { recursive: true });
    await writeFile(join(skill, "SKILL.md"), "---\nname: release-notes\ndescription: Write release notes from merged changes.\n---\nBody.\n");
    const backend = createFakeBackend({ id: "pi", skills: "native" });
    const keel = createKeel({ store: createMemoryStore(), backends: [backend], skills: { layers: [{ name: "project", dir: join(root, "project") }] } });
    const turn = (await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Go." }))._unsafeUnwrap();
    expect(turn.skillDelivery).toBe("native");
    expect(backend.requests[0]!.prompt).toContain("release-notes");
    expect(backend.requests[0]!.skillPaths?.[0]).toMatch(/release-notes\/SKILL\.md$/);
    await keel.close();
  });
});

describe("runRound", () => {
  it("runs planner, engineer and reviewer in order and records the verdict", async () => {
    const backend = createFakeBackend({
      answer: (request) => (request.prompt.includes("Review") ? "Looks right.\nVerdict: APPROVE" : `Decision: ${request.prompt.slice(-12)}`),
    });
    const { events, seen } = collect();
    const keel = createKeel({ store: createMemoryStore(), backends: [backend], policy: "rolling", events });
    const round = (
      await keel.runRound({
        missionId: "m1",
        round: 1,
        objective: "Ship --json",
        planner: { prompt: "Plan the change." },
        engineer: { prompt: (context) => `Implement: ${context.planner?.text ?? ""}` },
        reviewer: { prompt: (context) => `Review: ${context.engineer?.text ?? ""}` },
      })
    )._unsafeUnwrap();
    expect(round.verdict).toBe("approve");
    expect(backend.requests.map((request) => request.prompt.split("\n").at(-1))).toHaveLength(3);
    expect(backend.requests[1]!.prompt).toContain("Implement: Decision:");
    const review = seen.find((event) => event.type === "round.review.completed");
    expect(review).toMatchObject({ missionId: "m1", round: 1, verdict: "approve", policy: "rolling" });
    const bad = await keel.runRound({ missionId: "m1", round: 0 } as never);
    expect(bad.isErr() && bad.error.code).toBe("invalid_input");
    await keel.close();
  });
});
