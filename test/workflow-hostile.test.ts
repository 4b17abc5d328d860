/**
 * What a hostile or careless caller can hand `@keel/workflow`'s entry points (issue 29 §4): for
 * each, a valid argument with one field at a time swapped for a hostile value (wrong types,
 * prototype keys, NUL, huge strings and numbers, throwing getters, unknown keys). Every call
 * answers a result (the engine's constructor throws a `KeelError`), never a TypeError; a value
 * of the wrong type is a typed refusal; a refused call leaves the store exactly as it was.
 *
 * Paths: a catalog directory and a source root are named by the caller and may themselves be
 * links; everything under them is read without following a link out (a catalog kind folder or
 * file that is a link is an issue, an evidence file that is a link is refused, a fingerprint of
 * one is `not_a_file`).
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createBudget } from "@keel/budget";
import { createManualClock, isSafeName, type KeelError } from "@keel/core";
import { createMemoryStore, type KeelStore } from "@keel/store";
import {
  appendJournal,
  buildPlan,
  checkVersion,
  classifyEvidenceChange,
  decideAbort,
  decideCheckpoint,
  decideContinue,
  decideInterrupted,
  createCatalog,
  createWorkflowEngine,
  findInterruptedWork,
  fingerprintFiles,
  inspectCatalogDirectory,
  inspectDefinitions,
  intakeEvidence,
  loadCatalog,
  readJournal,
  selectModel,
  type SelectModelInput,
  type WorkflowEngine,
} from "@keel/workflow";
import { errOf, okValue } from "@keel/testkit";
import fc from "fast-check";
import { ok } from "neverthrow";
import { afterEach, describe, expect, it } from "vitest";
import { changedField, expectRefused, expectThrowsKeel, hostileStructures, hostileValue, settle, storeSnapshot, withHostileField } from "./support/hostile.js";

const RUNS = { numRuns: 100 };
const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  expect((Object.prototype as Record<string, unknown>)["polluted"]).toBeUndefined();
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "keel-workflow-hostile-"));
  made.push(dir);
  return dir;
}

const MODELS = [
  { id: "local-small", strength: 30, contextWindow: 32_000, location: "installed" as const, latencyMs: 200, tier: "light" as const, capabilities: [] },
  { id: "remote-large", strength: 75, contextWindow: 200_000, location: "remote" as const, latencyMs: 2000, tier: "large" as const, reviewed: true, capabilities: [] },
  { id: "remote-max", strength: 95, contextWindow: 400_000, location: "remote" as const, latencyMs: 5000, tier: "maximum" as const, reviewed: true, capabilities: [] },
];

function engineOver(sourceRoot?: string): { engine: WorkflowEngine; store: KeelStore } {
  const clock = createManualClock();
  const store = createMemoryStore({ clock });
  const engine = createWorkflowEngine({
    store,
    catalog: createCatalog()._unsafeUnwrap(),
    budget: createBudget({ store, clock }),
    models: MODELS,
    clock,
    executeStage: async (call) => ok({ text: `${call.stage}/${call.skill}: findings`, tokens: 10, durationMs: 1 }),
    ...(sourceRoot === undefined ? {} : { sourceRoot }),
  });
  return { engine, store };
}

const task = (taskId = "t1") => ({
  taskId,
  objective: "review the parser change",
  workflow: "review_change",
  risk: "low" as const,
  complexity: "small" as const,
  scope: [] as string[],
  evidence: { diff: "--- a/x.ts\n+++ b/x.ts\n-old\n+new\n", validationStatus: "passed" as const },
});

type Accepts = (value: unknown) => boolean | "any";
const never = (_value: unknown): boolean => false;
const optional =
  (accepts: (value: unknown) => boolean | "any"): Accepts =>
  (value) =>
    value === undefined || accepts(value);
const plainObject = (value: unknown): boolean | "any" => (typeof value === "object" && value !== null && !Array.isArray(value) ? "any" : false);
const anyString = (value: unknown): boolean | "any" => (typeof value === "string" ? "any" : false);
const safeName = (value: unknown): boolean | "any" => (typeof value === "string" && isSafeName(value) ? "any" : false);

/** Swap a field (or add a key), call: a value its field cannot take is refused with `codes`; a refusal leaves the store as it was. */
async function checkFields(options: { valid: Record<string, unknown>; fields: Record<string, Accepts>; call: (variant: Record<string, unknown>) => unknown; store?: KeelStore; codes?: KeelError["code"][] }) {
  const codes = options.codes ?? ["invalid_input", "too_large"];
  await fc.assert(
    fc.asyncProperty(withHostileField(options.valid, 1), async (variant) => {
      const changed = changedField(options.valid, variant);
      const before = options.store ? await storeSnapshot(options.store) : "";
      const accepts = changed === undefined ? "any" : changed.added ? false : (options.fields[changed.key] ?? never)(variant[changed.key]);
      const outcome = accepts === false ? { ok: false as const, error: await expectRefused(() => options.call(variant), codes) } : await settle(() => options.call(variant));
      if (!outcome.ok && options.store) expect(await storeSnapshot(options.store)).toBe(before);
    }),
    RUNS,
  );
}

describe("the engine's requests", () => {
  const taskFields: Record<string, Accepts> = {
    taskId: safeName,
    objective: anyString,
    workflow: safeName,
    risk: optional(never),
    complexity: optional(never),
    scope: optional((value) => (Array.isArray(value) ? "any" : false)),
    evidence: optional(plainObject),
  };

  it("plan and start refuse a task field of the wrong type and unknown fields; a refused start writes nothing", async () => {
    const { engine, store } = engineOver();
    await checkFields({ valid: task(), fields: taskFields, call: (variant) => engine.plan(variant as never), store });
    await checkFields({ valid: task(), fields: taskFields, call: (variant) => engine.start(variant as never), store });
    for (const value of [null, undefined, "t", 1, []]) {
      await expectRefused(() => engine.plan(value as never));
      await expectRefused(() => engine.start(value as never));
    }
  });

  it("step, checkpoint, abort and status refuse a run id or body of the wrong type; nothing changes", async () => {
    const { engine, store } = engineOver();
    const run = await okValue(engine.start(task()));
    await fc.assert(
      fc.asyncProperty(hostileValue, async (runId) => {
        const before = await storeSnapshot(store);
        const codes: KeelError["code"][] = typeof runId === "string" && isSafeName(runId) ? ["not_found"] : ["invalid_input"];
        await expectRefused(() => engine.status(runId as never), codes);
        await expectRefused(() => engine.step(runId as never, { version: run.version }), codes);
        await expectRefused(() => engine.checkpoint(runId as never, { version: run.version, action: "abort" }), codes);
        await expectRefused(() => engine.abort(runId as never, { version: run.version }), codes);
        expect(await storeSnapshot(store)).toBe(before);
      }),
      RUNS,
    );
    const version = (value: unknown) => (Number.isSafeInteger(value) && (value as number) >= 1 ? "any" : false);
    await checkFields({
      valid: { version: run.version, evidence: { context: "more" }, tierCap: "large", onMismatch: "pause" },
      fields: { version, evidence: optional(plainObject), tierCap: optional(never), onMismatch: optional(never) },
      call: (variant) => engine.step(run.runId, variant as never),
      store,
      codes: ["invalid_input", "too_large"],
    });
    await checkFields({
      valid: { version: 999, action: "revise", note: "n", evidence: { diff: "+x" }, acknowledgeUnverifiedChecks: true, disposition: "d" },
      fields: { version, action: never, note: optional(anyString), evidence: optional(plainObject), acknowledgeUnverifiedChecks: optional((value) => typeof value === "boolean"), disposition: optional(anyString) },
      call: (variant) => engine.checkpoint(run.runId, variant as never),
      store,
    });
    await checkFields({
      valid: { version: 999, note: "n" },
      fields: { version, note: optional(anyString) },
      call: (variant) => engine.abort(run.runId, variant as never),
      store,
    });
  });

  it("revise with evidence that changes nothing ({} or the same again) is invalid_input: the run stays, no cycle is spent", async () => {
    const { engine, store } = engineOver();
    const run = await okValue(engine.start({ ...task(), workflow: "review_change" }));
    const step = await okValue(engine.step(run.runId, { version: run.version }));
    expect(step.status.status).toBe("awaiting_checkpoint");
    const before = await storeSnapshot(store);
    for (const evidence of [{}, task().evidence, { diff: task().evidence.diff }, { files: undefined }]) {
      const error = await expectRefused(() => engine.checkpoint(run.runId, { version: step.status.version, action: "revise", evidence }));
      expect(error.details["reason"]).toBe("revise_without_evidence");
    }
    expect(await storeSnapshot(store)).toBe(before);
    const status = await okValue(engine.status(run.runId));
    expect(status).toMatchObject({ status: "awaiting_checkpoint", version: step.status.version, corrections: { used: 0 } });
    const revised = await okValue(engine.checkpoint(run.runId, { version: step.status.version, action: "revise", evidence: { diff: "+fixed" } }));
    expect(revised.corrections.used).toBe(1);
  });

  it("plan refuses every evidence file start refuses (the same intake), and neither writes anything", async () => {
    const root = tempDir();
    const outside = tempDir();
    writeFileSync(path.join(root, "a.ts"), "one\ntwo\n");
    writeFileSync(path.join(outside, "secret.ts"), "secret\n");
    mkdirSync(path.join(root, "dir"));
    symlinkSync(path.join(outside, "secret.ts"), path.join(root, "link.ts"));
    symlinkSync(outside, path.join(root, "out"));
    const { engine, store } = engineOver(root);
    const empty = await storeSnapshot(store);
    const cases: [string, number, KeelError["code"]][] = [
      ["missing.ts", 1, "not_found"],
      ["link.ts", 1, "invalid_input"],
      ["out/secret.ts", 1, "invalid_input"],
      ["dir", 1, "invalid_input"],
      ["a.ts", 99, "invalid_input"],
    ];
    for (const [file, lastLine, code] of cases) {
      const bad = { ...task(`t-${lastLine}-${file.replace(/[^a-z]/g, "")}`), evidence: { files: [{ path: file, firstLine: 1, lastLine }] } };
      const planned = await expectRefused(() => engine.plan(bad), [code]);
      const started = await expectRefused(() => engine.start(bad), [code]);
      expect(planned.code).toBe(started.code);
    }
    const noRoot = engineOver();
    const selecting = { ...task("t-noroot"), evidence: { files: [{ path: "a.ts", firstLine: 1, lastLine: 1 }] } };
    expect((await errOf(noRoot.engine.plan(selecting))).code).toBe((await errOf(noRoot.engine.start(selecting))).code);
    expect(await storeSnapshot(store)).toBe(empty);
    expect(await storeSnapshot(noRoot.store)).toBe(await storeSnapshot(createMemoryStore()));
    expect(await okValue(engine.plan({ ...task("t-ok"), evidence: { files: [{ path: "a.ts", firstLine: 1, lastLine: 2 }] } }))).toMatchObject({ workflow: "review_change" });
  });

  it("createWorkflowEngine throws a KeelError (invalid_input) for options of the wrong type, never a TypeError", async () => {
    const clock = createManualClock();
    const store = createMemoryStore({ clock });
    const valid = { store, catalog: createCatalog()._unsafeUnwrap(), budget: createBudget({ store, clock }), models: MODELS, executeStage: async () => undefined, clock, leaseTtlMs: 1000, maxRetainedRuns: 10 };
    await fc.assert(
      fc.property(withHostileField(valid, 1), (variant) => {
        const changed = changedField(valid, variant);
        if (changed === undefined) return;
        const optionalOk = (changed.key === "leaseTtlMs" || changed.key === "maxRetainedRuns" || changed.key === "clock") && variant[changed.key] === undefined;
        if (optionalOk) return;
        if (changed.key === "models" && Array.isArray(variant["models"]) && (variant["models"] as unknown[]).length === 0) return;
        // Another function is a valid executeStage (the hostile values include `() => 1`).
        if (changed.key === "executeStage" && typeof variant["executeStage"] === "function") return;
        expectThrowsKeel(() => createWorkflowEngine(variant as never));
      }),
      RUNS,
    );
  });
});

describe("catalogs", () => {
  it("createCatalog and inspectDefinitions refuse definitions and options that are not what they take: createCatalog(null) is invalid_input", async () => {
    for (const value of [null, "x", 1, [], { skills: null }, { skills: "x" }, { colours: [] }]) {
      await expectRefused(() => createCatalog(value as never));
      expect(inspectDefinitions(value as never).issues.length).toBeGreaterThan(0);
    }
    await fc.assert(
      fc.asyncProperty(hostileValue, hostileValue, async (definitions, options) => {
        await settle(() => createCatalog(definitions as never, options as never));
        await settle(() => createCatalog({ skills: [definitions] } as never));
        const inspection = inspectDefinitions(definitions as never, options as never);
        expect(inspection.catalog === undefined || inspection.issues.length === 0).toBe(true);
      }),
      RUNS,
    );
    await checkFields({
      valid: { builtins: true, limits: { entriesPerKind: 8 } },
      fields: { builtins: optional((value) => typeof value === "boolean"), limits: optional(plainObject) },
      call: (variant) => createCatalog({}, variant as never),
      codes: ["invalid_input"],
    });
  });

  it("loadCatalog: a missing directory is not_found, a file or an empty directory is invalid_input, never Ok with the built-ins only", async () => {
    const dir = tempDir();
    const missing = path.join(dir, "no-such-catalog");
    expect((await errOf(loadCatalog(missing))).code).toBe("not_found");
    expect((await errOf(inspectCatalogDirectory(missing))).code).toBe("not_found");
    writeFileSync(path.join(dir, "file.json"), "{}");
    expect((await errOf(loadCatalog(path.join(dir, "file.json")))).code).toBe("invalid_input");
    const empty = path.join(dir, "empty");
    mkdirSync(empty);
    const refused = await errOf(loadCatalog(empty));
    expect(refused.code).toBe("invalid_input");
    expect(refused.details["issues"]).toEqual([expect.objectContaining({ file: empty, rule: "file" })]);
    const inspection = await okValue(inspectCatalogDirectory(empty));
    expect(inspection.catalog).toBeUndefined();
    for (const kind of ["skills", "roles", "workflows", "profiles"]) mkdirSync(path.join(empty, kind));
    expect((await errOf(loadCatalog(empty))).code).toBe("invalid_input");
  });

  it("loadCatalog and inspectCatalogDirectory refuse a directory or options of the wrong type, typed", async () => {
    const dir = tempDir();
    await fc.assert(
      fc.asyncProperty(hostileValue, async (value) => {
        const codes: KeelError["code"][] = typeof value === "string" && value.length > 0 && !value.includes("\0") ? ["not_found", "invalid_input", "io_failed"] : ["invalid_input"];
        await expectRefused(() => loadCatalog(value as never), codes);
        // Inspecting a directory that exists answers its issues; any other value is refused.
        if (codes.length === 1) await expectRefused(() => inspectCatalogDirectory(value as never), codes);
        else await settle(() => inspectCatalogDirectory(value as never));
        // An empty directory is refused too, so every options value is: the point is the type of the refusal.
        if (value !== undefined) await expectRefused(() => loadCatalog(dir, value as never));
      }),
      RUNS,
    );
  });

  it("does not follow a kind folder or a definition file that is a link out of the catalog; the root itself may be a link", async () => {
    const outside = tempDir();
    mkdirSync(path.join(outside, "skills"));
    writeFileSync(path.join(outside, "skills", "s.json"), JSON.stringify({ schemaVersion: 1, id: "s", version: "1.0.0", description: "d", instructions: "i" }));
    const catalog = tempDir();
    symlinkSync(path.join(outside, "skills"), path.join(catalog, "skills"));
    mkdirSync(path.join(catalog, "roles"));
    symlinkSync(path.join(outside, "skills", "s.json"), path.join(catalog, "roles", "r.json"));
    const issues = (await okValue(inspectCatalogDirectory(catalog))).issues;
    expect(issues).toContainEqual(expect.objectContaining({ file: path.join(catalog, "skills"), rule: "file" }));
    expect(issues).toContainEqual(expect.objectContaining({ file: path.join(catalog, "roles", "r.json"), rule: "file" }));
    const alias = path.join(tempDir(), "alias");
    symlinkSync(outside, alias);
    expect((await okValue(loadCatalog(alias))).skills.has("s")).toBe(true);
  });
});

describe("the run decisions", () => {
  it("checkVersion, decideCheckpoint and decideAbort refuse a run or an input of the wrong shape, typed, never a TypeError", async () => {
    const { engine, store } = engineOver();
    const started = await okValue(engine.start(task()));
    await okValue(engine.step(started.runId, { version: started.version }));
    const run = (await okValue(store.docs.get(["workflow-runs", started.runId])))?.value;
    const journal = await okValue(store.logs.read(["workflow-journal", started.runId]));
    const latest = (journal.at(-1)?.value as { commit?: unknown } | undefined)?.commit ?? run;
    expect(latest).toBeDefined();
    const current = latest as { version: number };
    expect(decideCheckpoint(latest as never, { action: "abort", version: current.version, at: 1 }).isOk()).toBe(true);
    await fc.assert(
      fc.asyncProperty(hostileValue, async (value) => {
        await expectRefused(() => checkVersion(value as never, 1));
        await expectRefused(() => decideAbort(value as never, 1, 1));
        await expectRefused(() => decideCheckpoint(value as never, { action: "abort", version: 1, at: 1 }));
        await expectRefused(() => decideCheckpoint(latest as never, value as never));
        if (!(Number.isSafeInteger(value) && (value as number) >= 1)) await expectRefused(() => checkVersion(latest as never, value as never));
        if (typeof value !== "number") await expectRefused(() => decideAbort(latest as never, current.version, value as never));
      }),
      RUNS,
    );
    await checkFields({
      valid: { action: "revise", version: current.version, note: "n", acknowledgeUnverifiedChecks: true, disposition: "d", at: 1 },
      fields: {
        action: never,
        version: (value) => (Number.isSafeInteger(value) && (value as number) >= 1 ? "any" : false),
        note: optional(anyString),
        acknowledgeUnverifiedChecks: optional((value) => typeof value === "boolean"),
        disposition: optional(anyString),
        at: (value) => (typeof value === "number" && Number.isFinite(value) ? "any" : false),
      },
      call: (variant) => decideCheckpoint(latest as never, variant as never),
      codes: ["invalid_input"],
    });
  });
});

describe("the other entry points", () => {
  it("intakeEvidence, fingerprintFiles and buildPlan answer typed refusals for arguments of the wrong type", async () => {
    const root = tempDir();
    const outside = tempDir();
    writeFileSync(path.join(outside, "secret.ts"), "secret\n");
    symlinkSync(path.join(outside, "secret.ts"), path.join(root, "link.ts"));
    writeFileSync(path.join(root, "a.ts"), "a\n");
    expect(await okValue(fingerprintFiles(root, ["a.ts", "link.ts", "gone.ts"]))).toMatchObject({ "link.ts": "not_a_file", "gone.ts": "missing" });
    const catalog = createCatalog()._unsafeUnwrap();
    await fc.assert(
      fc.asyncProperty(hostileValue, async (value) => {
        if (typeof value !== "object" || value === null || Array.isArray(value)) await expectRefused(() => intakeEvidence(value as never, root));
        else await settle(() => intakeEvidence(value as never, root));
        await settle(() => intakeEvidence({}, value as never));
        await settle(() => intakeEvidence({}, root, value as never));
        await settle(() => fingerprintFiles(value as never, ["a.ts"]));
        await settle(() => fingerprintFiles(root, value as never));
        await settle(() => fingerprintFiles(root, [value] as never));
        await settle(() => buildPlan(value as never, { workflow: "review_change", risk: "low", complexity: "small" }));
        await settle(() => buildPlan(catalog, value as never));
      }),
      RUNS,
    );
    await checkFields({
      valid: { workflow: "review_change", risk: "low", complexity: "small" },
      fields: { workflow: safeName, risk: never, complexity: never },
      call: (variant) => buildPlan(catalog, variant as never),
      codes: ["invalid_input"],
    });
  });

  it("appendJournal and readJournal refuse a run id, record or options of the wrong type, writing nothing", async () => {
    const store = createMemoryStore();
    const record = { callIndex: 0, hash: "h", call: { stage: "s", skill: "k", model: "m", attempt: 1, promptDigest: "d" }, result: { ok: true as const, text: "t", tokens: 1, costMicroUsd: null, durationMs: 1 } };
    await okValue(appendJournal(store.logs, "r1", record));
    await fc.assert(
      fc.asyncProperty(hostileValue, async (value) => {
        if (plainObject(value) !== false && value !== undefined) return; // {} is valid options: checked field by field below
        const before = await storeSnapshot(store);
        const idLike = typeof value === "string" && isSafeName(value);
        if (!idLike) {
          await expectRefused(() => appendJournal(store.logs, value as never, record));
          await expectRefused(() => readJournal(store.logs, value as never));
        }
        await expectRefused(() => appendJournal(store.logs, "r1", value as never));
        if (plainObject(value) === false && value !== undefined) await expectRefused(() => appendJournal(store.logs, "r1", record, value as never));
        await expectRefused(() => appendJournal(value as never, "r1", record));
        expect(await storeSnapshot(store)).toBe(before);
      }),
      RUNS,
    );
    await checkFields({
      valid: record,
      fields: { callIndex: (value) => Number.isSafeInteger(value) && (value as number) >= 0, hash: (value) => (typeof value === "string" && value.length > 0 ? "any" : false), call: never, result: never },
      call: (variant) => appendJournal(store.logs, "r1", variant as never, { expectedSeq: 999 }),
      store,
      codes: ["invalid_input"],
    });
  });
});

/** True for a revoked proxy (every operation on it throws). */
function isRevoked(value: unknown): boolean {
  try {
    Array.isArray(value);
    return false;
  } catch {
    return true;
  }
}

describe("every export given a value whose reading is hostile (a proxy, a throwing getter, a cycle, a huge array)", () => {
  it("answers invalid_input (selectModel and createWorkflowEngine throw it), never a TypeError, and writes nothing", async () => {
    const root = tempDir();
    writeFileSync(path.join(root, "a.ts"), "a\n");
    const { engine, store } = engineOver(root);
    const started = await okValue(engine.start(task()));
    const run = (await okValue(store.docs.get(["workflow-runs", started.runId])))?.value as never;
    const catalog = createCatalog()._unsafeUnwrap();
    const snapshot = (await okValue(engine.status(started.runId))) as unknown as { evidence?: unknown };
    const evidence = (run as { evidence: unknown }).evidence;
    const work = { reservations: [], journaledCalls: 0, fromCallIndex: 0 };
    const record = { callIndex: 0, hash: "h", call: { stage: "s", skill: "k", model: "m", attempt: 1, promptDigest: "d" }, result: { ok: true as const, text: "t", tokens: 1, costMicroUsd: null, durationMs: 1 } };
    expect(snapshot).toBeDefined();
    const before = await storeSnapshot(store);
    const refused: [string, (value: unknown) => unknown][] = [
      ["createCatalog(value)", (value) => createCatalog(value as never)],
      ["createCatalog({}, value)", (value) => createCatalog({}, value as never)],
      ["loadCatalog(root, value)", (value) => loadCatalog(root, value as never)],
      ["inspectCatalogDirectory(value)", (value) => inspectCatalogDirectory(value as never)],
      ["checkVersion(value, 1)", (value) => checkVersion(value as never, 1)],
      ["decideAbort(value, 1, 1)", (value) => decideAbort(value as never, 1, 1)],
      ["decideCheckpoint(value, input)", (value) => decideCheckpoint(value as never, { action: "abort", version: 1, at: 1 })],
      ["decideCheckpoint(run, value)", (value) => decideCheckpoint(run, value as never)],
      ["decideContinue(value, true)", (value) => decideContinue(value as never, true)],
      // A boolean's place: the revoked proxy is left out there (see hostileStructures).
      ["decideContinue(run, value)", (value) => (isRevoked(value) ? decideContinue(run, "yes" as never) : decideContinue(run, value as never))],
      ["decideInterrupted(value, input)", (value) => decideInterrupted(value as never, { stage: "s", skill: "k", work, at: 1 })],
      ["decideInterrupted(run, value)", (value) => decideInterrupted(run, value as never)],
      ["findInterruptedWork(value, [], [])", (value) => findInterruptedWork(value as never, [], [])],
      ["findInterruptedWork(run, value, [])", (value) => findInterruptedWork(run, value as never, [])],
      ["findInterruptedWork(run, [], value)", (value) => findInterruptedWork(run, [], value as never)],
      ["findInterruptedWork(run, [], [], value)", (value) => findInterruptedWork(run, [], [], value as never)],
      ["buildPlan(value, subject)", (value) => buildPlan(value as never, { workflow: "review_change", risk: "low", complexity: "small" })],
      ["buildPlan(catalog, value)", (value) => buildPlan(catalog, value as never)],
      ["classifyEvidenceChange(value, evidence)", (value) => classifyEvidenceChange(value as never, evidence as never)],
      ["classifyEvidenceChange(evidence, value)", (value) => classifyEvidenceChange(evidence as never, value as never)],
      ["intakeEvidence(value, root)", (value) => intakeEvidence(value as never, root)],
      ["fingerprintFiles(root, value)", (value) => fingerprintFiles(root, value as never)],
      ["appendJournal(value, id, record)", (value) => appendJournal(value as never, "r1", record)],
      ["appendJournal(logs, id, value)", (value) => appendJournal(store.logs, "r1", value as never)],
      ["appendJournal(logs, id, record, value)", (value) => appendJournal(store.logs, "r1", record, value as never)],
      ["readJournal(value, id)", (value) => readJournal(value as never, "r1")],
      ["engine.plan(value)", (value) => engine.plan(value as never)],
      ["engine.start(value)", (value) => engine.start(value as never)],
      ["engine.step(id, value)", (value) => engine.step(started.runId, value as never)],
      ["engine.checkpoint(id, value)", (value) => engine.checkpoint(started.runId, value as never)],
      ["engine.abort(id, value)", (value) => engine.abort(started.runId, value as never)],
    ];
    const valid: SelectModelInput = { models: MODELS.map((model) => ({ reviewed: false, ...model })), role: { id: "r", minimumStrength: 0, minimumContext: 1, capabilities: [], tier: "maximum" }, preference: "balanced", promptBytes: 10, outputBytes: 10 };
    expect(selectModel(valid).kind).toBe("selected");
    const thrown: [string, (value: unknown) => unknown][] = [
      ["selectModel(value)", (value) => selectModel(value as never)],
      ["selectModel({ models: value })", (value) => selectModel({ ...valid, models: value as never })],
      ["selectModel({ role: value })", (value) => selectModel({ ...valid, role: value as never })],
      ["selectModel({ models: [value] })", (value) => selectModel({ ...valid, models: [value] as never })],
      ["createWorkflowEngine(value)", (value) => createWorkflowEngine(value as never)],
    ];
    for (const [label, value] of hostileStructures()) {
      for (const [name, call] of refused) {
        // A huge value may be too_large before its type is read: typed either way.
        await expectRefused(() => call(value), ["invalid_input", "too_large"]).catch((failure: unknown) => {
          throw new Error(`${name} with ${label}: ${failure instanceof Error ? failure.message : String(failure)}`);
        });
      }
      for (const [name, call] of thrown) {
        try {
          expectThrowsKeel(() => call(value));
        } catch (failure) {
          throw new Error(`${name} with ${label}: ${failure instanceof Error ? failure.message : String(failure)}`);
        }
      }
      expect(inspectDefinitions(value as never).issues.length, label).toBeGreaterThan(0);
    }
    expect(await storeSnapshot(store)).toBe(before);
  });
});

describe("the plain-value decisions given hostile fields", () => {
  it("selectModel throws invalid_input (a KeelError) for a field of the wrong type, and decides for every field it takes", () => {
    const valid = { models: MODELS.map((model) => ({ reviewed: false, ...model })), role: { id: "r", minimumStrength: 0, minimumContext: 1, capabilities: [], tier: "maximum" }, preference: "balanced", promptBytes: 10, outputBytes: 10, capabilities: [], previousStrengths: [] };
    const stringArray = (value: unknown) => Array.isArray(value) && value.every((item) => typeof item === "string");
    const fields: Record<string, Accepts> = {
      models: (value) => Array.isArray(value) && value.length === 0,
      role: never,
      preference: never,
      // zod's number takes finite numbers only: Infinity and NaN are refused.
      promptBytes: (value) => Number.isFinite(value) && (value as number) >= 0,
      outputBytes: (value) => Number.isFinite(value) && (value as number) >= 0,
      capabilities: optional(stringArray),
      previousStrengths: optional((value) => Array.isArray(value) && value.every((item) => Number.isFinite(item))),
    };
    fc.assert(
      fc.property(withHostileField(valid, 1), (variant) => {
        const changed = changedField(valid, variant);
        // The input is read loosely (a host's richer input is fine): an added key is no refusal.
        if (changed === undefined || changed.added) return;
        if ((fields[changed.key] ?? never)(variant[changed.key]) === false) expectThrowsKeel(() => selectModel(variant as never));
        else expect(["selected", "refused"]).toContain(selectModel(variant as never).kind);
      }),
      RUNS,
    );
  });

  it("decideContinue, decideInterrupted and findInterruptedWork refuse a run or a flag of the wrong type, typed", async () => {
    const run = { runId: "r1", version: 3, createdAt: 1000, callIndex: 2, status: "handed_off", outcome: { reason: "interrupted", message: "", details: {} } };
    const work = { reservations: ["a"], journaledCalls: 0, fromCallIndex: 2 };
    expect(decideContinue(run as never, true)._unsafeUnwrap()).toMatchObject({ status: "ready" });
    await fc.assert(
      fc.asyncProperty(hostileValue, async (value) => {
        if (typeof value !== "boolean") await expectRefused(() => decideContinue(run as never, value as never));
        await expectRefused(() => decideContinue(value as never, true));
        await expectRefused(() => decideInterrupted(value as never, { stage: "s", skill: "k", work, at: 1 }));
        await expectRefused(() => findInterruptedWork(value as never, [], []));
      }),
      RUNS,
    );
    for (const interruptedReservations of [1, "a", [1], null]) {
      await expectRefused(() => decideInterrupted({ ...run, interruptedReservations } as never, { stage: "s", skill: "k", work, at: 1 }));
      await expectRefused(() => findInterruptedWork({ ...run, interruptedReservations } as never, [], []));
    }
  });
});
