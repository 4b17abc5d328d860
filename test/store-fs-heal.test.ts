/**
 * The filesystem store's healing, as a user of `createKeel` sees it: real files damaged on disk
 * between turns (fault injection), the runtime's warnings, and the turns after.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createEventBus, type KeelEvent } from "@keel/core";
import { createScriptedBackend } from "@keel/backends/scripted";
import { createKeel } from "@keel/runtime";
import { createFsStore } from "@keel/store-fs";
import { afterEach, describe, expect, it } from "vitest";

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function setup() {
  const root = mkdtempSync(path.join(tmpdir(), "keel-heal-"));
  made.push(root);
  const dir = path.join(root, ".keel");
  const events = createEventBus();
  const seen: KeelEvent[] = [];
  events.on("*", (event) => seen.push(event));
  const backend = createScriptedBackend({ resumable: true, script: "Decision: keep going" });
  const keel = createKeel({ dir, backends: [backend], policy: "mission", events, cwd: root });
  const capsule = path.join(dir, "missions", "m1", "role-sessions", "engineer.json");
  const turn = async (prompt: string) => (await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt, objective: "Ship it" }))._unsafeUnwrap();
  return { root, dir, keel, seen, capsule, turn };
}

const warningsOf = (seen: KeelEvent[]) => seen.filter((event) => event.type === "role.session.warning");
/** A turn's warnings about its capsule (a mission without a checkpoint warns about that on every turn, which is not what these tests are about). */
const capsuleWarnings = <W extends { target: string }>(turn: { warnings: readonly W[] }) => turn.warnings.filter((warning) => warning.target === "capsule");

describe("createKeel over a damaged filesystem store", () => {
  it("says when a capsule was served from its backup, and its next save continues above every version acknowledged", async () => {
    const { keel, seen, capsule, turn } = setup();
    await turn("one");
    await turn("two");
    const acknowledged = JSON.parse(readFileSync(capsule, "utf8")).version as number;
    expect(acknowledged).toBe(2);
    writeFileSync(capsule, readFileSync(capsule, "utf8").replace('"totalTurns": 2', '"totalTurns": 7'));
    seen.length = 0;
    const third = await turn("three");
    // The turn ran from the backup (one write older) and says so, with its counter gone back.
    expect(third.plan.turn).toBe(2);
    expect(capsuleWarnings(third)).toEqual([expect.objectContaining({ target: "capsule", operation: "read", code: "corrupt" })]);
    expect(capsuleWarnings(third)[0]!.message).toMatch(/served from its backup.*went back to version 1/);
    expect(warningsOf(seen)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ missionId: "m1", role: "engineer", target: "capsule", code: "corrupt" }),
        // The store's own warning of the damaged bytes it kept comes through createKeel too.
        expect.objectContaining({ missionId: "m1", role: "engineer", target: "store", operation: "quarantined" }),
      ]),
    );
    const stored = JSON.parse(readFileSync(capsule, "utf8"));
    expect(stored.version).toBeGreaterThan(acknowledged);
    seen.length = 0;
    const fourth = await turn("four");
    expect(capsuleWarnings(fourth)).toEqual([]);
    expect(fourth.plan.action).toBe("resumed");
    expect(JSON.parse(readFileSync(capsule, "utf8")).version).toBe(stored.version + 1);
    await keel.close();
  });

  it("runs a turn fresh when the capsule is damaged beyond its backup, quarantines it, and the next turn resumes", async () => {
    const { dir, keel, seen, capsule, turn } = setup();
    const first = await turn("one");
    await turn("two");
    writeFileSync(capsule, "{ torn");
    writeFileSync(`${capsule}.bak`, "");
    seen.length = 0;
    const third = await turn("three");
    expect(third.plan.action).toBe("fresh");
    expect(third.threadId).not.toBe(first.threadId);
    expect(capsuleWarnings(third)).toEqual([expect.objectContaining({ target: "capsule", operation: "read", code: "corrupt" })]);
    expect(warningsOf(seen)).toEqual(expect.arrayContaining([expect.objectContaining({ target: "store", operation: "quarantined", role: "engineer" })]));
    // The damaged bytes are kept in quarantine, and check() lists them.
    const report = (await keel.store.check())._unsafeUnwrap();
    expect(report.ok).toBe(true);
    expect(report.quarantined).toEqual([expect.objectContaining({ key: ["missions", "m1", "role-sessions", "engineer"], from: capsule })]);
    const kept = report.quarantined![0]!.location;
    expect(readFileSync(path.join(kept, "engineer.json"), "utf8")).toBe("{ torn");
    expect(kept.startsWith(path.join(dir, "_keel", "quarantine"))).toBe(true);
    const fourth = await turn("four");
    expect(capsuleWarnings(fourth)).toEqual([]);
    expect(fourth.plan.action).toBe("resumed");
    expect(fourth.threadId).toBe(third.threadId);
    await keel.close();
  });

  it("recovers through check({ repair: true }) when both copies are damaged: the key is writable and the turn after resumes", async () => {
    const { dir, keel, capsule, turn } = setup();
    await turn("one");
    await turn("two");
    await keel.close();
    writeFileSync(capsule, "garbage");
    writeFileSync(`${capsule}.bak`, "garbage too");
    const store = createFsStore({ dir });
    const report = (await store.check({ repair: true }))._unsafeUnwrap();
    expect(report.repaired).toEqual([expect.objectContaining({ action: "quarantined", location: capsule })]);
    expect(report.ok).toBe(true);
    await store.close();
    const again = setup();
    // A second runtime on the same directory.
    const keel2 = createKeel({ dir, backends: [createScriptedBackend({ resumable: true, script: "Decision: again" })], policy: "mission", cwd: again.root });
    const run = async (prompt: string) => (await keel2.runRoleTurn({ missionId: "m1", role: "engineer", prompt, objective: "Ship it" }))._unsafeUnwrap();
    const fresh = await run("three");
    expect(fresh.plan.action).toBe("fresh");
    expect(fresh.warnings.filter((warning) => warning.code === "corrupt")).toEqual([]);
    const resumed = await run("four");
    expect(resumed.plan.action).toBe("resumed");
    expect(resumed.threadId).toBe(fresh.threadId);
    await keel2.close();
    await again.keel.close();
  });

  it("validates every option before it creates the store directory", async () => {
    const root = mkdtempSync(path.join(tmpdir(), "keel-heal-"));
    made.push(root);
    const dir = path.join(root, ".keel");
    const bad = [
      { dir, defaultBackend: "missing" },
      { dir, limits: { maxTurns: -1 } },
      { dir, policy: "sometimes" },
      { dir, turnTimeoutMs: 0 },
    ];
    for (const options of bad) {
      expect(() => createKeel(options as never)).toThrow(expect.objectContaining({ code: "invalid_input" }));
      expect(existsSync(dir)).toBe(false);
    }
    const keel = createKeel({ dir });
    expect(readdirSync(dir)).toContain("_keel");
    await keel.close();
  });
});
