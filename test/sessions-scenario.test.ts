import { CapsuleSchema } from "@keel/sessions/schemas";
import { createMemoryStore, type KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { afterEach, describe, expect, it } from "vitest";
import { temporaryDirectory } from "./support/sessions-fixture-dirs.js";
import { runMission, type MissionRun } from "./support/sessions-run-mission.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length > 0) cleanups.pop()!();
});

/** A filesystem store directory: each "restart" opens a new store instance on it. */
function reopenableFs() {
  const { dir, remove } = temporaryDirectory("scenario");
  cleanups.push(remove);
  return (): KeelStore => createFsStore({ dir });
}

/** A memory store whose data outlives `close()`, so a "restart" reopens the same data. */
function reopenableMemory() {
  const data = createMemoryStore();
  return (): KeelStore => ({ ...data, close: async () => undefined });
}

const actions = (run: MissionRun, role: string) =>
  run.events.filter((event) => event.role === role).map((event) => (event.action === "resumed" ? "resumed" : `${event.action}:${event.rotationReason}`));
const promptBytes = (run: MissionRun, role: string) => run.events.filter((event) => event.role === role).reduce((sum, event) => sum + event.promptBytes, 0);
const finalVerdict = (run: MissionRun) => run.results.reviewer.at(-1)!.outcome.text;

describe("seed scenario: one mission, Planner/Engineer/Reviewer, every policy, a restart in the middle", () => {
  const rounds = 8;
  const restartAfter = 4;

  it.each([
    ["memory", reopenableMemory],
    ["filesystem", reopenableFs],
  ] as const)("rolling rotates at 6 turns and at 120,000 input tokens, and survives the restart (%s store)", async (_name, reopenable) => {
    const open = reopenable();
    const run = await runMission({ policy: "rolling", rounds, restartAfter, open });
    expect(actions(run, "engineer")).toEqual(["fresh:first_turn", "resumed", "resumed", "resumed", "resumed", "resumed", "rotated:max_turns", "resumed"]);
    expect(actions(run, "reviewer")).toEqual(actions(run, "engineer"));
    expect(actions(run, "planner")).toEqual(["fresh:first_turn", "resumed", "resumed", "resumed", "rotated:max_input_tokens", "resumed", "resumed", "resumed"]);
    const plannerInput = run.events.filter((event) => event.role === "planner").map((event) => event.usage!.inputUncached!);
    const sum = (count: number) => plannerInput.slice(0, count).reduce((total, tokens) => total + tokens, 0);
    expect(sum(3)).toBeLessThan(120_000);
    expect(sum(4)).toBeGreaterThanOrEqual(120_000);
    // After the restart, each role resumed the same thread and went on counting.
    for (const role of ["engineer", "reviewer"] as const) {
      const afterRestart = run.results[role][restartAfter]!;
      expect(afterRestart.plan).toMatchObject({ action: "resumed", threadId: run.threadsBeforeRestart[role], turn: restartAfter + 1 });
    }
    const store = open();
    for (const role of ["planner", "engineer", "reviewer"]) {
      const capsule = CapsuleSchema.parse((await store.docs.get(["missions", "m1", "role-sessions", role]))._unsafeUnwrap()!.value);
      expect(capsule.counters.totalTurns).toBe(rounds);
      expect(capsule.counters.rotations).toBe(1);
    }
    await store.close();
    // Persistence never failed along the way.
    expect(Object.values(run.results).flat().flatMap((result) => result.warnings)).toEqual([]);
  });

  it("mission keeps one thread per role through the restart; fresh keeps none", async () => {
    const mission = await runMission({ policy: "mission", rounds, restartAfter, open: reopenableMemory() });
    for (const role of ["planner", "engineer", "reviewer"]) {
      expect(actions(mission, role)).toEqual(["fresh:first_turn", ...Array.from({ length: rounds - 1 }, () => "resumed")]);
      expect(new Set(mission.events.filter((event) => event.role === role).map((event) => event.threadId)).size).toBe(1);
    }
    const open = reopenableMemory();
    const fresh = await runMission({ policy: "fresh", rounds, restartAfter, open });
    for (const role of ["planner", "engineer", "reviewer"]) {
      expect(actions(fresh, role)).toEqual(Array.from({ length: rounds }, () => "fresh:policy_fresh"));
    }
    expect((await open().docs.list(["missions", "m1", "role-sessions"]))._unsafeUnwrap().items).toEqual([]);
  });

  it("the Reviewer sends fewer prompt bytes under rolling than under fresh, with the same verdict", async () => {
    const fresh = await runMission({ policy: "fresh", rounds, restartAfter, open: reopenableMemory() });
    const rolling = await runMission({ policy: "rolling", rounds, restartAfter, open: reopenableMemory() });
    const mission = await runMission({ policy: "mission", rounds, restartAfter, open: reopenableMemory() });
    expect(finalVerdict(fresh)).toBe(`verdict: approve; reviewed ${Array.from({ length: rounds }, (_, index) => `change-${index + 1}`).join(", ")}`);
    expect(finalVerdict(rolling)).toBe(finalVerdict(fresh));
    expect(finalVerdict(mission)).toBe(finalVerdict(fresh));
    // Every round's verdict agrees, not only the last.
    expect(rolling.results.reviewer.map((result) => result.outcome.text)).toEqual(fresh.results.reviewer.map((result) => result.outcome.text));
    expect(promptBytes(rolling, "reviewer")).toBeLessThan(promptBytes(fresh, "reviewer"));
    expect(promptBytes(mission, "reviewer")).toBeLessThan(promptBytes(rolling, "reviewer"));
  });

  it("keeps each role's capsule to itself", async () => {
    const open = reopenableMemory();
    await runMission({ policy: "rolling", rounds: 3, restartAfter: 2, open });
    const store = open();
    const foreign: Record<string, RegExp> = { planner: /implemented change|verdict:/, engineer: /verdict:|plan:|survey/, reviewer: /implemented change|plan:|survey/ };
    for (const [role, pattern] of Object.entries(foreign)) {
      const capsule = CapsuleSchema.parse((await store.docs.get(["missions", "m1", "role-sessions", role]))._unsafeUnwrap()!.value);
      expect(capsule.role).toBe(role);
      expect(JSON.stringify(capsule)).not.toMatch(pattern);
    }
  });
});
