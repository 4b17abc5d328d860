import { KeelError } from "@keel/core";
import type { Doc } from "@keel/store";
import { err, ok, type Result } from "neverthrow";
import { z } from "zod";
import type { ClosedWorkSession, HygieneLimitName, HygieneLimits, HygieneStatus } from "../hygiene.js";
import { hygieneKey, keyText } from "../session-keys.js";

const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/** The persisted form of a role's work session. */
const HygieneRecordSchema = z.strictObject({
  schemaVersion: z.literal(1),
  missionId: z.string(),
  role: z.string(),
  state: z.enum(["open", "closed"]),
  sessionId: z.string(),
  openedAt: count,
  closedAt: count.nullable(),
  lastActivityAt: count,
  activeMs: count,
  toolCalls: count,
  checkpointCounter: count,
});

/** A role's persisted work session. */
export type HygieneRecord = z.infer<typeof HygieneRecordSchema>;

/** Parses the stored work session: `undefined` when none, `corrupt` when invalid or another role's. */
export function parseHygieneRecord(doc: Doc | undefined, missionId: string, role: string): Result<HygieneRecord | undefined, KeelError> {
  if (!doc) return ok(undefined);
  const parsed = HygieneRecordSchema.safeParse(doc.value);
  if (!parsed.success || parsed.data.missionId !== missionId || parsed.data.role !== role) {
    const location = keyText(hygieneKey(missionId, role));
    return err(new KeelError("corrupt", `the work-session state at ${location} is not valid`, { details: { location } }));
  }
  return ok(parsed.data);
}

/** A newly opened work session. */
export function openedRecord(missionId: string, role: string, sessionId: string, now: number): HygieneRecord {
  return {
    schemaVersion: 1,
    missionId,
    role,
    state: "open",
    sessionId,
    openedAt: now,
    closedAt: null,
    lastActivityAt: now,
    activeMs: 0,
    toolCalls: 0,
    checkpointCounter: 0,
  };
}

/**
 * Records activity at `now`: the gap since the last activity counts as active time unless it is
 * longer than `idleMs`; `toolCalls` count towards the tool calls and the checkpoint counter.
 */
export function withActivity(record: HygieneRecord, now: number, toolCalls: number, idleMs: number): HygieneRecord {
  const gap = now - record.lastActivityAt;
  const counted = gap > 0 && gap <= idleMs ? gap : 0;
  return {
    ...record,
    activeMs: record.activeMs + counted,
    lastActivityAt: Math.max(now, record.lastActivityAt),
    toolCalls: record.toolCalls + toolCalls,
    checkpointCounter: record.checkpointCounter + toolCalls,
  };
}

/** The status gates read: `no_session` unless the record is an open session. */
export function statusOf(record: HygieneRecord | undefined, limits: HygieneLimits): HygieneStatus {
  if (!record || record.state !== "open") {
    return { state: "no_session", toolCalls: 0, activeMinutes: 0, checkpointCounter: 0, sessionId: null, openedAt: null, lastActivityAt: null, limits, exceeded: [] };
  }
  const activeMinutes = record.activeMs / 60_000;
  const exceeded: HygieneLimitName[] = [];
  if (record.toolCalls >= limits.toolCalls) exceeded.push("toolCalls");
  if (activeMinutes >= limits.activeMinutes) exceeded.push("activeMinutes");
  return {
    state: "open",
    toolCalls: record.toolCalls,
    activeMinutes,
    checkpointCounter: record.checkpointCounter,
    sessionId: record.sessionId,
    openedAt: record.openedAt,
    lastActivityAt: record.lastActivityAt,
    limits,
    exceeded,
  };
}

/** The totals of a closed session. */
export function closedSummary(record: HygieneRecord): ClosedWorkSession {
  return {
    sessionId: record.sessionId,
    toolCalls: record.toolCalls,
    activeMinutes: record.activeMs / 60_000,
    checkpointCounter: record.checkpointCounter,
    openedAt: record.openedAt,
    closedAt: record.closedAt ?? record.lastActivityAt,
  };
}
