import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { runCli } from "@keel/cli";
import { capsuleKey } from "@keel/sessions/schemas";
import { createFsStore } from "@keel/store-fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { StoreInspection } from "../packages/cli/src/internal/inspect-model.js";
import { ANSI, captureIo, hasStackTrace, spawnKeel, temporaryDirectory } from "./support/cli-harness.js";
import { writeSampleStore } from "./support/cli-inspect-fixture.js";

let scratch: { dir: string; remove: () => void };
let storeDir: string;

beforeEach(async () => {
  scratch = temporaryDirectory("inspect");
  storeDir = path.join(scratch.dir, "store");
  await writeSampleStore(storeDir);
});
afterEach(() => scratch.remove());

async function inspectJson(dir = storeDir): Promise<StoreInspection> {
  const io = captureIo();
  expect(await runCli(["inspect", dir, "--json"], io)).toBe(0);
  return JSON.parse(io.out) as StoreInspection;
}

/** Every file under `dir` with its size, mtime and content hash. */
function fingerprint(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) walk(full);
      else {
        const info = statSync(full);
        files[path.relative(dir, full)] = `${info.size}:${info.mtimeMs}:${createHash("sha256").update(readFileSync(full)).digest("hex")}`;
      }
    }
  };
  walk(dir);
  return files;
}

describe("keel inspect on a store written by the real packages", () => {
  it("shows missions, roles with capsule binding and counters, handoffs, the checkpoint, budgets and event logs", async () => {
    const io = captureIo();
    expect(await runCli(["inspect", storeDir], io)).toBe(0);
    const text = io.out;
    expect(text).toContain(`Keel store ${storeDir} (layout 2)`);
    expect(text).toMatch(/├─ missions \(1\)\n│  └─ mission m1\n/);
    expect(text).toMatch(/checkpoint v\d+: 2 roles/);
    expect(text).toContain("engineer: 1 open item (turn 3)");
    expect(text).toMatch(/role engineer\n.*capsule v3 missions\/m1\/role-sessions\/engineer/);
    expect(text).toContain("thread: backend codex, model gpt-5, branch main, thread thread-engineer-1");
    expect(text).toContain("counters: 3 turns since rotation, 3 turns in all, 0 rotations, 0 resume failures, 6,000 input tokens observed");
    expect(text).toContain("thread: backend codex, model none, branch none, thread thread-planner-1");
    expect(text).toContain("handoff revision 1");
    expect(text).toContain("in flight: tests (half)");
    expect(text).toMatch(/role planner\n(.*\n)*.*handoff: none/);
    expect(text).toContain("ledger mission.m1 v2 budget/mission.m1");
    expect(text).toContain("tokens: limit 100,000 (mission.m1) · reserved 2,000 · settled 5,000 · remaining 93,000");
    expect(text).toContain("scope role.engineer (parents mission.m1): 1 open reservation");
    expect(text).toContain("tokens: limit 30,000 (role) · reserved 2,000 · settled 5,000 · remaining 23,000");
    expect(text).toContain("calls: limit 20 (mission.m1) · reserved 1 · settled 1 · remaining 18");
    expect(text).toMatch(/telemetry\/events: 7 events, last seq 7\n.*4 role\.session\.turn/);
    expect(io.err).toBe("");
  });

  it("prints one JSON document for machines, with the validated documents", async () => {
    const inspection = await inspectJson();
    expect(inspection.keysFrom).toBe("list");
    expect(inspection.missions.map((mission) => mission.id)).toEqual(["m1"]);
    const [engineer, planner] = inspection.missions[0]!.roles;
    expect(engineer?.role).toBe("engineer");
    expect(engineer?.capsule).toMatchObject({
      status: "ok",
      key: "missions/m1/role-sessions/engineer",
      version: 3,
      value: { thread: { backend: "codex", model: "gpt-5", branch: "main", threadId: "thread-engineer-1" }, counters: { totalTurns: 3 } },
    });
    expect(engineer?.handoff).toMatchObject({ status: "ok", value: { revision: 1, done: ["parser"] } });
    expect(planner).toMatchObject({ role: "planner", handoff: null, capsule: { status: "ok" } });
    expect(inspection.budgets).toEqual([
      expect.objectContaining({
        status: "ok",
        root: "mission.m1",
        scopes: [
          expect.objectContaining({ scope: "mission.m1", remaining: { tokens: 93_000, calls: 18, timeMs: null, costMicroUsd: null } }),
          expect.objectContaining({ scope: "role.engineer", parents: ["mission.m1"], openReservations: 1 }),
        ],
      }),
    ]);
    expect(inspection.logs).toEqual([
      // The budget ledger's close log: the one settle, appended instead of rewriting the ledger.
      { status: "ok", key: "budget/mission.m1", lastSeq: 1, kind: "records", records: 1, truncated: false, types: {} },
      { status: "ok", key: "telemetry/events", lastSeq: 7, kind: "events", records: 7, truncated: false, types: { "budget.reserved": 2, "budget.settled": 1, "role.session.turn": 4 } },
    ]);
    expect(inspection.warnings).toEqual([]);
  });

  it("changes nothing in the store directory", async () => {
    const before = fingerprint(storeDir);
    expect(await runCli(["inspect", storeDir], captureIo())).toBe(0);
    expect(await runCli(["inspect", storeDir, "--json"], captureIo())).toBe(0);
    expect(fingerprint(storeDir)).toEqual(before);
  });

  it("colours only when the io says so (NO_COLOR turns it off)", async () => {
    const plain = captureIo({ color: false });
    await runCli(["inspect", storeDir], plain);
    expect(plain.out).not.toMatch(ANSI);
    const coloured = captureIo({ color: true });
    await runCli(["inspect", storeDir], coloured);
    expect(coloured.out).toMatch(ANSI);
  });

  it("lists other documents and plain logs, and a mission's own extra documents", async () => {
    const store = createFsStore({ dir: storeDir });
    (await store.docs.put(["workflows", "w1"], { stage: "plan" }, { create: true }))._unsafeUnwrap();
    (await store.docs.put(["missions", "m1", "notes"], { text: "hello" }, { create: true }))._unsafeUnwrap();
    (await store.logs.append(["runs", "r1"], [{ id: "call-0", value: { callIndex: 0 } }]))._unsafeUnwrap();
    await store.close();
    const inspection = await inspectJson();
    expect(inspection.otherDocuments).toEqual([{ key: "workflows/w1", version: 1, bytes: expect.any(Number) }]);
    expect(inspection.missions[0]?.otherDocuments.map((document) => document.key)).toEqual(["missions/m1/notes"]);
    expect(inspection.logs.find((log) => log.key === "runs/r1")).toMatchObject({ status: "ok", kind: "records", records: 1, types: {} });
    const io = captureIo();
    await runCli(["inspect", storeDir], io);
    expect(io.out).toContain("runs/r1: 1 record, last seq 1");
    expect(io.out).toMatch(/other documents \(1\)\n.*workflows\/w1 v1/);
  });
});

describe("keel inspect on damaged stores", () => {
  it("shows a capsule damaged beyond its backup as CORRUPT, listed beside the good documents", async () => {
    // The planner's capsule was written once: it has no .bak to fall back on.
    writeFileSync(path.join(storeDir, "missions/m1/role-sessions/planner.json"), "garbage{\n");
    const io = captureIo();
    expect(await runCli(["inspect", storeDir], io)).toBe(0);
    expect(io.out).toMatch(/role planner\n.*capsule CORRUPT \(corrupt\) missions\/m1\/role-sessions\/planner: /);
    expect(io.out).toContain("thread: backend codex, model gpt-5"); // the engineer is still shown
    // The store's listing reports the damaged document beside the good ones: nothing is walked around it.
    expect(io.out).not.toContain("listing-failed");
    expect(io.err).toContain("1 damaged entry");
    const inspection = await inspectJson();
    expect(inspection.keysFrom).toBe("list");
    expect(inspection.missions[0]?.roles[1]).toMatchObject({ role: "planner", capsule: { status: "corrupt", code: "corrupt" } });
    expect(inspection.budgets[0]?.status).toBe("ok");
  });

  it("serves a damaged capsule's backup and says so", async () => {
    writeFileSync(path.join(storeDir, "missions/m1/role-sessions/engineer.json"), "{ torn");
    const inspection = await inspectJson();
    expect(inspection.keysFrom).toBe("list");
    expect(inspection.missions[0]?.roles[0]?.capsule).toMatchObject({ status: "ok", version: 2 });
    expect(inspection.warnings.map((warning) => warning.type)).toContain("served-backup");
  });

  it("lists what check({ repair: true }) moved into quarantine, with the reason and where it is kept", async () => {
    const file = path.join(storeDir, "missions/m1/role-sessions/planner.json");
    writeFileSync(file, "garbage{\n");
    const store = createFsStore({ dir: storeDir });
    const report = (await store.check({ repair: true }))._unsafeUnwrap();
    await store.close();
    expect(report.repaired).toEqual([expect.objectContaining({ action: "quarantined", location: file })]);
    const inspection = await inspectJson();
    expect(inspection.quarantined).toEqual([expect.objectContaining({ key: ["missions", "m1", "role-sessions", "planner"], from: file, reason: expect.stringContaining("damaged") })]);
    const io = captureIo();
    expect(await runCli(["inspect", storeDir], io)).toBe(0);
    expect(io.out).toMatch(/quarantined \(1\)\n.*missions\/m1\/role-sessions\/planner: the document and its backup were damaged/);
    expect(io.out).toContain(`kept in ${inspection.quarantined[0]!.location}`);
  });

  it("marks documents that are not what their key promises as CORRUPT", async () => {
    const store = createFsStore({ dir: storeDir });
    const engineer = (await store.docs.get(capsuleKey("m1", "engineer")))._unsafeUnwrap();
    (await store.docs.put(capsuleKey("m1", "qa"), engineer!.value, { create: true }))._unsafeUnwrap();
    (await store.docs.put(capsuleKey("m1", "reviewer"), { transcript: ["no"] }, { create: true }))._unsafeUnwrap();
    (await store.docs.put(["missions", "m1", "checkpoint"], { placeholder: "yes" }, { unconditional: true }))._unsafeUnwrap();
    (await store.docs.put(["budget", "broken"], { hello: 1 }, { create: true }))._unsafeUnwrap();
    await store.close();
    const inspection = await inspectJson();
    const roles = Object.fromEntries(inspection.missions[0]!.roles.map((role) => [role.role, role.capsule]));
    expect(roles["qa"]).toMatchObject({ status: "corrupt", code: "corrupt", message: expect.stringContaining('role "engineer"') });
    expect(roles["reviewer"]).toMatchObject({ status: "corrupt", code: "corrupt" });
    expect(inspection.missions[0]?.checkpoint).toMatchObject({ status: "corrupt", code: "corrupt" });
    expect(inspection.budgets.find((ledger) => ledger.root === "broken")).toMatchObject({ status: "corrupt", code: "corrupt" });
    const io = captureIo();
    expect(await runCli(["inspect", storeDir], io)).toBe(0);
    expect(io.out).toContain("ledger broken CORRUPT (corrupt)");
    expect(io.err).toContain("4 damaged entries");
  });

  it("shows an inconsistent ledger as CORRUPT, as the budget package judges it", async () => {
    const file = path.join(storeDir, "budget/mission.m1.json");
    const store = createFsStore({ dir: storeDir });
    const ledger = (await store.docs.get(["budget", "mission.m1"]))._unsafeUnwrap()!;
    const value = structuredClone(ledger.value) as { scopes: Record<string, { reserved: { tokens: number } }> };
    value.scopes["mission.m1"]!.reserved.tokens = 1; // no longer the sum of its open reservations
    (await store.docs.put(["budget", "mission.m1"], value, { expectedVersion: ledger.version }))._unsafeUnwrap();
    await store.close();
    expect(existsSync(file)).toBe(true);
    const inspection = await inspectJson();
    expect(inspection.budgets[0]).toMatchObject({ status: "corrupt", code: "corrupt", root: "mission.m1" });
  });

  it("never prints control characters read from the store", async () => {
    const store = createFsStore({ dir: storeDir });
    const engineer = (await store.docs.get(capsuleKey("m1", "engineer")))._unsafeUnwrap()!;
    const value = structuredClone(engineer.value) as { thread: { model: string } };
    value.thread.model = "evil\u001b[2J\nmodel";
    (await store.docs.put(capsuleKey("m1", "engineer"), value, { expectedVersion: engineer.version }))._unsafeUnwrap();
    await store.close();
    const io = captureIo();
    await runCli(["inspect", storeDir], io);
    expect(io.out).not.toMatch(ANSI);
    expect(io.out).toContain("model evil\\u001b[2J\\nmodel");
  });
});

describe("keel inspect errors", () => {
  it("a missing directory is exit 1 with one clear line, and nothing is created", async () => {
    const missing = path.join(scratch.dir, "nope");
    const io = captureIo();
    expect(await runCli(["inspect", missing], io)).toBe(1);
    expect(io.err).toMatch(/^error \(not_found\): no Keel store at .*nope: the directory does not exist \(nothing was created\)\n$/);
    expect(existsSync(missing)).toBe(false);
  });

  it("a directory that is not a Keel store is exit 1 and is left untouched", async () => {
    writeFileSync(path.join(scratch.dir, "file.txt"), "x");
    const before = fingerprint(scratch.dir);
    const io = captureIo();
    expect(await runCli(["inspect", scratch.dir], io)).toBe(1);
    expect(io.err).toContain("no _keel/store.json marker");
    const file = captureIo();
    expect(await runCli(["inspect", path.join(scratch.dir, "file.txt")], file)).toBe(1);
    expect(file.err).toContain("not a directory");
    expect(fingerprint(scratch.dir)).toEqual(before);
    expect(existsSync(path.join(scratch.dir, "_keel"))).toBe(false);
  });

  it("resolves the default .keel against the working directory", async () => {
    const io = captureIo({ cwd: scratch.dir });
    expect(await runCli(["inspect"], io)).toBe(1);
    expect(io.err).toContain(path.join(scratch.dir, ".keel"));
  });

  it("more than one directory, or an unknown option, is a usage error (exit 2)", async () => {
    const io = captureIo();
    expect(await runCli(["inspect", "a", "b"], io)).toBe(2);
    expect(await runCli(["inspect", "--jsn"], captureIo())).toBe(2);
  });

  it("--help shows the options and an example", async () => {
    const io = captureIo();
    expect(await runCli(["inspect", "--help"], io)).toBe(0);
    expect(io.out).toContain("--json");
    expect(io.out).toContain("Example:");
  });

  it("the real binary exits 1 without a stack trace for a missing store, and 0 on a store", async () => {
    const missing = await spawnKeel(["inspect", path.join(scratch.dir, "nope")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no Keel store");
    expect(hasStackTrace(missing.stderr)).toBe(false);
    const shown = await spawnKeel(["inspect", storeDir, "--json"]);
    expect(shown.code).toBe(0);
    expect((JSON.parse(shown.stdout) as StoreInspection).missions[0]?.id).toBe("m1");
  });
});
