import { readFile } from "node:fs/promises";
import path from "node:path";
import { KeelError, toKeelError, validate } from "@keel/core";
import { CapsuleSchema, HandoffRecordSchema, MissionCheckpointSchema } from "@keel/sessions/schemas";
import type { DocMeta, KeelStore, QuarantineEntry } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { err, ok, type Result } from "neverthrow";
import type { z } from "zod";
import { inspectLedger } from "./inspect-budget.js";
import { classifyKeys, type DocumentKey, type MissionKeys } from "./inspect-keys.js";
import { inspectLog } from "./inspect-logs.js";
import type { DocumentSection, InspectionWarning, LedgerInspection, LogInspection, MissionInspection, StoreInspection } from "./inspect-model.js";
import { walkDocumentKeys } from "./inspect-walk.js";
import { WorkSessionsDocSchema, workSessionsInspection } from "./inspect-work-sessions.js";

const LIST_PAGE = 1_000;

/**
 * The layout version the marker of the filesystem store at `dir` names, read once the store was
 * opened with `create: false` (which checked the marker and changed nothing).
 */
async function layoutVersion(dir: string): Promise<Result<number, KeelError>> {
  const marker = path.join(dir, "_keel", "store.json");
  try {
    const version = (JSON.parse(await readFile(marker, "utf8")) as { version?: unknown }).version;
    if (typeof version === "number") return ok(version);
    return err(new KeelError("corrupt", `${marker} is not a Keel store marker`, { details: { location: marker } }));
  } catch (error) {
    return err(toKeelError(error, "io_failed", `cannot read ${marker}`));
  }
}

/** Every live document of the store, through its listing, a page at a time. */
async function listDocuments(store: KeelStore): Promise<Result<DocumentKey[], KeelError>> {
  const documents: DocumentKey[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await store.docs.list([], after === undefined ? { limit: LIST_PAGE } : { after, limit: LIST_PAGE });
    if (page.isErr()) return err(page.error);
    documents.push(...page.value.items.map((item: DocMeta) => ({ key: item.key, version: item.version, bytes: item.bytes })));
    // Damaged documents are listed beside the good ones: read in place, they are reported as corrupt.
    documents.push(...(page.value.damaged ?? []).map((entry) => ({ key: entry.key, version: null, bytes: null })));
    if (page.value.next === undefined) return ok(documents);
    after = page.value.next;
  }
}

/**
 * Reads one document and checks it against its schema and against its key (`belongs` names a
 * mismatch, such as a capsule of another role). `null` when it is gone; never throws.
 */
async function readSection<T>(
  store: KeelStore,
  document: DocumentKey | null,
  schema: z.ZodType<T>,
  what: string,
  belongs: (value: T) => string | undefined,
): Promise<DocumentSection<T> | null> {
  if (!document) return null;
  const key = document.key.join("/");
  const read = await store.docs.get(document.key);
  if (read.isErr()) return { status: "corrupt", key, code: read.error.code, message: read.error.message };
  if (!read.value) return null;
  const parsed = validate(schema, read.value.value, what);
  if (parsed.isErr()) return { status: "corrupt", key, code: "corrupt", message: `${key} is not a valid ${what}: ${parsed.error.message}` };
  const mismatch = belongs(parsed.value);
  if (mismatch) return { status: "corrupt", key, code: "corrupt", message: `${key} ${mismatch}` };
  return { status: "ok", key, version: read.value.version, updatedAt: read.value.updatedAt, value: parsed.value };
}

function otherDocument(document: DocumentKey) {
  return { key: document.key.join("/"), version: document.version, bytes: document.bytes };
}

async function inspectMission(store: KeelStore, mission: MissionKeys): Promise<MissionInspection> {
  const roles = [];
  for (const role of mission.roles) {
    const ofRole = (value: { missionId: string; role: string }) =>
      value.missionId !== mission.id || value.role !== role.role ? `belongs to role "${value.role}" of mission "${value.missionId}"` : undefined;
    const capsule = await readSection(store, role.capsule, CapsuleSchema, "capsule", ofRole);
    const handoff = await readSection(store, role.handoff, HandoffRecordSchema, "handoff", ofRole);
    if (capsule || handoff) roles.push({ role: role.role, capsule, handoff });
  }
  const checkpoint = await readSection(store, mission.checkpoint, MissionCheckpointSchema, "mission checkpoint", (value) =>
    value.missionId !== mission.id ? `belongs to mission "${value.missionId}"` : undefined,
  );
  const workSessions = await readSection(store, mission.workSessions, WorkSessionsDocSchema, "work-sessions document", (value) =>
    value.missionId !== mission.id ? `belongs to mission "${value.missionId}"` : undefined,
  );
  return {
    id: mission.id,
    checkpoint,
    roles,
    workSessions: workSessions?.status === "ok" ? { ...workSessions, value: workSessionsInspection(workSessions.value) } : workSessions,
    otherDocuments: mission.other.map(otherDocument),
  };
}

/** The store's quarantine (damaged bytes it moved aside, with the reasons), from a read-only `check()`. */
async function readQuarantine(store: KeelStore, warnings: InspectionWarning[]): Promise<QuarantineEntry[]> {
  const report = await store.check();
  if (report.isErr()) {
    warnings.push({ type: "check-failed", location: "", message: report.error.message });
    return [];
  }
  return report.value.quarantined ?? [];
}

/**
 * Reads everything `keel inspect` shows from the filesystem store at `dir`: missions (checkpoint,
 * roles with capsule and handoff), budget ledgers, logs and other documents. Only reads (`get`,
 * `list`, `head`, `read`); damaged documents are reported in place, never thrown.
 *
 * Fails with `not_found` when `dir` is missing, not a directory or not a Keel store, and with the
 * store's error when it cannot be opened.
 */
export async function inspectStore(dir: string, opened?: { store: KeelStore; layout: number }): Promise<Result<StoreInspection, KeelError>> {
  // A store opened from a URL (SQLite, PostgreSQL) is inspected as it is; `dir` is its label.
  const root = opened ? dir : path.resolve(dir);
  const warnings: InspectionWarning[] = [];
  let store: KeelStore;
  try {
    // create: false: a missing directory or one without a store is not_found, and nothing is created or mended.
    store = opened?.store ?? createFsStore({ dir: root, create: false, onWarning: ({ type, location, message }) => warnings.push({ type, location, message }) });
  } catch (error) {
    return err(toKeelError(error, "io_failed", `cannot open the store at ${root}`));
  }
  try {
    const layout = opened ? ok(opened.layout) : await layoutVersion(root);
    if (layout.isErr()) return err(layout.error);
    let keysFrom: StoreInspection["keysFrom"] = "list";
    let documents = await listDocuments(store);
    if (documents.isErr()) {
      if (documents.error.code !== "corrupt") return err(documents.error);
      const damaged = documents.error.details["key"];
      warnings.push({
        type: "listing-failed",
        location: root,
        message: `the store's listing stopped at a damaged document${typeof damaged === "string" ? ` (${damaged})` : ""}; documents were found by walking the directory instead`,
      });
      keysFrom = "directory";
      documents = ok((await walkDocumentKeys(root)).map((key) => ({ key, version: null, bytes: null })));
    }
    const classified = classifyKeys(documents.value);
    const missions: MissionInspection[] = [];
    for (const mission of classified.missions) missions.push(await inspectMission(store, mission));
    const budgets: LedgerInspection[] = [];
    for (const ledger of classified.ledgers) {
      const inspected = await inspectLedger(store, ledger);
      if (inspected) budgets.push(inspected);
    }
    const logs: LogInspection[] = [];
    const logKeys = await store.logs.list([]);
    if (logKeys.isErr()) {
      warnings.push({ type: "log-listing-failed", location: root, message: logKeys.error.message });
    } else {
      for (const key of logKeys.value) {
        const inspected = await inspectLog(store, key);
        if (inspected) logs.push(inspected);
      }
    }
    const quarantined = await readQuarantine(store, warnings);
    return ok({ dir: root, layout: layout.value, keysFrom, missions, budgets, logs, otherDocuments: classified.other.map(otherDocument), quarantined, warnings });
  } catch (error) {
    return err(toKeelError(error, "io_failed", `cannot inspect the store at ${root}`));
  } finally {
    await store.close();
  }
}
